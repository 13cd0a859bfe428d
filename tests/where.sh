#!/usr/bin/env bash
# tests/where.sh: where the memory went, by module and by line.
# A Kineto trace written here as PyTorch's python tracer writes one
# (with_stack=True: python_function events "file(line): function",
# "nn.Module: Class_N", "<built-in ...>", with Python id / parent id), with
# memory events under known frames and modules, on the main thread and on
# autograd's (no frames there). The oracle places each allocation by
# walking the Python parent ids up from the innermost event (the analysis
# nests by time: another method), and groups what is live at the peak.
# A trace without frames is grouped by operator with the profiler flags
# said; a real allocator snapshot's allocations get their stacks' frames.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

cd "$TMP"
need python3 || true
need sqlite3 || true

cat >gen.py <<'PYEOF'
"""Writes a with_stack=True trace: python_function events nested as the
python tracer nests them, cpu_ops inside, memory events under them."""
import json, sys

BASE = 1719853884000000000
PID, MAIN, AUTOGRAD = 4242, 4242, 4250
MIB = 1 << 20

# (name, start_us, end_us, children); a frame's children nest in time.
def f(name, a, b, *kids):
    return (name, a, b, list(kids))

def module_call(cls, a, b, forward, *kids):
    """How a module call appears: Module.__call__'s frame is the module's
    event, then _call_impl, then its forward (torch's own or the user's)."""
    return f("nn.Module: " + cls, a, b,
             f("torch/nn/modules/module.py(1541): _call_impl", a + 0.5, b - 0.5,
               f(forward, a + 1, b - 1, *kids)))

def builtin(name, a, b):
    return f(name, a, b)

TREE = f("train.py(1): <module>", 0, 1000,
         f("train.py(40): train_step", 10, 900,
           module_call("Net_0", 20, 500, "model.py(30): forward",
             module_call("Sequential_0", 30, 200, "torch/nn/modules/container.py(215): forward",
               module_call("Linear_0", 40, 100, "torch/nn/modules/linear.py(116): forward",
                           builtin("<built-in function linear>", 44, 96)),
               module_call("My*Block_0", 105, 135, "blocks.py(12): forward",
                           builtin("<built-in method relu of type object at 0x7f>", 110, 130)),
               module_call("Linear_1", 140, 190, "torch/nn/modules/linear.py(116): forward",
                           builtin("<built-in function linear>", 144, 186))),
             f("model.py(45): helper", 210, 300,
               builtin("<built-in method matmul of type object at 0x7f>", 215, 295)),
             f("/opt/conda/lib/python3.11/site-packages/einops/einops.py(400): rearrange", 310, 320),
             f("model.py(45): helper", 330, 360,
               builtin("<built-in method matmul of type object at 0x7f>", 332, 358))),
           f("train.py(60): make_buffer", 600, 650,
             f("contextlib.py(79): inner", 605, 645)),
           f("my (copy).py(7): run", 800, 850,
             f("C:\\venv\\Lib\\site-packages\\lib\\x.py(3): f", 810, 840))))

# (ts_us, tid, bytes, addr); frees: (ts_us, tid, addr).
ALLOCS = [(50, MAIN, 16 * MIB, 0x1000), (120, MAIN, 16 * MIB, 0x2000),
          (150, MAIN, 4 * MIB, 0x3000), (160, MAIN, 4 * MIB, 0x3800),
          (220, MAIN, 8 * MIB, 0x4000), (315, MAIN, 1 * MIB, 0x5000),
          (340, MAIN, 8 * MIB, 0x5800), (620, MAIN, 32 * MIB, 0x6000),
          (700, AUTOGRAD, 2 * MIB, 0x7000), (820, MAIN, 3 * MIB, 0x7800),
          (950, MAIN, 64 * MIB, 0x8000)]
FREES = [(300, MAIN, 0x3800), (980, MAIN, 0x8000)]

