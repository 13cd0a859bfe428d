#!/usr/bin/env bash
# tests/injection.sh: hostile text in every kind of input comes out inert in
# HTML, Markdown and JSON alike. The inputs (a Kineto trace, an
# allocator snapshot in JSON form, a job log with a traceback and an OOM,
# nvidia-smi --query-compute-apps CSV) carry op names, stack frames, file
# paths, process and GPU names holding <script>, quotes, &amp;, javascript:
# and http:// URLs, @someone, ![x](http://evil), | table breakers | and
# backticks. The same inputs with plain names are the reference: what a
# report of them holds (tags, attributes, links) is all a hostile one may
# hold.
#   HTML: no <script>, no tag, attribute or link the plain report lacks, no
#     on* attribute; the hostile text shows as text (or a tooltip), intact
#     but for invisible joiners (U+2060 and kin, which break @mentions).
#   Markdown, parsed as GitHub does (libcmark-gfm with its table and autolink
#     extensions, through python3's ctypes): no raw HTML, no image, no link
#     the plain report lacks (a bare URL GitHub would autolink is one), no
#     @mention outside code (GitHub's pattern), every table row with its
#     header's cell count, the hostile text visible and intact.
#   JSON: parses, and holds every hostile string exactly, as a value.
set -eu
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
cd "$TMP"
need python3 || true

cat >mk.py <<'PYEOF'
"""Writes the four inputs to DIR, with hostile names or plain ones."""
import json, os, sys

EVIL = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "' onmouseover='alert(3)",
    "a &amp; b & c",
    "javascript:alert(4)",
    "see http://evil.example/x",
    "ping @someone",
    "![x](http://evil.example/p.png)",
    "| table | breakers |",
    "`tick` ``fence``",
]
GPU_EVIL = 'A100 "<i>x</i>" & @someone'
# A directory the inputs sit in: its path shows in every report.
DIR_EVIL = "<script>alert(5)</script> \"q\" 'q' &amp; @someone"

def write(kind, out):
    names = EVIL if kind == "evil" else ["op_%d" % i for i in range(len(EVIL))]
    gpu = GPU_EVIL if kind == "evil" else "A100 plain"
    path = os.path.join(out, DIR_EVIL if kind == "evil" else "plain dir")
    os.makedirs(path, exist_ok=True)
    MiB = 1 << 20
    # A Kineto trace: each op owns an allocation that stays live to the peak.
    ev = [{"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": names[0]}},
          {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 10, "tid": 10,
           "ts": 50, "dur": 2000}]
    t = 100
    for i, n in enumerate(names):
        ev.append({"ph": "X", "cat": "cpu_op", "name": n, "pid": 10, "tid": 10, "ts": t, "dur": 50,
                   "args": {"External id": i + 1}})
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 10,
                   "tid": 10, "ts": t + 10,
                   "args": {"Total Reserved": 64 * MiB, "Total Allocated": (i + 1) * MiB,
                            "Bytes": MiB, "Addr": 140000000000000 + MiB * i,
                            "Device Id": 0, "Device Type": 1}})
        t += 100
    json.dump({"schemaVersion": 1,
               "deviceProperties": [{"id": 0, "name": gpu, "totalGlobalMem": 85899345920}],
               "traceEvents": ev, "traceName": "worker0"},
              open(os.path.join(path, "trace.json"), "w"), indent=1)
    # An allocator snapshot (JSON form): one block per name, its frames the
    # names and a path; the trace allocates them in turn.
    blocks, trace, addr = [], [], 1 << 40
    for i, n in enumerate(names):
        frames = [{"filename": os.path.join("/home/u", names[(i + 1) % len(names)], "train.py"),
                   "line": 10 + i, "name": n}]
        blocks.append({"address": addr + i * 2 * MiB, "size": 2 * MiB, "requested_size": 2 * MiB,
                       "state": "active_allocated", "frames": frames})
        trace.append({"action": "alloc", "addr": addr + i * 2 * MiB, "size": 2 * MiB, "stream": 0,
                      "time_us": 1700000000000000 + 1000 * i, "frames": frames})
    seg = {"device": 0, "address": addr, "total_size": 2 * MiB * len(names),
           "allocated_size": 2 * MiB * len(names), "active_size": 2 * MiB * len(names),
           "requested_size": 2 * MiB * len(names), "stream": 0, "segment_type": "large",
           "segment_pool_id": [0, 0], "is_expandable": False, "frames": [], "blocks": blocks}
    json.dump({"segments": [seg], "device_traces": [trace]},
              open(os.path.join(path, "snapshot.json"), "w"))
    # A job log: a traceback through frames with the names, then an OOM.
    lines = ["step 1 loss 2.31", "Traceback (most recent call last):"]
    for i, n in enumerate(names):
        lines.append('  File "/home/u/%s/train.py", line %d, in %s' % (names[(i + 3) % len(names)], 20 + i, n))
        lines.append("    x = layer(x)")
    lines.append("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a "
                 "total capacity of 79.15 GiB of which 3.00 MiB is free. Including non-PyTorch memory, this "
                 "process has 79.14 GiB memory in use. Of the allocated memory 77.00 GiB is allocated by "
                 "PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated.")
    open(os.path.join(path, "job.log"), "w").write("\n".join(lines) + "\n")
    # nvidia-smi --query-compute-apps CSV: one process per name.
    rows = ["timestamp, gpu_name, gpu_bus_id, gpu_serial, gpu_uuid, pid, process_name, used_gpu_memory [MiB]"]
    for i, n in enumerate(names):
        rows.append("2026/07/14 08:12:%02d.500, %s, 00000000:00:09.0, 0000000000000, "
                    "GPU-6a5d1c2e-0000-4000-8000-000000000001, %d, %s, %d MiB" % (10 + i, gpu, 1000 + i, n, 100 + i))
    open(os.path.join(path, "smi.csv"), "w").write("\n".join(rows) + "\n")
    print(path)

