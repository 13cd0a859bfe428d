#!/usr/bin/env bash
# `import` writes a database: without --db it is a usage error.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
"$VRAMREPORT" import tiny.pt.trace.json
