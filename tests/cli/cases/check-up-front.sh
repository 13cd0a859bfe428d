#!/usr/bin/env bash
# Everything the command line asks that can be checked is checked before
# any import: the output's name must say its format, its folder must
# exist, it must not be a folder; `report` needs an existing database.
# Nothing is created on the way (no --db file, no report).
set -u
cp "$CLI_DATA/tiny.pt.trace.json" t.json
mkdir out
for o in report.pdf report out no-such-folder/r.md; do
    "$VRAMREPORT" t.json --db kept.db -o "$o"
    echo "-o $o: exit $?"
done
"$VRAMREPORT" t.json --db kept.db -o report.txt --format md && echo "--format md with .txt: exit 0"
rm -f kept.db report.txt
"$VRAMREPORT" report --db missing.db -o r.md
echo "report --db missing.db: exit $?"
"$VRAMREPORT" t.json --format pdf
echo "--format pdf: exit $?"
for z in Europe/Berlin +25:00; do
    "$VRAMREPORT" t.json --tz "$z" --db kept.db -o r.md
    echo "--tz $z: exit $?"
done
"$VRAMREPORT" t.json --tz +05:30 -o r.md -q && echo "--tz +05:30: exit 0" && rm r.md
"$VRAMREPORT" t.json -o R.HTML -q && echo "R.HTML: exit 0, $(head -c 15 R.HTML)"
rm -f R.HTML
ls
