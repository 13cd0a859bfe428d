#!/usr/bin/env bash
# Small traces for cases a code review found wrong once; each output below
# was checked by hand.
set -eu
for f in siblings address-reuse steps-partial-totals memtimeline-bad-rows huge-sizes; do
    cp "$CLI_DATA/$f.json" .
done
echo "# ops that touch (A [100,110] B [110,120] C [120,130] us) are siblings,"
echo "# not nested: each includes only its own allocation"
"$VRAMREPORT" siblings.json | sed -n '/^| Operator/,/^$/p'
echo "# an address allocated again without a recorded free: the first"
echo "# allocation ended by then, so only 1000 B and 200 B are live at the peak"
"$VRAMREPORT" address-reuse.json | sed -n '/^| Size/,/^$/p'
echo "# step 2 has no reserved figure: its cell stays empty"
"$VRAMREPORT" steps-partial-totals.json | sed -n '/^| Step/,/^$/p'
echo "# memory timeline rows with a non-integer field are skipped and counted"
"$VRAMREPORT" memtimeline-bad-rows.json --format json | grep -E '"(malformed_event|peak_allocated_bytes|memory_events)"'
echo "# sizes of 2^62 in a trace without totals: more than any GPU holds, each event refused and counted, no overflow"
"$VRAMREPORT" huge-sizes.json --format json | grep -E '"(peak_allocated_bytes|totals_rebuilt|malformed_event)"'
