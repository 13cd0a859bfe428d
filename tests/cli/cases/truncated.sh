#!/usr/bin/env bash
# A trace cut at byte 3000 (inside its 11th record, as a killed job leaves
# it): exit 0, a warning on stderr, and the report says where it was cut.
# By hand: the 10 records before the cut hold 3 cuda:0 events (peak
# 15 GiB at 300 us) and 1 cuda:1 event (18 GiB at 250 us).
set -eu
head -c 3000 "$CLI_DATA/tiny.pt.trace.json" >cut.json
"$VRAMREPORT" cut.json -o cut.md
cat cut.md
