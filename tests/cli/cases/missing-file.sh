#!/usr/bin/env bash
# A file that does not exist: exit 1, one line naming it.
set -eu
"$VRAMREPORT" no-such-trace.json -o report.md
