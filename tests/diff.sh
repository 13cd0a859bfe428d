#!/usr/bin/env bash
# tests/diff.sh: `vramreport diff BEFORE AFTER` (docs/diff.md) on real
# files: two cs336 snapshots at different settings, the bert-small traces
# of an H100 and an MI300X. Each pair's figures are checked against the
# two single reports (`vramreport X -o x.json`), recomputed by
# tests/py/diff/check.py; a run against itself gives zero everywhere;
# --fail-on-growth exits 3 just past the real growth and 0 just short of
# it; a folder and a --db database are sides too; bad arguments are one
# error and exit 2; input text is escaped in the Markdown and the HTML.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/diff
R=$VR_SRCDIR/tests/data/realdata
FWD=$R/snapshot/cs336-silmont-forward-bf16.pickle
TRAIN=$R/snapshot/cs336-bcrafton.pickle
H100=$R/kineto/tracelens-h100-bert-small.json.gz
MI300=$R/kineto/tracelens-mi300x-bert-small.json.gz
RANK1=$R/kineto/hta-v100x2-rank1-2022.pt.trace.json.gz
MAGMA=$R/snapshot/cs336-magma27-training.pickle
QWEN=$R/kineto/tracelens-h100-qwen1.5-0.5b.json.gz
cd "$TMP"
need python3 || true

oracle() { # ARGS...: check.py's lines as results
    "$PYTHON" "$PY/check.py" "$@" >oracle.out 2>&1 || true
    tap_lines oracle.out
}

single() { # NAME INPUT [OPTIONS]: NAME.json, the single report
    vr_run "single-$1" -q "${@:2}" -o "$1.json"
    [ "$rc" = 0 ] || fail "$1: the single report" "$(cat "single-$1.err")"
}

diff_json() { # NAME BEFORE AFTER [OPTIONS]: NAME.json
    vr_run "$1" diff -q "${@:2}" -o "$1.json"
    if [ "$rc" = 0 ]; then pass "$1: diff exits 0"; else fail "$1: diff exits 0" "rc=$rc $(cat "$1.err")"; fi
}

single fwd "$FWD"
single train "$TRAIN"
single h100 "$H100"
single mi300 "$MI300"
single rank1 "$RANK1"
single magma "$MAGMA"
single qwen "$QWEN"
single train-4g "$TRAIN" --capacity 4GiB
single fwd-4g "$FWD" --capacity 4GiB

# A run against itself: zero everywhere, every site the same.
diff_json self-snapshot "$TRAIN" "$TRAIN"
oracle self self-snapshot.json "snapshot against itself"
diff_json self-trace "$H100" "$H100"
oracle self self-trace.json "trace against itself"
# The same run from another checkout: every frame under the job's folder
# moved to /scratch/job-17/; each side's frames are named from its own
# folder, so the sites are the same ones and nothing moved.
"$PYTHON" - "$TRAIN" moved.pickle "$VR_SRCDIR/tests" <<'PYEOF' || fail "python3 wrote the moved snapshot"
import pickle, sys
sys.path.insert(0, sys.argv[3])
from vrtest import load_pickle
OLD, NEW = "/home/brian/Desktop/", "/scratch/job-17/"
def move(x):
    if isinstance(x, dict):
        return {k: (v.replace(OLD, NEW, 1) if k == "filename" and isinstance(v, str) else move(v))
                for k, v in x.items()}
    if isinstance(x, list):
        return [move(v) for v in x]
    return x
with open(sys.argv[2], "wb") as f:
    pickle.dump(move(load_pickle(sys.argv[1])), f, protocol=2)
PYEOF
diff_json self-moved "$TRAIN" moved.pickle
oracle self self-moved.json "snapshot against itself from another checkout"
got=$(json_get self-moved.json '[p["site_folders"] for p in d["diff"]["devices"]]')
[ "$got" = "[{'before': '/home/brian/Desktop/assignment2-systems/', 'after': '/scratch/job-17/assignment2-systems/'}]" ] \
    && pass "another checkout: each side's sites named from its own folder" \
    || fail "another checkout: each side's sites named from its own folder" "$got"

