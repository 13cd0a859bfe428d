#!/usr/bin/env bash
# The same content imported twice is skipped, with a notice (none with -q).
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
cp tiny.pt.trace.json again.json
"$VRAMREPORT" import tiny.pt.trace.json --db run.db
"$VRAMREPORT" import tiny.pt.trace.json --db run.db
"$VRAMREPORT" import again.json --db run.db
"$VRAMREPORT" import again.json --db run.db -q
"$VRAMREPORT" report --db run.db --format json -o - | grep -c '"content_hash"'
