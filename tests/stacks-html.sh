#!/usr/bin/env bash
# tests/stacks-html.sh: the HTML's top sites on real snapshots show the
# short stack (the frames memory_viz filters left out, as in the
# Markdown, and how many), the full stack one <details> away, wrappers
# included (the oracle: tests/py/stacks-html/checks.py).
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

cd "$TMP"
need python3 || true
"$PYTHON" "$VR_SRCDIR/tests/py/stacks-html/checks.py" "$VRAMREPORT" "$VR_SRCDIR" >results.txt 2>&1 || true
tap_lines results.txt
finish