# Two cs336 runs: forward only in bf16, then a training step.
diff_json snapshots "$FWD" "$TRAIN"
oracle pair fwd.json train.json snapshots.json "cs336 forward -> training"
# The H100 and the MI300X runs of one model.
diff_json traces "$H100" "$MI300"
# The pair's heading names both GPUs, as their single reports do, and the
# verdicts read as the reports' banners ("OK").
vr_run traces-md diff -q "$H100" "$MI300" -o traces.md
want=$(json_get h100.json 'd["devices"][0]["name"]')" → "$(json_get mi300.json 'd["devices"][0]["name"]')
grep -qF "## cuda:0: $want" traces.md && grep -q '^Verdict before: OK; after: OK\.' traces.md \
    && pass "H100 -> MI300X: the heading names both GPUs, the verdicts as the reports say them" \
    || fail "H100 -> MI300X: the heading names both GPUs, the verdicts as the reports say them" "$(grep -m1 '^## ' traces.md)"
oracle pair h100.json mi300.json traces.json "bert-small H100 -> MI300X"
# More sites than the single reports list (magma's 10 top sites of 14,
# qwen's modules past the 5 of a category): the diff reads them all.
diff_json snapshots-2 "$TRAIN" "$MAGMA"
oracle pair train.json magma.json snapshots-2.json "cs336 training -> another cs336 training"
# The snapshots' sites recomputed from the pickles themselves.
oracle pickle "$FWD" "$TRAIN" snapshots.json "cs336 forward -> training, from the pickles"
oracle pickle "$TRAIN" "$MAGMA" snapshots-2.json "cs336 training -> another, from the pickles"
diff_json traces-2 "$H100" "$QWEN"
oracle pair h100.json qwen.json traces-2.json "bert-small -> qwen1.5-0.5b, H100"
check "sites past the 20 listed are summed in sites_more" "$PYTHON" -c '
import json, sys; p = json.load(open("traces-2.json"))["diff"]["devices"][0]
sys.exit(not (len(p["sites"]) == 20 and p["sites_more"]["count"] > 0))'

# With a capacity, the training run is near it and advised; the forward
# run is not: the finding is gone, and the advice is checked.
diff_json advice "$TRAIN" "$FWD" --capacity 4GiB
oracle advice train-4g.json fwd-4g.json advice.json "training -> forward, 4 GiB"
vr_run advice-md diff -q "$TRAIN" "$FWD" --capacity 4GiB -o advice.md
check "the Markdown says the near-capacity finding is gone" grep -q "Findings gone: near-capacity" advice.md
check "the Markdown checks the 8-bit optimizer's advice" grep -q "8bit-optimizer" advice.md

# Different ranks: nothing pairs, each side listed, a table of pairs.
diff_json unpaired "$RANK1" "$H100"
oracle unpaired rank1.json h100.json unpaired.json "rank 1 -> no rank"
vr_run unpaired-md diff -q "$RANK1" "$H100" -o unpaired.md
check "unpaired devices: the Markdown has the table of pairs" grep -q "^## Devices paired" unpaired.md
check "unpaired devices: the Markdown lists the rank 1 device" grep -q "| cuda:1 | (none) | rank 1 |" unpaired.md

# A folder and a kept database as sides.
mkdir -p before-dir
cp "$FWD" before-dir/
vr_run import import -q "$TRAIN" --db train.db
[ "$rc" = 0 ] || fail "import --db" "$(cat import.err)"
diff_json sides before-dir train.db
oracle pair fwd.json train.json sides.json "a folder -> a --db database"
check "the database side names its database" "$PYTHON" -c '
import json, sys; d = json.load(open("sides.json"))["diff"]
sys.exit(not (d["after"]["given"] == "train.db" and d["before"]["given"] == "before-dir"))'

# A side of which some input failed: the diff is written, exit 3, stderr
# says which side, and its "partial" says so too.
mkdir -p partial-dir
cp "$FWD" partial-dir/
printf '\037\213\010\000\000\000\000\000\000\003not deflate data\n' >partial-dir/broken.json.gz
vr_run partial diff -q partial-dir "$TRAIN" -o partial.json
if [ "$rc" = 3 ] && grep -q "some inputs of BEFORE could not be read" partial.err; then pass "a side with a broken input: exit 3, said on stderr"; else fail "a side with a broken input: exit 3, said on stderr" "rc=$rc" "$(cat partial.err)"; fi
check "a side with a broken input is 'partial' in the JSON" "$PYTHON" -c '
import json, sys; d = json.load(open("partial.json"))["diff"]
sys.exit(not (d["before"]["partial"] is True and d["after"]["partial"] is False))'
oracle pair fwd.json train.json partial.json "a folder with a broken file -> training"

