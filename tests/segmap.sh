#!/usr/bin/env bash
# tests/segmap.sh: what an allocator snapshot adds to the HTML report (issue
# 8): the segment map (one row per segment, the smallest summed into one
# last row, each row's bytes per block state), the top sites' stacks as
# <details>, the memory live before the record marked on the chart, and the
# JSON keys. Expected figures come from Python's own reading of each pickle
# (a restricted Unpickler that refuses every global: the oracle); the HTML
# is read with Python's HTML parser.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

REAL=$VR_SRCDIR/tests/data/realdata/snapshot
MAX_ROWS=24 # VR_SEGMAP_MAX_ROWS (src/render/svg/segmap_svg.h)
cd "$TMP"
need python3 || true

cat >oracle.py <<'PYEOF'
"""The segment map a snapshot should give, read with every global refused."""
import json, pickle, sys

class DataOnly(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))

STATES = {"active_allocated": "allocated", "active_pending_free": "pending",
          "active_awaiting_free": "pending", "inactive": "free"}

def load(path):
    with open(path, "rb") as f:
        d = DataOnly(f).load()
    return {"segments": d, "device_traces": []} if isinstance(d, list) else d

def row(seg):
    r = {"bytes": seg["total_size"], "allocated": 0, "pending": 0, "free": 0, "other": 0}
    for b in seg["blocks"]:
        r[STATES.get(b["state"], "other")] += b["size"]
    r["other"] += max(0, seg["total_size"] - sum(b["size"] for b in seg["blocks"]))
    return r

def expected(path, max_rows):
    d = load(path)
    out = {}
    for seg in d["segments"]:
        out.setdefault(seg.get("device", 0), []).append(seg)
    devices = {}
    for dev, segs in sorted(out.items()):
        segs.sort(key=lambda s: (-s["total_size"], s["address"]))
        rows = [row(s) for s in segs]
        rest = rows[max_rows:]
        in_use = sum(r["bytes"] - r["free"] - r["other"] for r in rows)
        traces = d.get("device_traces", [])
        entries = traces[dev] if dev < len(traces) else None
        # The timeline ends at the end state: what was live before the
        # first entry is the end state minus every recorded change (all of
        # it when the history is empty); no history list: not known.
        deltas = sum(+e["size"] if e["action"] == "alloc" else
                     -e["size"] if e["action"] == "free_completed" else 0 for e in entries or [])
        devices[str(dev)] = {
            "segments": len(rows), "rows": rows[:max_rows],
            "rest": None if not rest else {
                "segments": len(rest), "bytes": sum(r["bytes"] for r in rest),
                **{k: sum(r[k] for r in rest) for k in ("allocated", "pending", "free", "other")}},
            "pre_existing": max(0, in_use - deltas) if entries is not None else None,
        }
    return devices

if __name__ == "__main__":
    print(json.dumps(expected(sys.argv[1], int(sys.argv[2])), sort_keys=True))
PYEOF

cat >readhtml.py <<'PYEOF'
"""What the HTML report shows: its segment maps, their rows, <details>, the
chart's baseline, and whether any markup from the input came through."""
import json, sys
from html.parser import HTMLParser

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.maps, self.details, self.baselines, self.tags = [], 0, [], set()
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        cls = a.get("class", "")
        if tag == "svg" and cls == "vr-segmap":
            self.maps.append({"segments": int(a["data-segments"]), "rows": [], "rest": None,
                              "data_rows": int(a["data-rows"])})
        elif tag == "g" and cls in ("vr-segment", "vr-segment-rest"):
            r = {k[5:]: int(v) for k, v in a.items()
                 if k.startswith("data-") and k not in ("data-pool", "data-expandable")}
            if cls == "vr-segment":
                self.maps[-1]["rows"].append(r)
            else:
                self.maps[-1]["rest"] = r
        elif tag == "details":
            self.details += 1
        elif tag == "g" and cls == "vr-baseline":
            self.baselines.append(int(a["data-bytes"]))

p = Page()
p.feed(open(sys.argv[1], encoding="utf-8").read())
print(json.dumps({"maps": p.maps, "details": p.details, "baselines": p.baselines,
                  "tags": sorted(p.tags)}))
PYEOF

