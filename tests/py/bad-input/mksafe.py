# tests/bad-input.sh runs this.
import json, sys

def trace(names, path, extra=""):
    ev, t = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 10,
              "tid": 10, "ts": 50, "dur": 100 * len(names) + 100}], 100
    for i, n in enumerate(names):
        ev.append({"ph": "X", "cat": "cpu_op", "name": n, "pid": 10, "tid": 10, "ts": t,
                   "dur": 50, "args": {"External id": i + 1}})
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                   "pid": 10, "tid": 10, "ts": t + 10,
                   "args": {"Total Reserved": 8388608, "Total Allocated": (i + 1) * 1048576,
                            "Bytes": 1048576, "Addr": 140000000000000 + 1048576 * i,
                            "Device Id": 0, "Device Type": 1}})
        t += 100
    text = json.dumps({"schemaVersion": 1,
                       "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB",
                                             "totalGlobalMem": 85899345920}],
                       "traceEvents": ev, "traceName": "worker0"})
    # extra: raw text spliced in as the first element of traceEvents
    text = text.replace('"traceEvents": [', '"traceEvents": [' + extra, 1)
    open(path, "w", encoding="utf-8").write(text)

# (2) a 20 MiB name of two-byte characters, so the cut falls inside them
trace(["HEAD-" + "\u00e9" * (10 << 20) + "-TAIL", "aten::small"], "hugename.json")
# (7) escaped controls decode into the real characters
trace(["esc\u001b[2Jname", "csi\u009bname", "bs\bname", "rlo\u202ename", "lri\u2066x\u061c"],
      "controls.json")
# (8) one malformed record (cut too, below); (9b, 8) a clean trace
trace(["aten::empty"], "malformed.json", extra='42, ')
trace(["aten::empty"], "clean.json")
