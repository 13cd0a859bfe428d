#!/usr/bin/env bash
# One estimate as a table: a 7B model in bf16 with AdamW, sharded with
# ZeRO-3 over 8 GPUs, a Llama-2-7B-like shape with full recompute, on H100s;
# then the same model alone on one GPU (no verdict asked: the smallest GPU
# that fits), and a usage error (one line, exit 2).
set -eu
"$VRAMREPORT" estimate --params 7e9 --dtype bf16 --optimizer adamw --gpus 8 --zero 3 \
    --batch 1 --seq 4096 --hidden 4096 --layers 32 --heads 32 --checkpointing --gpu H100-80GB
echo
"$VRAMREPORT" estimate --params 7e9 --master-weights no
echo
rc=0
"$VRAMREPORT" estimate --params 7e9 --gpu A100 || rc=$?
echo "exit $rc"