CALL_FROM = len(sys.argv) > 2 and sys.argv[2] == "callfrom"

def call_site(parent, index):
    """Recent PyTorch's "CallFrom": the caller's file and its line at the
    call (here: a few lines into the caller, one per call it makes)."""
    if parent.startswith("nn.Module: "):
        return "torch/nn/modules/module.py:1532"
    file, rest = parent.rsplit("(", 1)
    return "%s:%d" % (file, int(rest.split(")")[0]) + 2 + index)

def events():
    out, ids = [], [0]
    def walk(node, parent, index=0, parent_name=None):
        name, a, b, kids = node
        ids[0] += 1
        me = ids[0]
        args = {"Python id": me, "Python thread": 0}
        if parent:
            args["Python parent id"] = parent
            if CALL_FROM:
                args["CallFrom"] = call_site(parent_name, index)
        if name.startswith("nn.Module: "):
            args["Python module id"] = int(name.rsplit("_", 1)[1])
        out.append({"ph": "X", "cat": "python_function", "name": name, "pid": PID,
                    "tid": MAIN, "ts": "%.3f" % a, "dur": "%.3f" % (b - a), "args": args})
        for i, k in enumerate(kids):
            walk(k, me, i, name)
    walk(TREE, None)
    # cpu_ops inside the built-ins (the analysis's operators)
    for a, b, name in [(45, 95, "aten::linear"), (111, 129, "aten::relu"),
                       (145, 185, "aten::linear"), (216, 294, "aten::matmul"),
                       (333, 357, "aten::matmul")]:
        out.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": PID, "tid": MAIN,
                    "ts": "%.3f" % a, "dur": "%.3f" % (b - a), "args": {"External id": 1}})
    mem = [(t, tid, b, addr) for t, tid, b, addr in ALLOCS] + \
          [(t, tid, None, addr) for t, tid, addr in FREES]
    sizes = {addr: b for _, _, b, addr in ALLOCS}
    total = 0
    for t, tid, b, addr in sorted(mem, key=lambda m: m[0]):
        delta = b if b is not None else -sizes[addr]
        total += delta
        out.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                    "pid": PID, "tid": tid, "ts": "%.3f" % t,
                    "args": {"Total Reserved": 256 * MIB, "Total Allocated": total,
                             "Bytes": delta, "Addr": addr, "Device Id": 0, "Device Type": 1}})
    return out

doc = {"schemaVersion": 1, "with_stack": 1, "with_modules": 1, "profile_memory": 1,
       "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3",
                             "totalGlobalMem": 85520809984}],
       "traceEvents": events(), "baseTimeNanoseconds": BASE}
text = json.dumps(doc, indent=1)
# ts/dur as Kineto writes them: bare numbers with three decimals
text = text.replace('"ts": "', '"ts": ').replace('"dur": "', '"dur": ')
import re
text = re.sub(r'("(?:ts|dur)": [0-9.]+)"', r"\1", text)
open(sys.argv[1], "w").write(text)
PYEOF

cat >oracle.py <<'PYEOF'
"""Each allocation's place, found by the Python parent ids (not by time
nesting), and what is live at the peak grouped as the report groups it."""
import gzip, json, sys

def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as fh:
        return json.load(fh)["traceEvents"]

def is_user(name):
    if name.startswith("nn.Module: ") or name.startswith("<") or "): " not in name:
        return None
    file, rest = name.rsplit("(", 1)
    line, function = rest.split("): ", 1)
    if file.startswith("torch/") or "site-packages" in file or file == "contextlib.py":
        return None
    return "%s:%s in %s" % (file, line, function)

