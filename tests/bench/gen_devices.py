#!/usr/bin/env python3
"""gen_devices.py N > trace.json: one PyTorch profiler trace of N CUDA
devices, four memory events each (three allocations, one free)."""
import sys, json
n=int(sys.argv[1]); GiB=1<<30; MiB=1<<20
out=sys.stdout
out.write('{"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [\n')
first=True
ts=0
for d in range(n):
    alloc=0
    for k in range(4):
        b=(100+(d*37)%900)*MiB if k<3 else -((100+(d*37)%900)*MiB)
        alloc+=b; ts+=1
        e={"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":ts,
           "args":{"Total Reserved":4*GiB,"Total Allocated":alloc,"Bytes":b,"Addr":(1<<40)+d*(1<<32)+(k%3)*GiB,"Device Id":d,"Device Type":1}}
        out.write(("" if first else ",\n")+json.dumps(e)); first=False
out.write("\n]}\n")
