"""tests/code-spans.sh's oracle: every command, option or setting a user
may copy out of a report's prose is in a code span (issue 28, item 7).
A Markdown report's text outside code (code spans, fenced and indented
code blocks) must hold no option (`--capacity`, `-o`-style long options:
"--" then a letter), no setting (`NAME=`: a word followed by "=") and no
call (`name(`: a word followed by "("). Nothing is whitelisted.

argv: vramreport, the source directory, the folder to write reports in."""
import glob
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from vrtest import result  # noqa: E402

VR, SRC, OUT = sys.argv[1], sys.argv[2], sys.argv[3]

# An option: "--" and a letter, not inside a word ("a--b") nor a longer
# run of dashes (a table's "|---|"). A setting: a name and "=". A call:
# a dotted name and "(" with no space between.
PATTERNS = (
    ("option", re.compile(r"(?<![\w-])--[a-z]")),
    ("setting", re.compile(r"\b[A-Za-z_][\w.]*=")),
    ("call", re.compile(r"\b[A-Za-z_][\w.]*\(")),
)


def prose(md):
    """The text of a Markdown document outside code, block by block (its
    first line's number, its text): a code span may run over a line break
    within a paragraph, so each paragraph, list item, table row or
    heading is read whole; backslash escapes undone ("\\_" is "_")."""
    out, fence, block, start, n = [], None, [], 0, 0

    def flush():
        if block:
            out.append((start, strip_code_spans("\n".join(block))))
        block.clear()

    for line in md.split("\n"):
        n += 1
        m = re.match(r"^ {0,3}(`{3,}|~{3,})", line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            flush()
            fence = m.group(1)
            continue
        if not line.strip():
            flush()
            continue
        if re.match(r"^( {4}|\t)", line) and not re.match(r"^\s*([-*+]|\d+\.) ", line) and not block:
            continue  # an indented code block (not a nested list item, not a paragraph's line)
        if re.match(r"^\s*([-*+]|\d+\.) |^\s*[|#>]", line):
            flush()
        if not block:
            start = n
        block.append(line)
    flush()
    return out


def strip_code_spans(line):
    """The line without its code spans (CommonMark: a run of backticks to
    the next run of the same length)."""
    res, i = [], 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            res.append(line[i + 1])
            i += 2
            continue
        if line[i] == "`":
            j = i
            while j < len(line) and line[j] == "`":
                j += 1
            ticks = line[i:j]
            end = line.find(ticks, j)
            while end >= 0 and end + len(ticks) < len(line) and line[end + len(ticks)] == "`":
                end = line.find(ticks, end + len(ticks) + 1)
            if end < 0:
                res.append(ticks)
                i = j
                continue
            res.append(" ")
            i = end + len(ticks)
            continue
        res.append(line[i])
        i += 1
    return "".join(res)


def check(label, md):
    hits = []
    for n, text in prose(md):
        for kind, rx in PATTERNS:
            for m in rx.finditer(text):
                hits.append("%s:%d: %s %r in %r" % (label, n, kind, m.group(0), text[max(0, m.start() - 30):m.end() + 30]))
    result(not hits, "%s: every option, setting and call in its prose is a code span" % label,
           " | ".join(hits[:6]) + (" (%d in all)" % len(hits) if len(hits) > 6 else ""))
    return len(hits)


def report(name, inputs):
    out = os.path.join(OUT, name + ".md")
    p = subprocess.run([VR] + inputs + ["-o", out], capture_output=True, text=True)
    if p.returncode not in (0, 1, 2) or not os.path.exists(out):
        result(False, "%s: vramreport wrote %s" % (name, out), p.stderr[-400:])
        return None
    with open(out, encoding="utf-8") as f:
        return f.read()


# The checker itself: it must find what it looks for.
planted = "Run it with --capacity 80GiB, set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True or call torch.cuda.empty_cache().\n"
result(check.__name__ and sum(1 for _, t in prose(planted) for _, rx in PATTERNS if rx.search(t)) == 3,
       "the check finds an option, a setting and a call planted in prose")
result(not any(rx.search(t) for _, t in prose("Use `--capacity 80GiB` and `A=b` and `f()`.\n\n```\nx=f(--y)\n```\n")
               for _, rx in PATTERNS), "the check passes them in code spans and code blocks")

for g in sorted(glob.glob(os.path.join(SRC, "tests/golden/*.md"))):
    with open(g, encoding="utf-8") as f:
        check("golden/" + os.path.basename(g), f.read())

# tests/less.sh's inputs (tests/py/less/checks.py)
SNAP = os.path.join(SRC, "tests/data/realdata/snapshot")
LOGS = os.path.join(SRC, "tests/data/logs")
inputs = [("two", [os.path.join(SNAP, "cs336-bcrafton.pickle"), os.path.join(SNAP, "cs336-magma27-training.pickle")])]
inputs += [("oom%d" % i, [os.path.join(LOGS, "oom-%02d.log" % i)]) for i in range(1, 10)
           if os.path.exists(os.path.join(LOGS, "oom-%02d.log" % i))]
with open(os.path.join(OUT, "print.log"), "w") as f:
    f.write("step 1 torch.cuda.memory_allocated() = 1073741824\n")
inputs += [("print", [os.path.join(OUT, "print.log")]),
           ("gpustat", [os.path.join(SRC, "tests/data/gpustat/readme-2017.txt")])]
for name, ins in inputs:
    md = report(name, ins)
    if md is not None:
        check(name + ".md", md)