# compare NAME WANT.json PAGE.json REPORT.json: the page against the oracle.
compare() {
    "$PYTHON" - "$@" >"$1.tap" <<'PYEOF' || echo "FAIL	$1: compared" >>"$1.tap"
import json, sys
name, want, page, rep = sys.argv[1], *(json.load(open(f)) for f in sys.argv[2:5])
def say(desc, got, exp):
    print(("PASS\t%s: %s" % (name, desc)) if got == exp else
          ("FAIL\t%s: %s\tgot %r, want %r" % (name, desc, got, exp)))
snap = [d for d in rep["devices"] if "final_reserved_bytes" in d]
say("one segment map per device with a snapshot", len(page["maps"]), len(snap))
for (dev, w), m in zip(sorted(want.items()), page["maps"]):
    say("cuda:%s: the map counts every segment" % dev, m["segments"], w["segments"])
    say("cuda:%s: one row per segment, largest first (bytes per state)" % dev, m["rows"], w["rows"])
    say("cuda:%s: the rows' colours add up to their segments" % dev,
        all(r["allocated"] + r["pending"] + r["free"] + r["other"] == r["bytes"] for r in m["rows"]),
        True)
    say("cuda:%s: the last row sums the other segments" % dev, m["rest"], w["rest"])
say("one <details> per top site",
    page["details"], sum(len(d["top_sites"]) for d in rep["devices"]))
pre = [w["pre_existing"] for _, w in sorted(want.items()) if w["pre_existing"]]
say("the chart marks the memory live before the record", page["baselines"], pre)
say("no script, iframe or image in the page",
    [t for t in page["tags"] if t in ("script", "iframe", "img", "object", "embed")], [])
PYEOF
    tap_lines "$1.tap"
}

#-- every real snapshot --------------------------------------------------------------------

for f in "$REAL"/*.pickle; do
    name=${f##*/}
    "$PYTHON" oracle.py "$f" $MAX_ROWS >"$name.want" 2>oracle.err \
        || { fail "$name: the oracle reads it" "$(cat oracle.err)"; continue; }
    vr_run imp import "$f" --db "$name.db" -q
    vr_run html report --db "$name.db" -o "$name.html"
    vr_run json report --db "$name.db" --format json -o "$name.json"
    [ "$rc" = 0 ] && [ -s "$name.html" ] && pass "$name: HTML and JSON reports" \
        || { fail "$name: HTML and JSON reports" "exit $rc: $(cat html.err json.err)"; continue; }
    "$PYTHON" readhtml.py "$name.html" >"$name.page"
    compare "$name" "$name.want" "$name.page" "$name.json"
done

# The JSON keys docs/json.md names, on every device with a snapshot.
for f in "$REAL"/*.pickle; do
    name=${f##*/}
    got=$(json_get "$name.json" '[k for dv in d["devices"] if "final_reserved_bytes" in dv for k in
        ["final_allocated_bytes", "final_reserved_bytes", "segment_count", "largest_free_block_bytes",
         "fragmentation", "top_sites"] if k not in dv] + [k for dv in d["devices"] for k in
        ["free_in_segments_bytes", "internal_waste_bytes", "inactive_split_bytes"]
        if k not in dv.get("fragmentation", {})] + [k for dv in d["devices"] for s in dv["top_sites"]
        for k in ["frame", "bytes", "count"] if k not in s] + ["segments"
        for dv in d["devices"] if "segments" in dv]')
    [ "$got" = "[]" ] && pass "$name: the snapshot's JSON keys" || fail "$name: the snapshot's JSON keys" "missing: $got"
done
got=$(json_get cs336-silmont-segments.pickle.json '[(s["frame"].split("/")[-1], s["stack"][0].split("/")[-1], s["stack_skipped"] + len(s["stack"]) <= s["stack_depth"]) for s in d["devices"][0]["top_sites"] if s["frame"]][:1]')
[ "$got" = "[('trace_peak_memory.py:7 in custom_softmax', 'trace_peak_memory.py:7 in custom_softmax', True)]" ] \
    && pass "a top site's stack starts at its own line (Python frames)" \
    || fail "a top site's stack starts at its own line (Python frames)" "got $got"

