#!/usr/bin/env bash
# The hand-written trace as JSON. Every figure here was checked by hand
# (see tiny-markdown.sh); the file guards them against regressions.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
"$VRAMREPORT" tiny.pt.trace.json --format json
