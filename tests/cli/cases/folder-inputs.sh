#!/usr/bin/env bash
# A failed job's folder, whole: every file is offered to the readers, in
# name order, recursively. Files no reader reads are skipped and listed
# (what they look like; a summary box with no figures is only text); a broken trace
# fails, is reported, and the others still make the report: exit 3.
set -u
mkdir -p run/rank0 run/rank1 run/logs run/empty
cp "$CLI_DATA/tiny.pt.trace.json" run/rank0/trace.json
cp "$DATA/realdata/kineto/hta-v100x2-rank1-2022.pt.trace.json.gz" run/rank1/
head -c 700 "$CLI_DATA/siblings.json" >run/rank1/cut-short.json
printf '{"lr": 0.001, "batch_size": 32}\n' >run/config.json
printf 'PK\003\004 a checkpoint\n' >run/model.pt
printf 'epoch 1 loss 2.31\nepoch 2 loss 2.05\n' >run/logs/train.log
printf '|                  PyTorch CUDA memory summary, device ID 0                 |\n' >run/logs/summary.txt
printf '\037\213\010\000\000\000\000\000\000\003not deflate data\n' >run/rank1/broken.json.gz
ln -s ../rank0 run/logs/link-to-rank0
"$VRAMREPORT" run -o report.md
echo "exit $?"
sed -n '/^## Inputs/,/^## cuda/p' report.md | sed '$d'
echo "-- the same, quiet: only the failure is said"
"$VRAMREPORT" run -o report2.md -q
echo "exit $?"
echo "-- a folder with nothing readable"
"$VRAMREPORT" run/logs -o report3.md -q
echo "exit $?"
"$VRAMREPORT" run/empty -o report4.md
echo "exit $?"
ls report*
