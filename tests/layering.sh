#!/usr/bin/env bash
# tests/layering.sh: the house's floors (docs/architecture.md), from
# every `#include "..."` under src/: each file is on the floor of its
# folder (the table below),
#   (a) no file includes one on a higher floor,
#   (b) no include climbs with "../" (includes are rooted at src/),
#   (c) no circle of includes between modules (a module is a.h with the
#       a.c that implements it: a.h -> b.h -> a.h, or a.c including b.h
#       while b.c includes a.h),
#   (d) the stages (import/, analyze/, render/) never include one
#       another: they meet only in the SQLite schema,
# and every folder of src/ has its floor in the table (a new folder says
# where it stands) and its line in docs/architecture.md. VR_SRCDIR names the tree (a copy with a violation
# planted in it must fail).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

cat >"$TMP/layering.py" <<'EOF'
import os, re, sys

# Folder (under src/) -> floor, lowest first; the longest folder that
# starts a path wins; "" is src/ itself (main.c).
FLOORS = {
    "util": 0, "resources": 0, "tools": 0,
    "input": 1, "parse": 1, "estimate": 1,
    "scan": 2, "db": 2,
    "batch": 3,
    "import": 4, "analyze": 4,
    "render": 5, "render/diff": 5,
    "cli": 6, "": 6,
}
STAGES = ("import", "analyze", "render")

# Circles tolerated while they are being removed: none now. Each entry
# would be the edge (includer module -> included module) that closes one;
# it is left out of the floor and circle checks while the circle exists,
# and an entry whose circle is gone fails, so that it is removed here too.
ALLOWED = set()

src = sys.argv[1]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

def report(ok, desc, detail=""):
    print("PASS\t" + desc if ok else "FAIL\t" + desc + ("\t" + detail if detail else ""))

def floor_of(path):
    folder = os.path.dirname(path)
    best = None
    for f in FLOORS:
        if folder == f or (f and folder.startswith(f + "/")):
            if best is None or len(f) > len(best):
                best = f
    return (best, FLOORS[best]) if best is not None else (None, None)

files = []
for root, dirs, names in os.walk(src):
    dirs.sort()
    for n in sorted(names):
        if n.endswith((".c", ".h")):
            files.append(os.path.relpath(os.path.join(root, n), src))

includes = []  # (file, line number, included path)
for f in files:
    with open(os.path.join(src, f), encoding="utf-8", errors="replace") as fh:
        for i, line in enumerate(fh, 1):
            m = INCLUDE.match(line)
            if m:
                includes.append((f, i, m.group(1)))

unplaced = sorted({os.path.dirname(f) for f in files if floor_of(f)[0] is None})
report(not unplaced, "every folder of src/ has a floor",
       "not in FLOORS: " + ", ".join(d or "src/" for d in unplaced))

def module(path):
    return os.path.splitext(path)[0]

climbs, missing, up, cross, edges = [], [], [], [], {}
for f, n, inc in includes:
    where = "src/%s:%d includes \"%s\"" % (f, n, inc)
    if "../" in inc or inc.startswith("./"):
        climbs.append(where)
        continue
    if not os.path.exists(os.path.join(src, inc)):
        if inc != "config.h":  # made by configure, in the build tree
            missing.append(where)
        continue
    a, b = module(f), module(inc)
    if a == b:
        continue
    edges.setdefault((a, b), where)
    if (a, b) in ALLOWED:
        continue
    (fa, fl), (ia, il) = floor_of(f), floor_of(inc)
    if fl is not None and il is not None and il > fl:
        up.append("%s: floor %d (%s/) includes floor %d (%s/)" % (where, fl, fa or "src", il, ia))
    sa, sb = f.split("/")[0], inc.split("/")[0]
    if sa in STAGES and sb in STAGES and sa != sb:
        cross.append(where)

report(not climbs, "no include climbs with ../", "; ".join(climbs))
report(not missing, "every include names a file under src/", "; ".join(missing))
report(not up, "no include of a higher floor", "; ".join(up))
report(not cross, "the stages (import, analyze, render) include none of one another",
       "; ".join(cross))

graph = {}
for (a, b) in edges:
    graph.setdefault(a, set()).add(b)

def reaches(graph, a, b):
    seen, todo = set(), [a]
    while todo:
        x = todo.pop()
        if x == b:
            return True
        if x not in seen:
            seen.add(x)
            todo.extend(graph.get(x, ()))
    return False

stale = ["%s -> %s" % e for e in sorted(ALLOWED)
         if e not in edges or not reaches(graph, e[1], e[0])]
report(not stale, "every allowed circle still exists (remove those gone from ALLOWED)",
       "; ".join(stale))

# Circles without the allowed edges: a depth-first search, each circle
# said once by its modules and the include that makes each step.
checked = {a: set(b for b in bs if (a, b) not in ALLOWED) for a, bs in graph.items()}
circles, state, stack = [], {}, []

def dfs(a):
    state[a] = 1
    stack.append(a)
    for b in sorted(checked.get(a, ())):
        if state.get(b) == 1:
            ring = stack[stack.index(b):] + [b]
            circles.append(" -> ".join(ring) + " (" + "; ".join(
                edges[(ring[i], ring[i + 1])] for i in range(len(ring) - 1)) + ")")
        elif b not in state:
            dfs(b)
    stack.pop()
    state[a] = 2

sys.setrecursionlimit(10000)
for a in sorted(checked):
    if a not in state:
        dfs(a)
report(not circles, "no circle of includes between modules", "; ".join(circles))
# docs/architecture.md draws the house: each folder of src/ in its table.
arch = os.path.join(src, "..", "docs", "architecture.md")
text = open(arch, encoding="utf-8").read() if os.path.exists(arch) else ""
folders = sorted({os.path.dirname(f) for f in files} - {""})
absent = [d for d in folders if "`src/%s/`" % d not in text]
report(bool(text) and not absent, "docs/architecture.md names every folder of src/",
       "not there: " + ", ".join(absent) if text else arch + " is missing")
print("%d files, %d includes, %d module edges, %d allowed" % (
    len(files), len(includes), len(edges), len(ALLOWED)))
EOF

if [ ! -d "$VR_SRCDIR/src" ]; then
    fail "the source tree is at VR_SRCDIR" "$VR_SRCDIR/src is not a folder"
    finish
fi
"$PYTHON" "$TMP/layering.py" "$VR_SRCDIR/src" >"$TMP/layering.out" 2>&1 || true
tap_lines "$TMP/layering.out"
finish
