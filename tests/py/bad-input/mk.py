# tests/bad-input.sh runs this.
import sys

def trace(name=b"aten::empty", event_extra=b"", ext=b"7", args_extra=b""):
    return (
        b'{"schemaVersion": 1,\n'
        b' "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920}],\n'
        b' "traceEvents": [\n'
        b'  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 10, "tid": 10, "ts": 90, "dur": 100},\n'
        b'  {"ph": "X", "cat": "cpu_op", "name": "' + name + b'", "pid": 10, "tid": 10, "ts": 100, "dur": 20'
        + event_extra + b', "args": {"External id": ' + ext + b', "Sequence number": 5}},\n'
        b'  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 105,'
        b' "args": {"Total Reserved": 2097152, "Total Allocated": 4096, "Bytes": 4096, "Addr": 140000000000000,'
        b' "Device Id": 0, "Device Type": 1' + args_extra + b'}},\n'
        b'  {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10, "tid": 10, "ts": 150,'
        b' "args": {"Total Reserved": 2097152, "Total Allocated": 0, "Bytes": -4096, "Addr": 140000000000000,'
        b' "Device Id": 0, "Device Type": 1}}\n'
        b' ],\n'
        b' "traceName": "worker0"}\n')

faults = {
    "invalid_utf8": trace(name=b"aten::\xff\xfeempty"),
    "control_char": trace(name=b"aten::a\tb\x01c"),
    "int_overflow": trace(ext=b"99999999999999999999999"),
    "unknown_key": trace(event_extra=b', "zz_new_key": {"a": [1, 2]}'),
    "repaired_quote": trace(name=b'aten::foo"bar'),
}
for kind, data in faults.items():
    open("fault-%s.json" % kind, "wb").write(data)

# Names that are markup in Markdown and HTML, each owning an allocation.
import json
names = ["<script>alert(1)</script>", "| pipes |", "**bold**"]
ev, t = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 10, "tid": 10,
          "ts": 50, "dur": 400}], 100
for i, n in enumerate(names):
    ev.append({"ph": "X", "cat": "cpu_op", "name": n, "pid": 10, "tid": 10, "ts": t, "dur": 50,
               "args": {"External id": i + 1}})
    ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10,
               "tid": 10, "ts": t + 10,
               "args": {"Total Reserved": 8388608, "Total Allocated": (i + 1) * 1048576,
                        "Bytes": 1048576, "Addr": 140000000000000 + 1048576 * i,
                        "Device Id": 0, "Device Type": 1}})
    t += 100
json.dump({"schemaVersion": 1,
           "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB",
                                 "totalGlobalMem": 85899345920}],
           "traceEvents": ev, "traceName": "worker0"}, open("markup.json", "w"), indent=1)