def places(events):
    py = [e for e in events if e.get("cat") == "python_function"]
    by_id = {e["args"]["Python id"]: e for e in py}
    out = {}
    for m in events:
        if m.get("name") != "[memory]" or m["args"]["Bytes"] <= 0:
            continue
        t, tid = float(m["ts"]), m["tid"]
        inside = [e for e in py if e["tid"] == tid and
                  float(e["ts"]) <= t <= float(e["ts"]) + float(e["dur"])]
        frame, modules = None, []
        if inside:
            cur = max(inside, key=lambda e: (float(e["ts"]), e["args"]["Python id"]))
            child = None
            while cur is not None:
                if frame is None:
                    frame = is_user(cur["name"])
                    site = child["args"].get("CallFrom") if frame and child else None
                    if site and site.rsplit(":", 1)[0] == frame.split(":")[0]:
                        frame = "%s:%s in %s" % (frame.split(":")[0], site.rsplit(":", 1)[1],
                                                 frame.split(" in ", 1)[1])
                child = cur
                if cur["name"].startswith("nn.Module: "):
                    modules.append(cur["name"][len("nn.Module: "):])
                cur = by_id.get(cur["args"].get("Python parent id"))
        out[m["args"]["Addr"]] = (frame, ".".join(reversed(modules)) or None)
    return out

def innermost_op(events, m):
    t = float(m["ts"])
    ops = [e for e in events if e.get("cat") == "cpu_op" and e["tid"] == m["tid"]
           and float(e["ts"]) <= t <= float(e["ts"]) + float(e["dur"])]
    return max(ops, key=lambda e: float(e["ts"]))["name"] if ops else None

def live_groups(events, by_line):
    mem = sorted([e for e in events if e.get("name") == "[memory]"
                  and e["args"].get("Device Type") == 1 and e["args"].get("Device Id") == 0],
                 key=lambda e: float(e["ts"]))
    peak = max(range(len(mem)), key=lambda i: (mem[i]["args"]["Total Allocated"], -i))
    live = {}
    for e in mem[:peak + 1]:
        a = e["args"]
        if a["Bytes"] > 0:
            live[a["Addr"]] = e
        else:
            live.pop(a["Addr"], None)
    where = places(events) if by_line else {}
    groups = {}
    for addr, e in live.items():
        if by_line:
            frame, module = where[addr]
            key = (module, frame)
        else:
            key = (innermost_op(events, e),)
        g = groups.setdefault(key, [0, 0])
        g[0] += e["args"]["Bytes"]
        g[1] += 1
    return groups

if __name__ == "__main__":
    events = load(sys.argv[2])
    if sys.argv[1] == "places":
        print(json.dumps({str(k): v for k, v in places(events).items()}, sort_keys=True))
    else:
        g = live_groups(events, sys.argv[1] == "line")
        print(json.dumps(sorted([[list(k), v] for k, v in g.items()], key=str)))
PYEOF

"$PYTHON" gen.py stack.pt.trace.json
vr_run imp import stack.pt.trace.json --db stack.db -q
[ "$rc" = 0 ] && pass "a with_stack trace is imported" || fail "a with_stack trace is imported" "exit $rc: $(cat imp.err)"
vr_run rep report --db stack.db --format json -o stack.json
[ "$rc" = 0 ] && pass "its JSON report" || fail "its JSON report" "exit $rc: $(cat rep.err)"
vr_run md report --db stack.db -o stack.md
[ "$rc" = 0 ] && pass "its Markdown report" || fail "its Markdown report" "exit $rc: $(cat md.err)"

#-- each allocation's frame and module in the database -----------------------------------

"$PYTHON" oracle.py places stack.pt.trace.json >places.want
sqlite3 -separator '	' stack.db "
SELECT a.addr, coalesce(fn.text || ':' || f.line || ' in ' || nn.text, '-'),
       coalesce(a.module, '-')
  FROM allocation a LEFT JOIN frame f ON f.id = a.frame_id
  LEFT JOIN name fn ON fn.id = f.filename_id LEFT JOIN name nn ON nn.id = f.function_id
 ORDER BY a.addr" >places.got
