#!/usr/bin/env bash
# A template that does not parse: exit 1 and one line naming the template
# and the line of the error; no report file is left behind.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
mkdir tpl
printf 'ok\n{{#devices}}\nno end\n' > tpl/report.md.mustache
"$VRAMREPORT" tiny.pt.trace.json --templates tpl -o report.md || { echo "exit $?"; }
test ! -e report.md && echo "no report.md"
