# tests/face.sh runs this.
import re, sys
md = open(sys.argv[1], encoding="utf-8").read()
name = sys.argv[2]
def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + ("\t" + str(detail) if not ok else ""))
# GitHub's and GitLab's patterns, on the rendered text (a backslash escape
# is gone by then): a mention, an issue reference, the autolinks.
patterns = {"an @mention": r"(?<![\w`])@[A-Za-z0-9]", "an issue reference": r"#\d",
            "a URL autolink": r"(?i)\b(https?|ftp)://", "a www. autolink": r"(?i)\bwww\.",
            "an e-mail autolink": r"[\w.+-]@[\w-]+\.[\w]"}
rendered = md.replace("\\", "")
for what, p in patterns.items():
    hits = re.findall(p, rendered)
    say(not hits, "Markdown: no %s from the op name" % what, hits)
visible = rendered.replace("\u2060", "")
say(md.count("octocat") >= 1 and name in visible, "Markdown: the op name reads the same (the joiners are invisible)")