"$PYTHON" - places.want places.got >places.tap <<'PYEOF'
import json, sys
want = json.load(open(sys.argv[1]))
got = {}
for line in open(sys.argv[2]):
    addr, frame, module = line.rstrip("\n").split("\t")
    got[addr] = [None if frame == "-" else frame, None if module == "-" else module]
print(("PASS" if sorted(got) == sorted(want) else "FAIL") + "\tevery allocation is in the database\t%s %s" % (sorted(got), sorted(want)))
for addr in sorted(want, key=int):
    w, g = want[addr], got.get(addr)
    ok = g == w
    print(("PASS" if ok else "FAIL") + "\tallocation at %#x: %s, %s" % (int(addr), w[0], w[1]) +
          ("" if ok else "\tgot %s" % (g,)))
PYEOF
tap_lines places.tap

# The oracle's places include the cases that matter; say so, so a
# generator change cannot empty the test.
n=$(grep -c -e 'Net_0.Sequential_0.Linear_0' -e 'train.py:60 in make_buffer' -e 'My\*Block_0' \
         -e 'None, None' -e 'my (copy).py:7 in run' places.tap || true)
[ "$n" -ge 5 ] && pass "the cases are covered: nested modules, outside modules, a markup name, no frame, a file with parentheses under an installed package's" \
    || fail "the cases are covered" "$(cat places.tap)"

# Recent PyTorch says where each call was made ("CallFrom"): the line of
# the call in the user's frame, not the line its function begins on.
"$PYTHON" gen.py callfrom.pt.trace.json callfrom
vr_run cf callfrom.pt.trace.json --db callfrom.db --format json -o callfrom.json
[ "$rc" = 0 ] && pass "a trace with CallFrom" || fail "a trace with CallFrom" "exit $rc: $(cat cf.err)"
"$PYTHON" oracle.py places callfrom.pt.trace.json >cf.want
sqlite3 -separator '	' callfrom.db "
SELECT a.addr, coalesce(fn.text || ':' || f.line || ' in ' || nn.text, '-'),
       coalesce(a.module, '-')
  FROM allocation a LEFT JOIN frame f ON f.id = a.frame_id
  LEFT JOIN name fn ON fn.id = f.filename_id LEFT JOIN name nn ON nn.id = f.function_id
 ORDER BY a.addr" >cf.got
"$PYTHON" - cf.want cf.got places.want >cf.tap <<'PYEOF'
import json, sys
want, before = json.load(open(sys.argv[1])), json.load(open(sys.argv[3]))
got = {}
for line in open(sys.argv[2]):
    addr, frame, module = line.rstrip("\n").split("\t")
    got[addr] = [None if frame == "-" else frame, None if module == "-" else module]
ok = got == want
print(("PASS" if ok else "FAIL") + "\teach allocation at the line of its call\tgot %s want %s" % (got, want))
moved = sum(1 for a in want if want[a][0] != before[a][0])
print(("PASS" if moved >= 5 else "FAIL") + "\tthe calls' lines differ from where their functions begin (%d)" % moved)
PYEOF
tap_lines cf.tap

# Frames are interned: one row per (file, line, function).
n=$(sqlite3 stack.db "SELECT count(*) - count(DISTINCT filename_id || ':' || line || ':' || function_id) FROM frame")
[ "$n" = 0 ] && pass "frame rows are unique" || fail "frame rows are unique" "$n duplicates"

#-- the report's groups ------------------------------------------------------------------

"$PYTHON" oracle.py line stack.pt.trace.json >groups.want
"$PYTHON" - groups.want stack.json >groups.tap <<'PYEOF'
import json, sys
want = json.load(open(sys.argv[1]))
dev = json.load(open(sys.argv[2]))["devices"][0]
def check(ok, desc, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + desc + ("" if ok else "\t" + str(detail)))
check(dev["live_at_peak_by"] == "module_and_line", "grouped by module and line", dev["live_at_peak_by"])
check(dev["locations_recorded"] is True and dev["live_at_peak_placed"] is True, "frames recorded and placed")
cats = dev["live_at_peak_groups"]
check([c["category"] for c in cats] == ["unknown"], "one category, unknown (not categorized)", cats)
got = {}
for c in cats:
    for m in c["modules"]:
        for l in m["lines"]:
            got[(m["module"], l["where"])] = [l["bytes"], l["count"]]
        check(m["lines_more"] is None, "no line summed away", m)
        check(m["bytes"] == sum(l["bytes"] for l in m["lines"]), "module %s: its lines sum to it" % m["module"])
    check(c["modules_more"] is None, "no module summed away (at most 5)", c)
