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
PY=$VR_SRCDIR/tests/py/segmap

REAL=$VR_SRCDIR/tests/data/realdata/snapshot
MAX_ROWS=24 # VR_SEGMAP_MAX_ROWS (src/render/svg/segmap_svg.h)
cd "$TMP"
need python3 || true

# compare NAME WANT.json PAGE.json REPORT.json: the page against the oracle.
compare() {
    "$PYTHON" "$PY/compare.py" "$@" >"$1.tap" || echo "FAIL	$1: compared" >>"$1.tap"
    tap_lines "$1.tap"
}

#-- every real snapshot --------------------------------------------------------------------

for f in "$REAL"/*.pickle; do
    name=${f##*/}
    "$PYTHON" "$PY/oracle.py" "$f" $MAX_ROWS >"$name.want" 2>oracle.err \
        || { fail "$name: the oracle reads it" "$(cat oracle.err)"; continue; }
    vr_run imp import "$f" --db "$name.db" -q
    vr_run html report --db "$name.db" -o "$name.html"
    vr_run json report --db "$name.db" --format json -o "$name.json"
    [ "$rc" = 0 ] && [ -s "$name.html" ] && pass "$name: HTML and JSON reports" \
        || { fail "$name: HTML and JSON reports" "exit $rc: $(cat html.err json.err)"; continue; }
    "$PYTHON" "$PY/readhtml.py" "$name.html" >"$name.page"
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
"$PYTHON" "$PY/md.py" snap.md >md.tap || echo "FAIL	Markdown: checked" >>md.tap
tap_lines md.tap

#-- markup in a snapshot -------------------------------------------------------------------

"$PYTHON" "$PY/gen_hostile.py" || fail "python3 wrote the hostile snapshot"
vr_run evil evil.pickle -o evil.html
[ "$rc" = 0 ] && pass "a snapshot with markup: reported" || fail "a snapshot with markup: reported" "exit $rc: $(cat evil.err)"
"$PYTHON" "$PY/readhtml.py" evil.html >evil.page
got=$(json_get evil.page '([t for t in d["tags"] if t in ("script", "img")], d["details"])')
[ "$got" = "([], 1)" ] && pass "a snapshot with markup: no script or image element, one <details>" \
    || fail "a snapshot with markup: no script or image element, one <details>" "got $got"
# The page names the job's files from their folder, "/home/u/<script>alert(1)</"
# (a '/' in the file's name ends a folder), both escaped.
grep -q '<summary><code>script&gt;.py:7 in &lt;img src=x onerror=alert(2)&gt;</code>' evil.html \
    && grep -q '^<code>/home/u/&lt;script&gt;alert(1)&lt;/</code>.</p>' evil.html \
    && pass "a snapshot with markup: the site's line is escaped in its <summary>" \
    || fail "a snapshot with markup: the site's line is escaped in its <summary>" "$(grep -o '<summary>[^/]*' evil.html | head -3)"
grep -q 'data-pool="&lt;script&gt;' evil.html \
    && pass "a snapshot with markup: the segment type is escaped in the map" \
    || fail "a snapshot with markup: the segment type is escaped in the map"

#-- 10,000 segments ------------------------------------------------------------------------

"$PYTHON" "$PY/gen_10000.py" || fail "python3 wrote the 10,000-segment snapshot"
"$PYTHON" "$PY/oracle.py" many.pickle $MAX_ROWS >many.want
vr_run many import many.pickle --db many.db -q
vr_run many report --db many.db -o many.html
vr_run manyj report --db many.db --format json -o many.json
[ "$rc" = 0 ] && pass "10,000 segments: reported" || fail "10,000 segments: reported" "exit $rc: $(cat many.err manyj.err)"
"$PYTHON" "$PY/readhtml.py" many.html >many.page
compare many.pickle many.want many.page many.json
svg=$("$PYTHON" -c 'import re,sys; print(max(len(m) for m in re.findall(r"<svg class=\"vr-segmap\".*?</svg>|<svg[^>]*vr-segmap.*?</svg>", open(sys.argv[1]).read(), re.S)))' many.html)
html=$(wc -c <many.html | tr -d ' ')
[ "$svg" -lt 300000 ] && pass "10,000 segments: the map is under 300 KB ($svg bytes)" \
    || fail "10,000 segments: the map is under 300 KB" "$svg bytes"
[ "$html" -lt 600000 ] && pass "10,000 segments: the page is under 600 KB ($html bytes)" \
    || fail "10,000 segments: the page is under 600 KB" "$html bytes"

finish
