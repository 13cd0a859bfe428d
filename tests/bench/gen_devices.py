#!/usr/bin/env python3
"""gen_devices.py N > trace.json: one PyTorch profiler trace of N CUDA
devices, four memory events each (three allocations, one free).
gen_devices.py --ranks N DIR: N traces in DIR, one a rank (its
distributedInfo), each of one device with the same four events.
gen_devices.py N --ooms K > trace.json: the trace of N devices, each
with K failed allocations ([OutOfMemory]) after its events."""
import sys, json, os
GiB=1<<30; MiB=1<<20

def events(d, device, ts0):
    alloc=0
    for k in range(4):
        b=(100+(d*37)%900)*MiB if k<3 else -((100+(d*37)%900)*MiB)
        alloc+=b
        yield {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[memory]","pid":1,"tid":1,"ts":ts0+k+1,
               "args":{"Total Reserved":4*GiB,"Total Allocated":alloc,"Bytes":b,"Addr":(1<<40)+device*(1<<32)+(k%3)*GiB,"Device Id":device,"Device Type":1}}

if sys.argv[1]=="--ranks":
    n=int(sys.argv[2]); d=sys.argv[3]; os.makedirs(d, exist_ok=True)
    for r in range(n):
        with open(os.path.join(d, "r%05d.json"%r), "w") as f:
            json.dump({"schemaVersion":1,"baseTimeNanoseconds":1700000000000000000,
                       "distributedInfo":{"rank":r,"world_size":n},
                       "traceEvents":list(events(r, 0, 0))}, f)
    sys.exit(0)
def ooms(d, device, ts0, k):
    for j in range(k):
        yield {"ph":"i","cat":"cpu_instant_event","s":"t","name":"[OutOfMemory]","pid":1,"tid":1,"ts":ts0+j,
               "args":{"Device Type":1,"Device Id":device,"Bytes":(5+j)*GiB,"Total Allocated":GiB,"Total Reserved":4*GiB}}

n=int(sys.argv[1])
k=int(sys.argv[3]) if len(sys.argv)>3 and sys.argv[2]=="--ooms" else 0
out=sys.stdout
out.write('{"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [\n')
first=True
for d in range(n):
    for e in list(events(d, d, 4*d))+list(ooms(d, d, 4*n+k*d, k)):
        out.write(("" if first else ",\n")+json.dumps(e)); first=False
out.write("\n]}\n")