w = {tuple(k): v for k, v in want}
check(got == w, "the groups and their totals are the oracle's", "got %s want %s" % (got, w))
tb = sum(v[0] for v in w.values())
check(dev["live_at_peak_grouped_bytes"] == tb, "the grouped total is what was live", (dev["live_at_peak_grouped_bytes"], tb))
check(dev["live_at_peak_grouped_count"] == sum(v[1] for v in w.values()), "the grouped count")
check(cats[0]["bytes"] == tb, "the category's total")
order = [m["bytes"] for m in cats[0]["modules"]]
check(order == sorted(order, reverse=True), "modules largest first", order)
top = dev["top_allocations"][0]
check(top["where"] == "train.py:1 in <module>" and top["module"] is None,
      "the top allocation's where: the script's frame, no module", top)
wheres = {(t["where"], t["module"]) for t in dev["top_allocations"]}
check(("model.py:30 in forward", "Net_0.Sequential_0.Linear_0") in wheres,
      "a top allocation inside nested modules", wheres)
check((None, None) in wheres, "a top allocation without a frame (autograd's thread)", wheres)
PYEOF
tap_lines groups.tap

grep -q '^### What was live at the peak, by category, module and line' stack.md \
    && pass "the Markdown section" || fail "the Markdown section" "$(grep '^###' stack.md)"
grep -q -F '  - Net\_0.Sequential\_0.My\*Block\_0: 16.0 MiB (allocations: 1)' stack.md \
    && pass "a module path, escaped, with its size and count" \
    || fail "a module path, escaped" "$(grep -F 'Block' stack.md)"
grep -q -F '    - blocks.py:12 in forward: 16.0 MiB (allocations: 1)' stack.md \
    && pass "its line" || fail "its line" "$(sed -n '/What was live/,$p' stack.md)"
grep -q -F '| 64.0 MiB | (no enclosing op) | train.py:1 in \<module\> |' stack.md \
    && pass "the Where column" || fail "the Where column" "$(grep -F '64.0 MiB' stack.md)"
grep -q 'records no Python frames' stack.md \
    && fail "no flags sentence when frames are recorded" || pass "no flags sentence when frames are recorded"

#-- more than five modules: the rest summed ----------------------------------------------

"$PYTHON" - stack.pt.trace.json many.pt.trace.json <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
PID = 4242
mem = [e for e in ev if e.get("name") == "[memory]"]
total = max(e["args"]["Total Allocated"] for e in mem)
t = 2000.0
for i in range(8):
    ev.append({"ph": "X", "cat": "python_function", "name": "nn.Module: Extra_%d" % i,
               "pid": PID, "tid": PID, "ts": t, "dur": 10.0,
               "args": {"Python id": 1000 + i, "Python module id": i}})
    total += (i + 1) << 20
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
               "pid": PID, "tid": PID, "ts": t + 5,
               "args": {"Total Reserved": 1 << 30, "Total Allocated": total, "Bytes": (i + 1) << 20,
                        "Addr": 0x100000 + i * 0x1000, "Device Id": 0, "Device Type": 1}})
    t += 20