# Markdown: no map, no placeholder; each site's stack is a short list.
vr_run md report --db cs336-magma27-training.pickle.db -o snap.md
"$PYTHON" - snap.md <<'PYEOF' >md.tap || echo "FAIL	Markdown: checked" >>md.tap
import sys
text = open(sys.argv[1]).read()
def say(desc, ok, detail=""):
    print(("PASS\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))
say("Markdown: no SVG and no placeholder", "<svg" not in text and "vrchart" not in text)
lines = text.split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("Who held the memory"))
items, nested = 0, []
for l in lines[start + 1:]:
    if l.startswith("- "):
        items += 1
        nested.append(0)
    elif l.startswith("  - "):
        nested[-1] += 1
    elif l.startswith("#"):
        break
say("Markdown: one list item per top site", items > 0, "no items")
say("Markdown: each stack at most 12 frames and two notes", max(nested) <= 14, repr(nested))
say("Markdown: long stacks say how many more", any("more" in l for l in lines if l.startswith("  - ")))
PYEOF
tap_lines md.tap

#-- markup in a snapshot -------------------------------------------------------------------

"$PYTHON" - <<'PYEOF' || fail "python3 wrote the hostile snapshot"
import pickle
MiB = 1 << 20
evil = [{"filename": "/home/u/<script>alert(1)</script>.py", "line": 7,
         "name": "<img src=x onerror=alert(2)>"}]
seg = {"device": 0, "address": 1 << 40, "total_size": 20 * MiB, "allocated_size": 12 * MiB,
       "active_size": 12 * MiB, "requested_size": 12 * MiB, "stream": 0,
       "segment_type": "<script>alert(3)</script>", "segment_pool_id": (0, 0),
       "is_expandable": False, "frames": [], "blocks": [
           {"address": 1 << 40, "size": 12 * MiB, "requested_size": 12 * MiB,
            "state": "active_allocated", "frames": evil},
           {"address": (1 << 40) + 12 * MiB, "size": 8 * MiB, "requested_size": 0,
            "state": "inactive", "frames": []}]}
trace = [{"action": "alloc", "addr": 1 << 40, "size": 12 * MiB, "stream": 0,
          "time_us": 1700000000000000, "frames": evil}]
open("evil.pickle", "wb").write(pickle.dumps({"segments": [seg], "device_traces": [trace]}, protocol=4))
PYEOF
vr_run evil evil.pickle -o evil.html
[ "$rc" = 0 ] && pass "a snapshot with markup: reported" || fail "a snapshot with markup: reported" "exit $rc: $(cat evil.err)"
"$PYTHON" readhtml.py evil.html >evil.page
got=$(json_get evil.page '([t for t in d["tags"] if t in ("script", "img")], d["details"])')
[ "$got" = "([], 1)" ] && pass "a snapshot with markup: no script or image element, one <details>" \
    || fail "a snapshot with markup: no script or image element, one <details>" "got $got"
grep -q '<summary><code>/home/u/&lt;script&gt;alert(1)&lt;/script&gt;.py:7 in &lt;img src=x onerror=alert(2)&gt;</code>' evil.html \
    && pass "a snapshot with markup: the site's line is escaped in its <summary>" \
    || fail "a snapshot with markup: the site's line is escaped in its <summary>" "$(grep -o '<summary>[^/]*' evil.html | head -3)"
grep -q 'data-pool="&lt;script&gt;' evil.html \
    && pass "a snapshot with markup: the segment type is escaped in the map" \
    || fail "a snapshot with markup: the segment type is escaped in the map"

#-- 10,000 segments ------------------------------------------------------------------------

"$PYTHON" - <<'PYEOF' || fail "python3 wrote the 10,000-segment snapshot"
import pickle
MiB = 1 << 20
segs = []
# Every value its own object: PyTorch writes no back-references to
# containers (a shared tuple would be one), and our decoder refuses them.
for i in range(10000):
    size = 2 * MiB if i % 3 else (20 + i % 200) * MiB
    addr = (1 << 40) + i * (1 << 30)
    blocks, at = [], 0
    for k in range(4):
        b = size // 4
        blocks.append({"address": addr + at, "size": b, "requested_size": b,
                       "state": ("active_allocated", "inactive", "active_pending_free",
                                 "inactive")[(i + k) % 4], "frames": []})
        at += b
    segs.append({"device": 0, "address": addr, "total_size": size, "allocated_size": 0,
                 "active_size": 0, "requested_size": 0, "stream": 0,
                 "segment_type": "small" if size == 2 * MiB else "large",
                 "segment_pool_id": tuple([0, 0]), "is_expandable": i % 7 == 0,
                 "frames": [], "blocks": blocks})
open("many.pickle", "wb").write(pickle.dumps({"segments": segs, "device_traces": [[]]}, protocol=4))
PYEOF
"$PYTHON" oracle.py many.pickle $MAX_ROWS >many.want
vr_run many import many.pickle --db many.db -q
vr_run many report --db many.db -o many.html
vr_run manyj report --db many.db --format json -o many.json
[ "$rc" = 0 ] && pass "10,000 segments: reported" || fail "10,000 segments: reported" "exit $rc: $(cat many.err manyj.err)"
"$PYTHON" readhtml.py many.html >many.page
compare many.pickle many.want many.page many.json
svg=$("$PYTHON" -c 'import re,sys; print(max(len(m) for m in re.findall(r"<svg class=\"vr-segmap\".*?</svg>|<svg[^>]*vr-segmap.*?</svg>", open(sys.argv[1]).read(), re.S)))' many.html)
html=$(wc -c <many.html | tr -d ' ')
[ "$svg" -lt 300000 ] && pass "10,000 segments: the map is under 300 KB ($svg bytes)" \
    || fail "10,000 segments: the map is under 300 KB" "$svg bytes"
[ "$html" -lt 600000 ] && pass "10,000 segments: the page is under 600 KB ($html bytes)" \
    || fail "10,000 segments: the page is under 600 KB" "$html bytes"

finish