if __name__ == "__main__":
    write(sys.argv[1], sys.argv[2])
PYEOF
evil_dir=$("$PYTHON" mk.py evil in-evil) && plain_dir=$("$PYTHON" mk.py plain in-plain) ||
    { fail "python3 wrote the inputs"; finish; }

inputs="trace.json snapshot.json job.log smi.csv"
for kind in evil plain; do
    [ $kind = evil ] && dir=$evil_dir || dir=$plain_dir
    mkdir -p "out-$kind"
    for f in $inputs; do
        for fmt in html md json; do
            vr_run "out-$kind/$f.$fmt" -q "$dir/$f" -o "out-$kind/$f.$fmt"
            if [ "$rc" -eq 0 ] && [ -s "out-$kind/$f.$fmt" ]; then
                [ $kind = evil ] && pass "$f: the $fmt report is written"
            else
                fail "$f ($kind names): the $fmt report is written" "exit $rc: $(head -c 300 "out-$kind/$f.$fmt.err")"
            fi
        done
    done
done

cat >check.py <<'PYEOF'
import ctypes, ctypes.util, html.parser, json, re, sys
import xml.etree.ElementTree as ET
sys.path.insert(0, ".")
from mk import EVIL, GPU_EVIL, DIR_EVIL

INPUTS = sys.argv[1:]
ZW = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def say(ok, desc, detail=""):
    print("PASS\t%s" % desc if ok else "FAIL\t%s\t%s" % (desc, str(detail).replace("\t", " ").replace("\n", " ")[:600]))


def read(kind, name):
    try:
        return open("out-%s/%s" % (kind, name), encoding="utf-8").read()
    except OSError:
        return None


