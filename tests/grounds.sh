#!/usr/bin/env bash
# tests/grounds.sh: a verdict only on grounds. A green OK needs a peak
# judged against a capacity an input (or --capacity) states; monitoring
# readings alone, a snapshot or an allocator dump with no capacity get
# "unknown" with a sentence that says what to give; readings at or near
# full are AT RISK (near-capacity, seen by --fail-on); figures that
# contradict each other are a suspect-input finding, never an OK. Every
# figure checked is read here from the input itself (the CSV's MiB, the
# memory_summary box, the generated trace's events).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
cd "$TMP"
need python3 || true
"$PYTHON" "$VR_SRCDIR/tests/py/grounds/checks.py" "$VRAMREPORT" "$VR_SRCDIR/tests/gen-scenarios.py" \
    "$VR_SRCDIR/tests/data/realdata" >results.txt 2>&1 || true
tap_lines results.txt
finish
