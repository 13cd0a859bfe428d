#!/usr/bin/env bash
# No arguments at all: a usage error (2), not a data error (1).
set -eu
"$VRAMREPORT"
