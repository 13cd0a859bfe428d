# tests/bandwidth.sh runs this.
import json
ev, props = [], []
for dev in range(12):
    props.append({"id": dev, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85520809984})
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10,
               "tid": 10, "ts": 100, "args": {"Total Reserved": 2097152, "Total Allocated": 4096,
                                             "Bytes": 4096, "Addr": 1 + dev, "Device Id": dev,
                                             "Device Type": 1}})
for k in range(3):
    for dev in range(12):
        for host in (0, 1):
            ev.append({"ph": "X", "cat": "gpu_memcpy", "pid": 0, "tid": 7 + k % 2,
                       "name": "Memcpy HtoD (Pinned -> Device)" if host else "Memcpy DtoD (Device -> Device)",
                       "ts": 1000 + 30 * k + dev + 500 * host, "dur": 40 + dev,
                       "args": {"device": dev, "stream": 7 + k % 2, "bytes": (dev + 1) * 10**6}})
json.dump({"schemaVersion": 1, "deviceProperties": props, "traceEvents": ev}, open("many.json", "w"))
