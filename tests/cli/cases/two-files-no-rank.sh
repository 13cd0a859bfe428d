#!/usr/bin/env bash
# Two traces that do not say their rank are never merged: each file's
# cuda:0 is its own device, and the heading names the file.
set -eu
cp "$CLI_DATA/siblings.json" a.json
cp "$CLI_DATA/address-reuse.json" b.json
"$VRAMREPORT" a.json b.json | grep '^## '