json.dump(d, open(sys.argv[2], "w"))
PYEOF
vr_run many many.pt.trace.json --format json -o many.json
"$PYTHON" oracle.py line many.pt.trace.json >many.want
"$PYTHON" - many.want many.json >many.tap <<'PYEOF'
import json, sys
want = {tuple(k): v for k, v in json.load(open(sys.argv[1]))}
dev = json.load(open(sys.argv[2]))["devices"][0]
cat = dev["live_at_peak_groups"][0]
mods = {}
for k, v in want.items():
    m = mods.setdefault(k[0], [0, 0])
    m[0] += v[0]; m[1] += v[1]
ranked = sorted(mods.items(), key=lambda kv: -kv[1][0])
shown = [[m["module"], m["bytes"], m["count"]] for m in cat["modules"]]
print(("PASS" if len(shown) == 5 else "FAIL") + "\tfive modules shown\t%s" % shown)
print(("PASS" if [s[1] for s in shown] == [v[0] for _, v in ranked[:5]] else "FAIL") +
      "\tthe five largest\t%s %s" % (shown, ranked[:5]))
rest = ranked[5:]
more = cat["modules_more"]
ok = more == {"groups": len(rest), "bytes": sum(v[0] for _, v in rest), "count": sum(v[1] for _, v in rest)}
print(("PASS" if ok else "FAIL") + "\tthe rest summed as modules_more\t%s" % more)
print(("PASS" if cat["bytes"] == sum(v[0] for v in mods.values()) else "FAIL") + "\tthe category's total covers the rest")
PYEOF
tap_lines many.tap
vr_run manymd many.pt.trace.json -o many.md
grep -q -E '^  - … [0-9]+ more modules: ' many.md && pass "the Markdown says how many more" \
    || fail "the Markdown says how many more" "$(sed -n '/What was live/,$p' many.md)"

#-- modules nested deeper than the path keeps ---------------------------------------------

"$PYTHON" - deep.pt.trace.json <<'PYEOF'
import json, sys
ev, t = [], 0.0
for i in range(150):
    ev.append({"ph": "X", "cat": "python_function", "name": "nn.Module: DeepBlock_%d" % i,
               "pid": 1, "tid": 1, "ts": t + i, "dur": 1000.0 - 2 * i, "args": {"Python id": i + 1}})
ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 500.0,
           "args": {"Device Type": 1, "Device Id": 0, "Addr": 4096, "Bytes": 512,
                    "Total Allocated": 512, "Total Reserved": 2 << 20}})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PYEOF
vr_run deep deep.pt.trace.json --db deep.db --format json -o deep.json
m=$(sqlite3 deep.db "SELECT module FROM allocation")
case $m in
DeepBlock_0.DeepBlock_1.DeepBlock_2.*.…) pass "a path nested past the cap ends with .…" ;;
*) fail "a path nested past the cap ends with .…" "$m" ;;
esac
n=$(printf '%s' "$m" | wc -c)
[ "$n" -le 1028 ] && [ "$n" -ge 1000 ] && pass "and is kept to 1 KiB ($n bytes)" || fail "and is kept to 1 KiB" "$n bytes"

#-- a trace without Python frames: by operator, and the flags ----------------------------

cp "$VR_SRCDIR/tests/cli/data/tiny.pt.trace.json" .
vr_run tiny tiny.pt.trace.json --format json -o tiny.json
vr_run tinymd tiny.pt.trace.json -o tiny.md
"$PYTHON" oracle.py operator tiny.pt.trace.json >tiny.want
"$PYTHON" - tiny.want tiny.json >tiny.tap <<'PYEOF'
import json, sys
want = {k[0]: v for k, v in json.load(open(sys.argv[1]))}
dev = json.load(open(sys.argv[2]))["devices"][0]
def check(ok, desc, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + desc + ("" if ok else "\t" + str(detail)))
check(dev["live_at_peak_by"] == "operator", "no frames: grouped by operator", dev["live_at_peak_by"])
check(dev["locations_recorded"] is False, "no frames recorded")
got = {o["operator"]: [o["bytes"], o["count"]] for c in dev["live_at_peak_groups"] for o in c["operators"]}
check(got == want, "the operator groups are the oracle's", "got %s want %s" % (got, want))
check(all(t["where"] is None and t["module"] is None for t in dev["top_allocations"]),
      "top allocations have no where")
