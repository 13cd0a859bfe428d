#!/usr/bin/env bash
# --version and -V print the name and version, nothing else.
set -eu
"$VRAMREPORT" --version
"$VRAMREPORT" -V
