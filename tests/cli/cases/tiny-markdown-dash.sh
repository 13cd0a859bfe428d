#!/usr/bin/env bash
# -o - writes to standard output, the same as no -o at all.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
"$VRAMREPORT" tiny.pt.trace.json -o -