# ---- HTML ---------------------------------------------------------------------
class Page(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.attrs, self.links, self.onattrs, self.text = set(), set(), set(), [], []
        self.skip = 0
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "style":
            self.skip += 1
        for k, v in attrs:
            self.attrs.add((tag, k))
            if k.startswith("on"):
                self.onattrs.append("%s %s=%r" % (tag, k, v))
            if k in ("href", "src", "xlink:href", "action", "formaction"):
                self.links.add(v)
            if k in ("title", "aria-label", "alt") and v:
                self.text.append(" %s " % v)  # shown too: as a tooltip, or read out

    def handle_endtag(self, tag):
        if tag == "style":
            self.skip = max(0, self.skip - 1)

    def handle_data(self, data):
        if not self.skip:
            self.text.append(data)

    def plain(self):
        """The text a reader sees (invisible joiners that break mentions dropped)."""
        return re.sub(r"\s+", " ", "".join(self.text)).translate(ZW)


# ---- Markdown, parsed by GitHub's parser ----------------------------------------
def cmark():
    lib = ctypes.CDLL(ctypes.util.find_library("cmark-gfm") or "libcmark-gfm.so")
    ext = ctypes.CDLL(ctypes.util.find_library("cmark-gfm-extensions") or "libcmark-gfm-extensions.so")
    ext.cmark_gfm_core_extensions_ensure_registered()
    lib.cmark_parser_new.restype = ctypes.c_void_p
    lib.cmark_find_syntax_extension.restype = ctypes.c_void_p
    lib.cmark_find_syntax_extension.argtypes = [ctypes.c_char_p]
    lib.cmark_parser_attach_syntax_extension.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    lib.cmark_parser_feed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.cmark_parser_finish.restype = ctypes.c_void_p
    lib.cmark_parser_finish.argtypes = [ctypes.c_void_p]
    lib.cmark_render_xml.restype = ctypes.c_void_p
    lib.cmark_render_xml.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.free = ctypes.CDLL(None).free
    lib.free.argtypes = [ctypes.c_void_p]

    def parse(md):
        p = lib.cmark_parser_new(0)
        for name in (b"table", b"autolink", b"strikethrough", b"tagfilter", b"tasklist"):
            lib.cmark_parser_attach_syntax_extension(p, lib.cmark_find_syntax_extension(name))
        data = md.encode("utf-8")
        lib.cmark_parser_feed(p, data, len(data))
        doc = lib.cmark_parser_finish(p)
        out = lib.cmark_render_xml(doc, 0)
        xml = ctypes.string_at(out).decode("utf-8")
        lib.free(out)
        xml = re.sub(r"<!DOCTYPE[^>]*>", "", xml)
        return ET.fromstring(re.sub(r' xmlns="[^"]*"', "", xml, count=1))
    return parse


# GitHub's mention pattern (html-pipeline's MentionFilter), applied to text
# outside code and links.
MENTION = re.compile(r"(?:^|\W)@((?>[a-z0-9][a-z0-9-]*))(?!/)(?=\.+[ \t\W]|\.+$|[^0-9a-zA-Z_.]|$)", re.I) \
    if sys.version_info >= (3, 11) else re.compile(r"(?:^|\W)@([a-z0-9][a-z0-9-]*)(?!/)(?=\.+[ \t\W]|\.+$|[^0-9a-zA-Z_.]|$)", re.I)


class Md:
    def __init__(self, parse, text):
        self.src = text
        self.root = parse(text)
        self.kinds = {}
        self.links = set()
        self.mentions = []
        self.visible = []
        self.walk(self.root, False)

    def walk(self, node, in_code_or_link):
        self.kinds[node.tag] = self.kinds.get(node.tag, 0) + 1
        if node.tag in ("link", "image"):
            self.links.add(node.get("destination"))
        run = []
        for child in list(node):
            if child.tag in ("text", "softbreak", "linebreak"):
                t = child.text or (" " if child.tag != "text" else "")
                run.append(t)
                self.visible.append(t)
                self.kinds[child.tag] = self.kinds.get(child.tag, 0) + 1
                continue
            self.check_run(run, in_code_or_link)
            run = []
            if child.tag in ("code", "code_block", "html_inline", "html_block"):
                self.kinds[child.tag] = self.kinds.get(child.tag, 0) + 1
                self.visible.append(child.text or "")
                continue
            self.walk(child, in_code_or_link or child.tag in ("link", "image"))
        self.check_run(run, in_code_or_link)
        if node.tag in ("paragraph", "heading", "table_cell", "item"):
            self.visible.append(" ")

    def check_run(self, run, in_code_or_link):
        if run and not in_code_or_link:
            text = "".join(run)
            self.mentions += [text[max(0, m.start() - 20):m.end() + 10] for m in MENTION.finditer(text)]

    def plain(self):
        return re.sub(r"\s+", " ", "".join(self.visible)).translate(ZW)

    def broken_rows(self):
        """Rows whose count of unescaped pipes differs from their table's header."""
        bad, table = [], None
        for line in self.src.split("\n") + [""]:
            if line.lstrip().startswith("|"):
                n = len(re.findall(r"(?<!\\)\|", line))
                if table is None:
                    table = n
                elif n != table:
                    bad.append(line.strip()[:120])
            else:
                table = None
        return bad


def json_strings(x, out):
    if isinstance(x, str):
        out.add(x)
    elif isinstance(x, dict):
        for k, v in x.items():
            json_strings(k, out)
            json_strings(v, out)
    elif isinstance(x, list):
        for v in x:
            json_strings(v, out)
    return out


try:
    parse = cmark()
except OSError as e:
    parse = None
    say(False, "libcmark-gfm loads (to parse the Markdown as GitHub does)", e)

shown_html, shown_md, held_json = {}, {}, {}
for f in INPUTS:
    # HTML
    evil, plain = read("evil", f + ".html"), read("plain", f + ".html")
    if evil and plain:
        e, p = Page(evil), Page(plain)
        say("<script" not in evil.lower(), "%s, HTML: no <script anywhere" % f,
            re.findall(r".{0,40}<script.{0,40}", evil, re.I)[:3])
        say(e.tags <= p.tags, "%s, HTML: no tag the plain report lacks" % f, sorted(e.tags - p.tags))
        say(e.attrs <= p.attrs and not e.onattrs, "%s, HTML: no attribute the plain report lacks (attribute injection)" % f,
            sorted(e.attrs - p.attrs) + e.onattrs[:3])
        say(e.links <= p.links, "%s, HTML: no link from the input (<a href>, src)" % f, sorted(e.links - p.links)[:5])
        text = e.plain()
        for s in EVIL + [GPU_EVIL, DIR_EVIL]:
            shown_html.setdefault(s, []).append(f) if s in text else None
    # Markdown
    evil, plain = read("evil", f + ".md"), read("plain", f + ".md")
    if evil and plain and parse:
        e, p = Md(parse, evil), Md(parse, plain)
        raw = {k: v for k, v in e.kinds.items() if k in ("html_inline", "html_block")}
        say(not raw, "%s, Markdown: no raw HTML (GitHub would render it)" % f,
            "%s; e.g. %s" % (raw, re.findall(r"(?<![\\`])<[a-zA-Z/!][^>\n]{0,40}>?", evil)[:3]))
        say(e.kinds.get("image", 0) <= p.kinds.get("image", 0), "%s, Markdown: no image from the input" % f,
            "%d images" % e.kinds.get("image", 0))
        say(e.links <= p.links, "%s, Markdown: no link from the input (bare URLs GitHub autolinks included)" % f,
            sorted(x for x in e.links - p.links if x is not None)[:5])
        say(not e.mentions, "%s, Markdown: no @mention GitHub would notify" % f, e.mentions[:3])
        bad = e.broken_rows()
        say(not bad, "%s, Markdown: every table row has its header's cell count" % f, bad[:3])
        text = e.plain()
        for s in EVIL + [GPU_EVIL, DIR_EVIL]:
            shown_md.setdefault(s, []).append(f) if s in text else None
    # JSON
    evil = read("evil", f + ".json")
    if evil:
        try:
            d = json.loads(evil)
            say(True, "%s, JSON: parses" % f)
        except ValueError as x:
            say(False, "%s, JSON: parses" % f, x)
            continue
        values = json_strings(d, set())
        for s in EVIL + [GPU_EVIL]:
            if s in values:
                held_json.setdefault(s, []).append(f)
        path = [v for v in values if DIR_EVIL in v]
        say(bool(path), "%s, JSON: the input's path holds the hostile directory name exactly" % f)

for s in EVIL + [GPU_EVIL, DIR_EVIL]:
    say(s in shown_html, "HTML shows %r as text, intact" % s)
    say(s in shown_md, "Markdown shows %r as text, intact (as GitHub renders it)" % s)
for s in EVIL + [GPU_EVIL]:
    say(s in held_json, "JSON holds %r exactly as a value" % s)
print("# shown in HTML by: %s" % {s: v for s, v in shown_html.items()})
print("# held in JSON by: %s" % {s: v for s, v in held_json.items()})
PYEOF
"$PYTHON" check.py $inputs >check.out 2>check.err || fail "check.py ran" "$(tail -5 check.err)"
tap_lines check.out
finish
