#!/usr/bin/env bash
# `vramreport estimate --help` prints its usage on stdout and exits 0; -h
# is the same.
set -eu
"$VRAMREPORT" estimate --help
"$VRAMREPORT" estimate -h | cmp - <("$VRAMREPORT" estimate --help)
