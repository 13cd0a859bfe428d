#!/usr/bin/env python3
"""gen_prints.py RANKS STEPS > job.log: a job log of memory prints, one a
rank and step ("[rankN]: ... step S allocated: X MB, reserved: Y MB");
every 97th rank grows 50 MB a step (a leak finding each)."""
import sys

ranks, steps = int(sys.argv[1]), int(sys.argv[2])
out = sys.stdout
for s in range(1, steps + 1):
    for r in range(ranks):
        a = 8000 + (r % 7) * 100 + s * (50 if r % 97 == 0 else 0)
        out.write("[rank%d]: 2026-11-30 10:%02d:%02d,000 INFO step %d allocated: %d MB, reserved: %d MB\n"
                  % (r, s // 60, s % 60, s, a, a + 2000))
