#!/usr/bin/env python3
"""Rebuilds the fuzz seed corpus (tests/fuzz/corpus/) from the real traces in
tests/data/realdata/kineto/: each seed is a slice of one trace, made
well-formed again by closing its event list and object, and kept under
20 KB. Events are copied byte for byte; only the huge "metadata" member of
the TraceLens traces is cut down.

    python3 tests/fuzz/make-corpus.py [SRCDIR]
"""
import gzip
import json
import os
import re
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
REAL = os.path.join(SRC, "tests", "data", "realdata", "kineto")
OUT = os.path.join(SRC, "tests", "fuzz", "corpus")
LIMIT = 20000


def load(name):
    with gzip.open(os.path.join(REAL, name), "rt", encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def split_events(text, stop_after_bytes=None):
    """Yields (start, end) of each element of traceEvents, by bracket depth
    (strings skipped), as the scanner would see them."""
    key = text.index('"traceEvents"')
    i = text.index("[", key) + 1
    tok = re.compile(r'["{}\[\]]')
    string = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
    depth, start = 0, None
    while True:
        m = tok.search(text, i)
        if not m:
            return
        c, p = m.group(), m.start()
        if c == '"':
            i = string.match(text, p).end()
            continue
        i = p + 1
        if c in "{[":
            if depth == 0:
                start = p
            depth += 1
        else:
            if depth == 0:  # the closing ']' of traceEvents
                return
            depth -= 1
            if depth == 0:
                yield start, i
                if stop_after_bytes is not None and i > stop_after_bytes:
                    return


def tail_members(doc, after_events):
    """The top-level members that follow traceEvents, as JSON text."""
    keys = list(doc.keys())
    k = keys.index("traceEvents")
    members = keys[k + 1:] if after_events else keys[:k]
    return members


def member_text(key, value, indent):
    body = json.dumps(value, indent=indent)
    body = body.replace("\n", "\n" + " " * indent)
    return " " * indent + json.dumps(key) + ": " + body


def build(doc, events, indent=2, metadata_keep=None):
    """A well-formed trace: members before traceEvents, the events (raw
    text), the members after it, in the original order."""
    parts = []
    keys = list(doc.keys())
    k = keys.index("traceEvents")
    for key in keys[:k]:
        v = doc[key]
        if key == "metadata" and metadata_keep is not None:
            v = {m: v[m] for m in metadata_keep if m in v}
        parts.append(member_text(key, v, indent))
    parts.append(" " * indent + '"traceEvents": [\n' + ",\n".join(events) + "\n" + " " * indent + "]")
    for key in keys[k + 1:]:
        parts.append(member_text(key, doc[key], indent))
    return "{\n" + ",\n".join(parts) + "\n}\n"


def pick(text, spans, want, budget):
    """Raw event texts: those at indices in `want` (in order), within budget."""
    out, size = [], 0
    for idx in want:
        s, e = spans[idx]
        ev = text[s:e]
        if len(ev) > 1500:
            continue
        if size + len(ev) > budget:
            break
        out.append(ev)
        size += len(ev) + 2
    return out


def first(spans, text, pred, start=0):
    for n in range(start, len(spans)):
        s, e = spans[n]
        if pred(text[s:e]):
            return n
    return None


def is_gpu_memory(ev):
    return '"[memory]"' in ev and not re.search(r'"Device Type":\s*0\b', ev)


def kineto_seed(name, out, budget, indent, metadata_keep=None, extra_preds=()):
    text = load(name)
    doc = json.loads(text)
    spans = list(split_events(text))
    m = first(spans, text, is_gpu_memory)
    want = list(range(0, 4))
    if m is not None:
        want += list(range(max(4, m - 6), min(len(spans), m + 40)))
    for pred in extra_preds:
        n = first(spans, text, pred)
        if n is not None and n not in want:
            want.insert(4, n)
    events = pick(text, spans, want, budget)
    seed = build(doc, events, indent, metadata_keep)
    json.loads(seed)
    write(out, seed)
    return text, doc, spans


def write(name, data):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    assert len(data) < LIMIT, (name, len(data))
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
    print(f"{name}: {len(data)} bytes")


def main():
    os.makedirs(OUT, exist_ok=True)
    kernel = lambda ev: '"cat": "kernel"' in ev or '"cat": "Kernel"' in ev
    flow = lambda ev: '"ph": "s"' in ev or '"ph": "f"' in ev
    meta = lambda ev: '"ph": "M"' in ev
    step = lambda ev: "ProfilerStep#" in ev and len(ev) < 1500

    # 2021: tb_plugin sample, old [memory] args, cat "Operator", string tids.
    kineto_seed("tbplugin-v100-resnet50-2021.pt.trace.json.gz", "kineto-2021-tbplugin.json",
                14000, 2, extra_preds=(kernel, meta, step))
    # 2022: HTA, Addr and totals, distributedInfo, flows.
    text, doc, spans = kineto_seed("hta-v100x2-rank1-2022.pt.trace.json.gz",
                                   "kineto-2022-hta.json", 14000, 2,
                                   extra_preds=(kernel, flow, meta, step))
    # The same trace cut inside an event (a job killed while writing).
    m = first(spans, text, is_gpu_memory)
    s, e = spans[m + 3]
    body = ",\n".join(text[a:b] for a, b in spans[m:m + 3])
    head = text[:text.index('"traceEvents"')]
    trunc = head + '"traceEvents": [\n' + body + ",\n" + text[s:s + (e - s) // 2]
    write("kineto-2022-hta-truncated.json", trunc)
    # 2024: TraceLens H100 and MI300X (ROCm, Device Type 6), fractional ts,
    # baseTimeNanoseconds after the events.
    keep = ["num_errors", "errors", "timestamp", "started_by"]
    kineto_seed("tracelens-h100-bert-small.json.gz", "kineto-2024-h100.json", 13000, 2,
                metadata_keep=keep, extra_preds=(kernel, flow, meta))
    kineto_seed("tracelens-mi300x-bert-small.json.gz", "kineto-2024-mi300x.json", 13000, 2,
                metadata_keep=keep, extra_preds=(kernel, flow, meta))

    # Chrome's bare-array form: a few events of the H100 trace.
    text = load("tracelens-h100-bert-small.json.gz")
    spans = list(split_events(text))
    m = first(spans, text, is_gpu_memory)
    events = pick(text, spans, [0, 1] + list(range(m - 3, m + 6)), 6000)
    bare = "[\n" + ",\n".join(events) + "\n]\n"
    json.loads(bare)
    write("bare-array.json", bare)

    # export_memory_timeline raw rows: [[t, action, bytes, category], ...]
    text = load("hta-memory-timeline.raw.json.gz")
    rows = json.loads(text)
    pre = [r for r in rows if r[0] == -1][:40]
    timed = [r for r in rows if r[0] != -1][:260]
    raw = json.dumps(pre + timed)
    json.loads(raw)
    write("memory-timeline.raw.json", raw)


if __name__ == "__main__":
    main()
