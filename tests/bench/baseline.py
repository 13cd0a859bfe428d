#!/usr/bin/env python3
"""baseline.py trace|snapshot FILE: the Python baseline that tests/bench/run.sh
and snapshot.sh time beside vramreport, on the same generated file.

It does what a user without vramreport would script first, in the standard
library only, and nothing more (no report): the figure it prints is the one
vramreport must agree with, so the comparison is of equal work's first step.

  trace     json.load, then the highest "Total Allocated" over the [memory]
            events, per device (a trace of PyTorch before 1.10 has no
            "Total Allocated": then the running sum of "Bytes").
  snapshot  pickle.load, then memory_viz's (and Mosaic's) first step: a
            replay of device_traces with a dict of live blocks by address,
            adding a block on alloc and removing it on free_completed, and
            the peak of the allocated bytes. Blocks live at the snapshot
            that the trace never saw allocated (its ring buffer wrapped) are
            live from the start, as memory_viz counts them.

Prints one line a device, "device=N peak_allocated=BYTES", device order.
A gzip file (by its magic) is read through gzip, as vramreport would.
"""
import gzip
import json
import pickle
import sys


def open_input(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def trace_peaks(path):
    with open_input(path) as f:
        doc = json.load(f)
    events = doc.get("traceEvents", []) if isinstance(doc, dict) else doc
    peaks, running = {}, {}
    for e in events:
        if e.get("name") != "[memory]":
            continue
        args = e.get("args", {})
        dev = args.get("Device Id", 0)
        if args.get("Device Type", 1) != 1 or dev < 0:
            continue  # the host's memory (CPU), not a GPU's
        if "Total Allocated" in args:
            v = args["Total Allocated"]
        else:
            v = running[dev] = running.get(dev, 0) + args.get("Bytes", 0)
        if v > peaks.get(dev, -1):
            peaks[dev] = v
    return peaks


def replay(trace, live_at_end):
    """The peak of allocated bytes over one device's trace entries."""
    live, cur, peak = {}, 0, 0
    for e in trace:
        action = e["action"]
        if action == "alloc":
            live[e["addr"]] = e["size"]
            cur += e["size"]
            if cur > peak:
                peak = cur
        elif action == "free_completed":
            cur -= live.pop(e["addr"], 0)
    # allocated before the trace began (not freed in it): live throughout
    before = max(0, live_at_end - cur)
    return peak + before


def snapshot_peaks(path):
    with open_input(path) as f:
        snap = pickle.load(f)
    live_at_end = {}
    for seg in snap.get("segments", []):
        dev = seg.get("device", 0)
        live_at_end[dev] = live_at_end.get(dev, 0) + sum(
            b["size"] for b in seg.get("blocks", []) if b.get("state") == "active_allocated")
    return {dev: replay(trace, live_at_end.get(dev, 0))
            for dev, trace in enumerate(snap.get("device_traces", [])) if trace}


def main(argv):
    if len(argv) != 3 or argv[1] not in ("trace", "snapshot"):
        sys.stderr.write("usage: baseline.py trace|snapshot FILE\n")
        return 2
    peaks = trace_peaks(argv[2]) if argv[1] == "trace" else snapshot_peaks(argv[2])
    if not peaks:
        sys.stderr.write("baseline.py: %s: no GPU allocation found\n" % argv[2])
        return 1
    for dev in sorted(peaks):
        print("device=%d peak_allocated=%d" % (dev, peaks[dev]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
