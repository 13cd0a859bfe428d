# tests/bandwidth.sh runs this.
"""A trace of an A100-SXM4-80GB with memcpy/memset on two streams, some
overlapping, host transfers, a copy of another device, and a copy without
bytes."""
import json
ev = [{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10,
       "ts": 100, "args": {"Total Reserved": 2097152, "Total Allocated": 4096, "Bytes": 4096,
                           "Addr": 140000000000000, "Device Id": 0, "Device Type": 1}}]
def op(cat, name, ts, dur, nbytes, stream=7, device=0):
    args = {"device": device, "stream": stream}
    if nbytes is not None:
        args["bytes"] = nbytes
    ev.append({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream, "ts": ts,
               "dur": dur, "args": args})
op("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 1000, 100, 150 * 10**6)
op("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 1050, 100, 120 * 10**6, stream=8)  # overlaps
op("gpu_memset", "Memset (Device)", 1300, 20.5, 30 * 10**6)
op("gpu_memset", "Memset (Device)", 1400, 2, 4 * 10**6)  # 2 us: too short to be the best
op("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 2000, 400, 10 * 10**6)
op("gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 2500, 300, 5 * 10**6)
op("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 3000, 50, None)  # no bytes
op("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 3100, 50, 10**9, device=3)  # no such device here
json.dump({"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB",
                                 "totalGlobalMem": 85899345920}],
           "traceEvents": ev}, open("copies.json", "w"))
