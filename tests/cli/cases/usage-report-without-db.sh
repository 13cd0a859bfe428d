#!/usr/bin/env bash
# `report` reads a database: without --db it is a usage error.
set -eu
"$VRAMREPORT" report -o report.md
