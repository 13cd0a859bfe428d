#!/usr/bin/env bash
# An unknown --format is a usage error, before any input is read.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
"$VRAMREPORT" tiny.pt.trace.json --format pdf
