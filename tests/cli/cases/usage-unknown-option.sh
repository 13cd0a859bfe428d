#!/usr/bin/env bash
# An unknown option is a usage error.
set -eu
"$VRAMREPORT" --colour=always trace.json
