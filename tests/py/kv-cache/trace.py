# tests/kv-cache.sh runs this: VRAMREPORT REALDATA. A real profiler trace
# of Hugging Face generate() on Qwen1.5-0.5B (tracelens-h100-qwen1.5-0.5b,
# recorded with_modules and record_shapes): each decoder layer's keys and
# values, handed to the DynamicCache, outlive their layer and are the
# peak's kv_cache (kv_modules.c, rule trace-kv-cache), not `temporary`.
# What they must be is read here from the trace's own shapes: the
# attention's projections take [batch, seq, hidden] with a [hidden,
# hidden] weight, so each layer's key and value are batch * seq * hidden
# bf16 elements, two a layer, one layer per MLP gate/up pair. Real
# encoder and vision traces (BERT, OWLv2) keep no cache: none of theirs
# is called one. One PASS/FAIL line per check.
import collections
import gzip
import json
import os
import re
import sqlite3
import subprocess
import sys

VR, REAL = sys.argv[1], sys.argv[2]
KINETO = os.path.join(REAL, "kineto")


def result(cond, what, got=None):
    print("%s\t%s%s" % ("PASS" if cond else "FAIL", what, "" if cond else "\tgot: %r" % (got,)))


def analyse(name):
    db = name + ".db"
    if os.path.exists(db):
        os.remove(db)
    p = subprocess.run([VR, os.path.join(KINETO, name), "--db", db, "-o", name + ".json",
                        "--quiet"], capture_output=True, text=True)
    doc = json.load(open(name + ".json")) if p.returncode == 0 else {}
    return sqlite3.connect(db), doc, p


QWEN = "tracelens-h100-qwen1.5-0.5b.json.gz"
events = json.load(gzip.open(os.path.join(KINETO, QWEN)))["traceEvents"]
dims = collections.Counter()
for e in events:
    d = e.get("args", {}).get("Input Dims")
    if e.get("name") == "aten::linear" and d and len(d) >= 2 and len(d[0]) == 3 and len(d[1]) == 2:
        dims[(tuple(d[0]), tuple(d[1]))] += 1
square = [k for k in dims if k[1][0] == k[1][1] == k[0][2]]
batch, seq, hidden = square[0][0] if square else (0, 0, 0)
# gate and up projections: [intermediate, hidden], two a layer
wide = [n for k, n in dims.items() if k[1][1] == hidden and k[1][0] > hidden]
layers = wide[0] // 2 if wide else 0
per = batch * seq * hidden * 2  # bf16

db, doc, p = analyse(QWEN)
rows = db.execute("SELECT module, bytes FROM allocation WHERE category_rule = 'trace-kv-cache'"
                  ).fetchall()
result(p.returncode == 0 and layers == 24 and per == 18317312,
       "qwen: the trace's shapes give %d layers of [%d, %d, %d]" % (layers, batch, seq, hidden),
       (p.returncode, p.stderr, layers, batch, seq, hidden))
by_layer = collections.Counter(re.search(r"DecoderLayer_(\d+)", m).group(1) for m, _ in rows
                               if re.search(r"DecoderLayer_(\d+)\.[^.]*Attention", m))
result(len(rows) == 2 * layers and all(b == per for _, b in rows) and
       sorted(by_layer) == sorted(str(i) for i in range(layers)) and set(by_layer.values()) == {2},
       "qwen: a key and a value of %d bytes in each layer's attention are the cache" % per,
       (len(rows), sorted(set(b for _, b in rows)), by_layer))
dev = (doc.get("devices") or [{}])[0]
cats = dev.get("peak_breakdown") or {}
result(cats.get("kv_cache") == 2 * layers * per,
       "qwen: the peak's kv_cache is %d layers x 2 x %d bytes" % (layers, per), cats)
md = subprocess.run([VR, os.path.join(KINETO, QWEN), "-o", "qwen.md", "--quiet"],
                    capture_output=True, text=True)
text = open("qwen.md").read() if md.returncode == 0 else ""
result(re.search(r"^\| kv\\_cache \| 838 MiB \| 42\.1% \|$", text, re.M) is not None and
       "kv\\_cache" not in (re.search(r"^Nothing in: (.*)$", text, re.M) or [None, ""])[1],
       "qwen: the Markdown's peak table has kv_cache 838 MiB, and 'Nothing in' does not name it",
       re.findall(r"^(?:\| (?:kv|temp).*|Nothing in.*)$", text, re.M))

for name in ("tracelens-h100-bert-small.json.gz", "tracelens-h100-owlv2-large.json.gz"):
    db, doc, p = analyse(name)
    n = db.execute("SELECT count(*) FROM allocation WHERE category = 'kv_cache'").fetchone()[0]
    mods = db.execute("SELECT count(*) FROM allocation WHERE module LIKE '%ttention%'").fetchone()[0]
    result(p.returncode == 0 and n == 0 and mods > 0,
           "%s: attention modules (%d allocations) but no cache" % (name.split(".")[0], mods),
           (p.returncode, n, mods))
