# tests/bad-input.sh runs this.
import json, sys
path, kinds = sys.argv[1], sys.argv[2:]
raw = open(path, "rb").read()
def say(ok, what, detail=""):
    print(("PASS\t" if ok else "FAIL\t") + path + ": " + what + ("" if ok else "\t" + detail))
try:
    text = raw.decode("utf-8")
    say(True, "is valid UTF-8")
except UnicodeDecodeError as e:
    text = raw.decode("utf-8", "replace")
    say(False, "is valid UTF-8", str(e))
for k in kinds:
    if k == "small":
        say(len(raw) < (1 << 20), "is under 1 MiB", "%d bytes" % len(raw))
    elif k == "cut":
        ok = "HEAD-\u00e9\u00e9" in text and "\u00e9\u00e9-TAIL" in text and " bytes cut)" in text
        say(ok, "shows the name's start and end around the cut marker",
            "head %s, tail %s, marker %s" % ("HEAD-" in text, "-TAIL" in text, "bytes cut" in text))
    elif k == "nocontrols":
        bad = [n for n, b in (("ESC", b"\x1b"), ("BS", b"\x08"), ("CSI", b"\xc2\x9b"),
                              ("RLO", b"\xe2\x80\xae"), ("LRI", b"\xe2\x81\xa6"),
                              ("ALM", b"\xd8\x9c")) if b in raw]
        say(not bad, "holds no raw control or bidi bytes", "found " + ", ".join(bad))
    elif k == "visible":
        want = ["\\u001b[2J", "\\u009b", "\\u0008", "\\u202e", "\\u2066", "\\u061c"]
        shown = text.replace("\\\\", "\\").replace("\\[", "[")
        missing = [w for w in want if w not in shown]
        say(not missing, "shows the controls as visible escapes", "missing " + " ".join(missing))
    elif k == "json-controls":
        d = json.loads(text)
        names = sorted(o["name"] for o in d["devices"][0]["operators"])
        ok = "esc\u001b[2Jname" in names and "rlo\u202ename" in names and "csi\u009bname" in names
        say(ok, "JSON keeps the controls, escaped", repr(names))
    elif k == "json-path":
        d = json.loads(text)
        p = d["sources"][0]["path"]
        say(p == "bad\\xFFname.json", "JSON path is valid, the byte shown as \\xFF", repr(p))
    elif k == "html-path":
        say("bad\\xFFname.json" in text, "HTML shows the path with \\xFF", "")
    elif k == "md-path":
        say("bad\\\\xFFname.json" in text, "Markdown shows the path with \\xFF", "")
    else:
        say(False, "known check " + k)
