#!/usr/bin/env bash
# The report never replaces what it is made from: an input (by any name:
# itself, a hard link, a symlink) or the database. Usage errors, exit 2,
# and the files are untouched. A symlink planted where a temporary file
# could go is not followed.
set -u
cp "$CLI_DATA/tiny.pt.trace.json" t.json
ln t.json hard.json
ln -s t.json soft.json
before=$(cksum <t.json)
for out in t.json hard.json soft.json; do
    "$VRAMREPORT" t.json -o "$out"
    echo "exit $?"
done
[ "$(cksum <t.json)" = "$before" ] && echo "t.json unchanged"
"$VRAMREPORT" t.json --db run.db -o run.db --format md
echo "exit $?"
"$VRAMREPORT" import t.json --db kept.db -q
"$VRAMREPORT" report --db kept.db -o kept.db --format md
echo "exit $?"
"$VRAMREPORT" report --db kept.db -o report.md && echo "kept.db still reports"
# The old temporary name was OUT.tmp<pid>: plant it for the pid exec gives.
echo victim >victim
bash -c 'ln -s victim out.md.tmp$$; exec "$VRAMREPORT" t.json -o out.md -q'
echo "exit $?"
cat victim
rm -f out.md.tmp*
ls
