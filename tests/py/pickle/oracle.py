# tests/pickle.sh runs this.
# The oracle: Python's own Unpickler, data only (find_class and
# persistent_load refused), printed in pickle_dump's canonical form.
import math, pickle, sys

sys.setrecursionlimit(20000)


import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import DataOnly


def text(b):
    out = bytearray(b'"')
    for c in b:
        if c in (0x22, 0x5C):
            out += b"\\" + bytes([c])
        elif c < 0x20:
            out += b"\\u%04x" % c
        else:
            out.append(c)
    return bytes(out + b'"')


def utf8(s):
    return s.encode("utf-8", "surrogatepass")


# Containers already printed, by id: a snapshot's frames and stacks are
# shared through the memo, one object printed thousands of times (the
# tree is alive while it is printed, so no id is reused).
_seen = {}


def canon(x):
    if isinstance(x, (list, tuple, dict)):
        got = _seen.get(id(x))
        if got is None:
            got = _seen[id(x)] = canon_new(x)
        return got
    return canon_new(x)


def canon_new(x):
    if x is None:
        return b"null"
    if x is True or x is False:
        return b"true" if x else b"false"
    if isinstance(x, int):
        return b"%d" % x if -(2**63) <= x < 2**63 else b'{"__too_large__":true}'
    if isinstance(x, float):
        if math.isnan(x):
            return b'{"__float__":"nan"}'
        if math.isinf(x):
            return b'{"__float__":"inf"}' if x > 0 else b'{"__float__":"-inf"}'
        return b"%.17g" % x
    if isinstance(x, str):
        return text(utf8(x))
    if isinstance(x, (bytes, bytearray)):
        return b'{"__bytes__":"' + bytes(x).hex().encode() + b'"}'
    if isinstance(x, (list, tuple)):
        return b"[" + b",".join(canon(v) for v in x) + b"]"
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x):
            items = sorted(((utf8(k), v) for k, v in x.items()), key=lambda kv: kv[0])
            return b"{" + b",".join(text(k) + b":" + canon(v) for k, v in items) + b"}"
        pairs = sorted(((canon(k), v) for k, v in x.items()), key=lambda kv: kv[0])
        return (b'{"__dict__":[' + b",".join(b"[" + k + b"," + canon(v) + b"]" for k, v in pairs)
                + b"]}")
    raise TypeError("not data: %r" % type(x))


def main():
    mode, path = sys.argv[1], sys.argv[2]
    out = sys.stdout.buffer
    with open(path, "rb") as f:
        data = DataOnly(f).load()
    if mode == "dump":
        out.write(canon(data) + b"\n")
        return
    # what `pickle_dump --stream segments,device_traces.*` prints
    traces = data.get("device_traces", [])
    if mode == "elements":
        for i, e in enumerate(data["segments"]):
            out.write(b"segments\t%d\t" % i + canon(e) + b"\n")
        for d, t in enumerate(traces):
            for i, e in enumerate(t):
                out.write(b"device_traces.%d\t%d\t" % (d, i) + canon(e) + b"\n")
    out.write(b"segments\t%d\n" % len(data["segments"]))
    for d, t in enumerate(traces):
        out.write(b"device_traces.%d\t%d\n" % (d, len(t)))


main()