PYEOF
tap_lines tiny.tap
grep -q -F 'profile_memory=True,' tiny.md && grep -q -F 'with_stack=True, with_modules=True' tiny.md \
    && pass "the report names the profiler flags that would record more" \
    || fail "the report names the profiler flags" "$(sed -n '/What was live/,/^- /p' tiny.md)"
grep -q '^### What was live at the peak, by category and operator' tiny.md \
    && pass "the operator section" || fail "the operator section" "$(grep '^###' tiny.md)"

#-- an allocator snapshot: its stacks' first frames outside torch ------------------------

SNAP=$VR_SRCDIR/tests/data/realdata/snapshot/cs336-silmont-forward-bf16.pickle
"$PYTHON" - "$SNAP" >snap.want <<'PYEOF'
import collections, json, sys
from vrtest import load_pickle
d = load_pickle(sys.argv[1])
count = collections.Counter()
for entries in d["device_traces"]:
    for e in entries:
        if e["action"] != "alloc":
            continue
        user = None
        for fr in e.get("frames") or []:
            fn = fr["filename"].replace("\\", "/")
            if fn.endswith(".py") and "/torch/" not in fn and not fn.startswith("torch/"):
                user = "%s:%d in %s" % (fr["filename"], fr["line"], fr["name"])
                break
        count[user or "-"] += 1
print(json.dumps(count, sort_keys=True))
PYEOF
vr_run snap import "$SNAP" --db snap.db -q
sqlite3 -separator '	' snap.db "
SELECT coalesce(fn.text || ':' || f.line || ' in ' || nn.text, '-'), count(*)
  FROM allocation a LEFT JOIN frame f ON f.id = a.frame_id
  LEFT JOIN name fn ON fn.id = f.filename_id LEFT JOIN name nn ON nn.id = f.function_id
 GROUP BY 1" >snap.got
"$PYTHON" - snap.want snap.got <<'PYEOF' >snap.tap
import json, sys
want = json.load(open(sys.argv[1]))
got = {}
for line in open(sys.argv[2]):
    k, n = line.rstrip("\n").rsplit("\t", 1)
    got[k] = int(n)
known = sum(v for k, v in want.items() if k != "-")
print(("PASS" if known > 100 else "FAIL") + "\tthe snapshot has allocations with user frames\t%d" % known)
print(("PASS" if got == want else "FAIL") + "\teach snapshot allocation has its stack's first frame outside torch\tgot %s want %s" % (
    sorted(got.items())[:5], sorted(want.items())[:5]))
PYEOF
tap_lines snap.tap
vr_run snaprep report --db snap.db --format json -o snap.json
got=$(json_get snap.json 'd["devices"][0]["live_at_peak_by"] + " " + str(d["devices"][0]["live_at_peak_grouped_bytes"] == sum(c["bytes"] for c in d["devices"][0]["live_at_peak_groups"]))')
[ "$got" = "module_and_line True" ] && pass "the snapshot's peak is grouped by line" || fail "the snapshot's peak is grouped by line" "$got"

#-- analysing again changes nothing -------------------------------------------------------

sqlite3 stack.db "SELECT id, frame_id, module FROM allocation ORDER BY id" >once.txt
"$PYTHON" gen.py again.pt.trace.json
sed -i 's/"with_stack": 1/"with_stack": 1, "again": 1/' again.pt.trace.json
vr_run again import again.pt.trace.json --db stack.db -q
sqlite3 stack.db "SELECT id, frame_id, module FROM allocation WHERE source_id = 1 ORDER BY id" >twice.txt
cmp -s once.txt twice.txt && pass "a second analysis places the first file's allocations the same" \
    || fail "a second analysis places them the same" "$(diff once.txt twice.txt | head)"

finish
