#!/usr/bin/env bash
# --templates DIR: a template found in DIR replaces the built-in one of the
# same name; the others (here the partials) still come from the binary.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
mkdir tpl
cat > tpl/report.md.mustache <<'T'
Devices:{{#devices}} {{id}}={{peak_allocated_bytes}} ({{peak_allocated_h}}){{/devices}}
T
"$VRAMREPORT" tiny.pt.trace.json --templates tpl -o -
# Only a partial overridden: the built-in report uses it.
mkdir part
printf '### {{id}} peaked at {{peak_allocated_h}}\n' > part/device.md.mustache
"$VRAMREPORT" tiny.pt.trace.json --templates part -o - | grep '^### '
