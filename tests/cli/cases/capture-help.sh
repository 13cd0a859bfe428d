#!/usr/bin/env bash
# capture-help names the kit's file and says what a training script adds;
# --path prints the path alone. VRAMREPORT_DATADIR stands for the
# installed folder: one that holds the kit, then one that does not.
set -eu
mkdir kit
: >kit/vramreport_capture.py
VRAMREPORT_DATADIR=$PWD/kit "$VRAMREPORT" capture-help | sed "s|$PWD|.|g"
VRAMREPORT_DATADIR=$PWD/kit "$VRAMREPORT" capture-help --path | sed "s|$PWD|.|g"
echo "--- not installed:"
VRAMREPORT_DATADIR=$PWD/none "$VRAMREPORT" capture-help | sed "s|$PWD|.|g" | head -n 4
echo "--- a stray argument:"
rc=0
"$VRAMREPORT" capture-help --bogus 2>&1 || rc=$?
echo "exit $rc"