# A diff written into a folder side is skipped when the folder is read again.
for fmt in md html json; do
    vr_run "into-$fmt" diff -q before-dir train.db -o "before-dir/diff.$fmt"
done
vr_run again diff before-dir train.db -o again.json
n=$(grep -c "skipped: a vramreport report" again.err || true)
if [ "$rc" = 0 ] && [ "$n" = 3 ]; then pass "the diffs in a folder side are skipped as vramreport's own"; else fail "the diffs in a folder side are skipped as vramreport's own" "rc=$rc" "$(cat again.err)"; fi
oracle pair fwd.json train.json again.json "the folder with its diffs -> the database"

# --fail-on-growth: just short of the real growth exits 3, just past it 0.
read -r below above <<<"$("$PYTHON" -c '
import json, math
b = json.load(open("fwd.json"))["devices"][0]["peak_allocated_bytes"]
a = json.load(open("train.json"))["devices"][0]["peak_allocated_bytes"]
g = (a - b) * 100.0 / b
print(math.floor(g) - 1, math.ceil(g) + 1)')"
vr_run gate-below diff -q "$FWD" "$TRAIN" --fail-on-growth "$below" -o gate.md
if [ "$rc" = 3 ]; then pass "--fail-on-growth $below (below the growth) exits 3"; else fail "--fail-on-growth $below exits 3" "rc=$rc"; fi
check "--fail-on-growth says why on stderr" grep -q "grew by more than" gate-below.err
check "--fail-on-growth still writes the diff" test -s gate.md
vr_run gate-above diff -q "$FWD" "$TRAIN" --fail-on-growth "$above" -o gate.md
if [ "$rc" = 0 ]; then pass "--fail-on-growth $above (above the growth) exits 0"; else fail "--fail-on-growth $above exits 0" "rc=$rc"; fi
vr_run gate-shrink diff -q "$TRAIN" "$FWD" --fail-on-growth 0 -o gate.md
if [ "$rc" = 0 ]; then pass "--fail-on-growth 0 on a shrinking peak exits 0"; else fail "--fail-on-growth 0 on a shrink exits 0" "rc=$rc"; fi
vr_run gate-self diff -q "$TRAIN" "$TRAIN" --fail-on-growth 0 -o gate.md
if [ "$rc" = 0 ]; then pass "--fail-on-growth 0 against itself exits 0"; else fail "--fail-on-growth 0 against itself exits 0" "rc=$rc"; fi

# More than 16 devices: those past the 16 each report holds in full pair
# too, by their peaks, and the gate sees them. cuda:1 of 20 (not in full
# before: neither among the highest peaks nor the lowest) doubles after.
"$PYTHON" "$VR_SRCDIR/tests/bench/gen_devices.py" 20 >in-many-b.json
"$PYTHON" -c '
import json, sys
d = json.load(open("in-many-b.json"))
for e in d["traceEvents"]:
    if e["args"]["Device Id"] == 1:
        e["args"]["Bytes"] *= 2
        e["args"]["Total Allocated"] *= 2
json.dump(d, open("in-many-a.json", "w"))'
single many-before in-many-b.json
single many-after in-many-a.json
diff_json many in-many-b.json in-many-a.json
oracle many many-before.json many-after.json many.json "20 devices"
check "cuda:1 was not in full before" "$PYTHON" -c '
import json, sys; d = json.load(open("many-before.json"))
sys.exit(not any(x["id"] == "cuda:1" for x in d["more_devices"]))'
vr_run many-gate diff -q in-many-b.json in-many-a.json --fail-on-growth 50 -o many.md
if [ "$rc" = 3 ]; then pass "--fail-on-growth sees a device past the 16 in full"; else fail "--fail-on-growth sees a device past the 16 in full" "rc=$rc"; fi
check "the Markdown lists the devices compared by their peaks only" grep -q "^## Devices compared by their peaks only" many.md

# The Markdown says what the sites cover of each peak (fwd.json's and
# train.json's live_at_peak_grouped_bytes against their peaks), and a
# phase one side lacks is "none", not unknown.
vr_run sites-md diff -q "$FWD" "$TRAIN" -o sites.md
check "the Markdown says what the sites cover of each peak" grep -qF "The sites hold 244 MiB of the 745 MiB peak before and 748 MiB of the 3.59 GiB after" sites.md
check "a phase the forward run lacks is 'none'" grep -qF "| backward | none | 3.08 GiB |  |" sites.md

