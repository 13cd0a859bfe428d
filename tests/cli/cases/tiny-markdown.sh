#!/usr/bin/env bash
# The hand-written trace (tests/cli/data/tiny.pt.trace.json: two A100s,
# rank 0 of 2, ProfilerStep#1, aten::linear > aten::addmm, an OOM on
# cuda:1), as Markdown on standard output (the default).
# Figures checked by hand: cuda:0 peaks at 15 GiB (1 GiB from before the
# trace + 4 + 8 + 2) at 1300 us (300 us after the first record), in
# aten::addmm; reserved peaks at 24 GiB at 1520.25 us; cuda:1 peaks at
# 18 GiB; the OOM asked for 32 GiB at 1600 us.
set -eu
cp "$CLI_DATA/tiny.pt.trace.json" .
"$VRAMREPORT" tiny.pt.trace.json
