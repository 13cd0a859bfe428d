#!/usr/bin/env bash
# --help prints the usage on stdout and exits 0; -h is the same.
set -eu
"$VRAMREPORT" --help
"$VRAMREPORT" -h >h.txt
"$VRAMREPORT" --help | cmp - h.txt
