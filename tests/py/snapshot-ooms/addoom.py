# tests/snapshot-ooms.sh runs this.
"""A real snapshot with two oom entries added to cuda:0's trace: one in
the middle, one at the end."""
import pickle, sys
import os
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle
d = load_pickle(sys.argv[1])
trace = d["device_traces"][0]
def oom(after):
    e = dict(after)
    e.update(action="oom", size=512 << 20, device_free=1 << 20, stream=0)
    e.pop("addr", None)
    return e
mid = len(trace) // 2
trace.insert(mid + 1, oom(trace[mid]))
trace.append(oom(trace[-1]))
pickle.dump(d, open(sys.argv[2], "wb"), protocol=4)
