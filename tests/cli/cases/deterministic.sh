#!/usr/bin/env bash
# Reports hold nothing of the time or place of the run: two imports a
# second apart give byte-identical JSON, Markdown and HTML.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
"$VRAMREPORT" import tiny.pt.trace.json --db a.db -q
sleep 1.1
"$VRAMREPORT" import tiny.pt.trace.json --db b.db -q
for fmt in json md html; do
    "$VRAMREPORT" report --db a.db -o "a.$fmt"
    "$VRAMREPORT" report --db b.db -o "b.$fmt"
    cmp "a.$fmt" "b.$fmt" && echo "$fmt: identical"
done
"$VRAMREPORT" tiny.pt.trace.json -o c.html -q
cmp a.html c.html && echo "one-shot html: identical"