# --summary: a few lines on standard output.
vr_run summary diff -q "$FWD" "$TRAIN" --summary
n=$(wc -l <summary.out)
if [ "$rc" = 0 ] && [ "$n" -ge 2 ] && [ "$n" -le 6 ] && grep -q "peak allocated 745 MiB → 3.59 GiB" summary.out; then
    pass "--summary: a few lines with the peaks before and after"
else
    fail "--summary: a few lines with the peaks before and after" "rc=$rc lines=$n" "$(cat summary.out)"
fi

# HTML: one page, no script, the element id="diff", both timelines on one
# chart and a bar per side.
vr_run html diff -q "$FWD" "$TRAIN" -o d.html
check "the HTML diff is written" test -s d.html
check "the HTML has the element id=\"diff\"" grep -q 'id="diff"' d.html
if grep -qi "<script" d.html; then fail "the HTML has no script"; else pass "the HTML has no script"; fi
# (the legends' swatches are svgs of their own: not counted)
n=$(( $(count_str "<svg" d.html) - $(count_str '<svg class="vr-swatch"' d.html) ))
if [ "$n" = 3 ]; then pass "the HTML has the timelines' chart and a breakdown bar per side"; else fail "the HTML has the timelines' chart and a breakdown bar per side" "$n <svg"; fi
# The legends are lists under the charts, as the report's (real text, not
# in the SVG), and the page has the report's phone rules.
n=$(count_str '<ul class="vr-legend"' d.html)
if [ "$n" = 3 ] && grep -q 'max-width: 380px' d.html; then pass "the HTML's legends are lists under the charts, with the report's page rules"; else fail "the HTML's legends are lists under the charts, with the report's page rules" "$n lists"; fi
check "the chart draws both timelines" grep -q 'class="vr-series vr-series-1 after"' d.html

check "the snapshots' chart says each side starts at its first memory event" grep -q "Each side from its first memory event: no profiler step is marked on both sides" d.html
vr_run html-traces diff -q "$H100" "$QWEN" -o t.html
check "the traces' chart is aligned on step 6, said under it" grep -q "Time 0 is the start of profiler step 6 on both sides" t.html
check "the traces' chart marks step 6" grep -q ">step 6<" t.html

# Input text is escaped: a file named with markup.
mkdir -p evil
cp "$FWD" 'evil/<script>alert(1).pickle'
vr_run evil-md diff -q evil "$TRAIN" -o evil.md
vr_run evil-html diff -q evil "$TRAIN" -o evil.html
check "a name with markup is escaped in the Markdown" grep -qF '\<script\>' evil.md
if grep -qi "<script" evil.html; then fail "a name with markup is no tag in the HTML"; else pass "a name with markup is no tag in the HTML"; fi
check "a name with markup is shown as text in the HTML" grep -qF '&lt;script&gt;' evil.html

# Bad arguments: one error line, exit 2.
usage() { # DESC ARGS...
    vr_run usage diff "${@:2}"
    if [ "$rc" = 2 ] && head -n 1 usage.err | grep -q "^vramreport: "; then pass "$1 exits 2 with an error"; else fail "$1 exits 2 with an error" "rc=$rc $(cat usage.err)"; fi
}
usage "one input" "$FWD"
usage "three inputs" "$FWD" "$TRAIN" "$FWD"
usage "a missing input" "$FWD" missing.pickle
usage "--fail-on-growth abc" "$FWD" "$TRAIN" --fail-on-growth abc
usage "--fail-on-growth -5" "$FWD" "$TRAIN" --fail-on-growth -5
usage "--format pdf" "$FWD" "$TRAIN" --format pdf
usage "an output that names no format" "$FWD" "$TRAIN" -o d.pdf
usage "an unknown option" "$FWD" "$TRAIN" --bogus
vr_run help diff --help
if [ "$rc" = 0 ] && grep -q "fail-on-growth" help.out; then pass "diff --help"; else fail "diff --help" "rc=$rc"; fi
vr_run top-help --help
check "--help lists diff" grep -q "vramreport diff BEFORE AFTER" top-help.out

finish
