#!/usr/bin/env bash
# tests/memprints-chart.sh: the job's memory prints on the
# device's memory chart, and the leak a rising run of prints shows without
# an OOM (docs/diagnosis.md). Everything expected is computed here from the inputs
# this script writes:
#   - a trace of cuda:0 (no OOM) and a log whose timed prints name cuda:0:
#     one marker per print, at the x the chart's own tick labels give for
#     the print's stamp (as tests/face.sh checks the OOM mark), its
#     printed bytes (1024-based) exactly in data- and in the <title>, a
#     reserved square only where reserved is printed, "printed by the job"
#     in the legend; a print of cuda:1 is not on cuda:0's chart but on a
#     small chart of its own, as a log's prints with no device chart are;
#   - the same log's prints rise: one `leak` warning from the log;
#   - a trace whose steps keep 1 GiB each (the timeline's leak) beside the
#     rising prints: one `leak` finding, the timeline's, not two.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
PY=$VR_SRCDIR/tests/py/memprints-chart
cd "$TMP"
need python3 || true

"$PYTHON" "$PY/checks.py" "$VRAMREPORT" >results.txt 2>&1 || true
tap_lines results.txt
finish
