# tests/bandwidth.sh runs this.
"""Writes the scenarios: NAME.csv (nvidia-smi --query-gpu CSV) and
NAME.gpustat (gpustat --watch text) of the same readings, and
expect.json: per scenario, per GPU index, the verdict and figures that
docs/bandwidth.md's rules give."""
import json

MIB = 1 << 20
TOTAL = 81920  # MiB: an A100-SXM4-80GB
NAME = "NVIDIA A100-SXM4-80GB"


def full(n):      # 95% of the GPU
    return [(78000, 95)] * n


def series(*parts):
    out = []
    for p in parts:
        out += p
    return out


idle = [(3, 0)]  # before the job: a few MiB, 0%: not the job's
scenarios = {
    # Memory near full in 18 of 20 readings, utilisation high.
    "capacity-full": {0: series([(30000, 90)] * 2, full(18))},
    # Exactly a tenth full (2 of 20): capacity-bound (>= 10%).
    "edge-tenth": {0: series([(50000, 95)] * 18, full(2))},
    # One of 11 full (9.1%): not; utilisation high: fine.
    "edge-under-tenth": {0: series([(50000, 95)] * 10, full(1))},
    # Exactly 90% used (73728 of 81920 MiB) is full.
    "edge-ninety": {0: series([(73728, 95)] * 5, [(73727, 95)] * 5)},
    # Low utilisation with room: starved (median 20).
    "starved": {0: [(30000, u) for u in (0, 10, 95, 5, 60, 0, 30, 100, 20, 40, 20)]},
    # Median exactly 70: fine (starved is under 70).
    "edge-seventy": {0: [(30000, u) for u in (50, 60, 70, 80, 90)]},
    # Median 69.5 (an even count): starved.
    "edge-under-seventy": {0: [(30000, u) for u in (50, 69, 70, 90)]},
    # High utilisation, room; idle readings before the job (which alone
    # would make the median 0) are not the job's.
    "fine": {0: series(idle * 7, [(60000, u) for u in (88, 92, 97, 100, 95, 99)])},
    # Two readings, idle: too few for a median (3 at least): unknown;
    # three: starved.
    "edge-two-readings": {0: [(30000, 0)] * 2},
    "edge-three-readings": {0: [(30000, 0)] * 3},
    # Two GPUs, both fine by their readings; the job log's OOM names GPU 1.
    "oom": {0: [(40000, 97)] * 6, 1: [(40000, 96)] * 6},
}
ooms = {"oom": {1: 1}}


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def judge(readings, n_ooms):
    floor = min(1024, TOTAL // 10)  # MiB: 1 GiB, or a tenth of the GPU
    job = [(u, p) for u, p in readings if u >= floor]
    full_n = sum(1 for u, _ in job if u * 10 >= TOTAL * 9)
    share = full_n / len(job) if job else None
    utils = [p for _, p in job if p is not None]
    med = median(utils) if utils else None
    if n_ooms or (share is not None and share >= 0.10):
        verdict = "capacity-bound"
    elif med is None or len(utils) < 3:
        verdict = "unknown"
    elif med < 70:
        verdict = "starved"
    else:
        verdict = "fine"
    return {"verdict": verdict, "readings": len(job), "full": full_n,
            "share": round(share, 4) if share is not None else None,
            "median": float(med) if med is not None else None, "ooms": n_ooms}


def write_csv(name, gpus, util=True):
    with open(name + ".csv", "w") as f:
        cols = "timestamp, name, index, memory.total [MiB], memory.used [MiB]"
        f.write(cols + (", utilization.gpu [%]" if util else "") + "\n")
        n = max(len(s) for s in gpus.values())
        for i in range(n):
            for idx, s in sorted(gpus.items()):
                if i < len(s):
                    u, p = s[i]
                    row = "2026/11/30 09:%02d:%02d.000, %s, %d, %d MiB, %d MiB" % (
                        15 + i // 60, i % 60, NAME, idx, TOTAL, u)
                    f.write(row + (", %d %%" % p if util else "") + "\n")


def write_gpustat(name, gpus):
    with open(name + ".gpustat", "w") as f:
        n = max(len(s) for s in gpus.values())
        for i in range(n):
            f.write("dgx-a100-03              Mon Nov 30 09:%02d:%02d 2026  535.104.05\n"
                    % (15 + i // 60, i % 60))
            for idx, s in sorted(gpus.items()):
                if i < len(s):
                    u, p = s[i]
                    f.write("[%d] %s | 40\u00b0C, %3d %% | %5d / %d MB | bob:python/12345(%dM)\n"
                            % (idx, NAME, p, u, TOTAL, u))


expect = {}
for name, gpus in scenarios.items():
    write_csv(name, gpus)
    write_gpustat(name, gpus)
    expect[name] = {str(i): judge(s, ooms.get(name, {}).get(i, 0)) for i, s in gpus.items()}
# No utilisation column, memory at half: unknown.
write_csv("unknown", {0: [(40000, None)] * 5}, util=False)
expect["unknown"] = {"0": {"verdict": "unknown", "readings": 5, "full": 0, "share": 0.0,
                           "median": None, "ooms": 0}}
with open("oom.log", "w") as f:
    f.write("epoch 3 step 120\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a "
            "total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, "
            "this process has 78.12 GiB memory in use. Of the allocated memory 75.00 GiB is "
            "allocated by PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.\n")
json.dump(expect, open("expect.json", "w"), sort_keys=True)
