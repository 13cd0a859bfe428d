#!/usr/bin/env bash
# tests/code-spans.sh: every command, option or setting a user may copy
# from a report's prose is in a code span (issue 28, item 7): no
# "--option", "NAME=" or "name(" outside code in any golden
# (tests/golden/*.md) nor in the reports of tests/less.sh's real inputs.
# The oracle: tests/py/code-spans/check.py.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

cd "$TMP"
need python3 || true
"$PYTHON" "$VR_SRCDIR/tests/py/code-spans/check.py" "$VRAMREPORT" "$VR_SRCDIR" "$TMP" >results.txt 2>&1 || true
tap_lines results.txt
finish
