#!/usr/bin/env bash
# `report` takes no input files.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
"$VRAMREPORT" report --db run.db tiny.pt.trace.json
