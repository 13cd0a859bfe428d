#!/usr/bin/env bash
# Import once into a database, then render from it: the same JSON as the
# one-shot form, and Markdown written to a file by its extension.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
"$VRAMREPORT" import tiny.pt.trace.json --db run.db
"$VRAMREPORT" report --db run.db --format json -o report.json
"$VRAMREPORT" tiny.pt.trace.json --format json -o oneshot.json
cmp report.json oneshot.json
"$VRAMREPORT" report --db run.db -o report.md
cat report.md
