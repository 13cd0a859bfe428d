"""tests/stacks-html.sh's oracle: the HTML report's top sites show the
short stack (memory_viz's frame filter, as the Markdown's), the full
stack one click away, and say how many frames the short one left out.
The filter is written here again from _memory_viz.py's rules, not taken
from vramreport. argv: vramreport, the source directory."""
import html
import json
import os
import re
import sys

from vrtest import result, run_vr

VR, SRC = sys.argv[1], sys.argv[2]
SNAP = os.path.join(SRC, "tests/data/realdata/snapshot")
INPUTS = [os.path.join(SNAP, n) for n in ("cs336-bcrafton.pickle", "cs336-magma27-training.pickle",
                                          "cs336-silmont-forward-bf16.pickle",
                                          "cs336-silmont-segments.pickle")]
SHORT = 12

# _memory_viz.py's _frame_filter, and the C++ frames memory_viz drops
# (the unwinder, the dispatcher, CPython's loop, the caching allocator).
CXX = ("unwind::unwind", "CapturedTraceback::gather", "gather_with_cpp", "CUDACachingAllocator",
       "core/boxing", "/Register", "/Redispatch", "__libc_start_main", "PyEval_", "PyObject_",
       "PyFunction_", "ceval.c", "pythonrun.c", "Objects/call.c", "Objects/methodobject.c")
WRAPPER = re.compile(r"torch[/\\]nn[/\\]modules[/\\]module\.py:\d+ in _(wrapped_)?call_impl$")


def filtered(f):
    return (any(c in f for c in CXX) or f.startswith("Register") or bool(WRAPPER.search(f))
            or re.search(r"[/\\]threading\.py:", f) is not None or "<frozen " in f
            or "<string>:" in f)


def kinds(frames):
    """The words the report must name for the frames it left out, in its
    order (threading, wrappers, CPython, C++)."""
    words = []
    if any(re.search(r"[/\\]threading\.py:", f) for f in frames):
        words.append("threading")
    if any(WRAPPER.search(f) for f in frames):
        words.append("module call wrappers")
    if any("<frozen " in f or "<string>:" in f for f in frames):
        words.append("CPython internals")
    if any(any(c in f for c in CXX) or f.startswith("Register") for f in frames):
        words.append("the allocator's and dispatcher's C++ frames")
    return ", ".join(words)


def items(ol):
    """An <ol>'s frames (unescaped) and its "… N more", if any."""
    frames = [html.unescape(x) for x in re.findall(r"<li(?: class=\"vr-filtered\")?><code>(.*?)</code></li>", ol)]
    more = re.search(r"<li class=\"vr-more\">\u2026 (\d+) more</li>", ol)
    return frames, int(more.group(1)) if more else 0


ROOT = re.compile(r"files are named from the folder they share,\s+<code>(.*?)</code>", re.S)


def root_at(page, pos):
    """The folder the page strips from the frames of the device section
    holding pos (said under its heading, or once for the report), or ''."""
    head = page.rfind("<h2", 0, pos)
    said = [m for m in ROOT.finditer(page) if head < m.start() < pos]
    if said:
        return html.unescape(said[-1].group(1))
    once = [m for m in ROOT.finditer(page) if "The job" in page[max(0, m.start() - 40):m.start()]]
    return html.unescape(once[0].group(1)) if once else ""


def sites_of(page):
    """Each top site's <details>: (summary frame, its short part, the
    full stack's summary and list or None, the folder stripped)."""
    out = []
    for m in re.finditer(r"<details class=\"vr-site\">(.*?)</details>\n(?=<details class=\"vr-site\">|</div>)",
                         page, re.S):
        block = m.group(1)
        full = re.search(r"<details class=\"vr-full-stack\"><summary>(.*?)</summary>\n(.*?)</details>", block, re.S)
        short = block[:full.start()] if full else block
        out.append((short, (full.group(1), full.group(2)) if full else None, root_at(page, m.start())))
    return out


rc, _, err = run_vr(VR, *INPUTS, "-o", "s.json")
rc2, _, err2 = run_vr(VR, *INPUTS, "-o", "s.html")
rc3, _, err3 = run_vr(VR, *INPUTS, "-o", "s.md")
result(rc == rc2 == rc3 and rc in (0, 1, 2), "vramreport wrote the JSON, HTML and Markdown", err + err2 + err3)
doc = json.load(open("s.json", encoding="utf-8"))
page = open("s.html", encoding="utf-8").read()
md = open("s.md", encoding="utf-8").read()

want_sites = [s for d in doc["devices"] for s in d.get("top_sites", [])]
got_sites = sites_of(page)
result(len(got_sites) == len(want_sites) > 0, "one <details> per top site",
       "%d in the HTML, %d in the JSON" % (len(got_sites), len(want_sites)))

bad_short, bad_full, bad_count, bad_more, bad_summary = [], [], [], [], []
n_filtered = n_full = 0
for (short, full, root), site in zip(got_sites, want_sites):
    # the page names the job's files from the folder they share
    stack = [f[len(root):] if root and f.startswith(root) else f for f in site.get("stack") or []]
    if not stack:
        continue
    kept = [f for f in stack if not filtered(f)]
    drop = len(stack) - len(kept)
    n_filtered += drop
    m = re.search(r"<ol class=\"vr-stack\">\n(.*?)</ol>", short, re.S)
    frames, more = items(m.group(1)) if m else ([], 0)
    if frames != kept[:SHORT] or any(filtered(f) for f in frames):
        bad_short.append((site.get("frame"), frames[:3], kept[:3]))
    all_frames = site.get("stack_depth", len(stack)) - site.get("stack_skipped", 0)
    if more != all_frames - len(frames) - drop:
        bad_more.append((site.get("frame"), more, all_frames - len(frames) - drop))
    said = re.search(r"(\d+) frames? left out: ([^<]*)\.</p>", short)
    if (int(said.group(1)) if said else 0) != drop:
        bad_count.append((site.get("frame"), said.group(1) if said else None, drop))
    want_kinds = kinds([f for f in stack if filtered(f)])
    if said and html.unescape(said.group(2)) != want_kinds:
        bad_count.append((site.get("frame"), said.group(2), want_kinds))
    if drop or len(kept) > SHORT:
        if not full:
            bad_full.append((site.get("frame"), "no full stack"))
            continue
        n_full += 1
        ffr, fmore = items(full[1])
        if ffr != stack or fmore != all_frames - len(stack):
            bad_full.append((site.get("frame"), len(ffr), len(stack), fmore))
        want_summary = ("Full stack (%d frame%s)" % (len(stack), "" if len(stack) == 1 else "s")
                        if all_frames <= len(stack) else
                        "Full stack (its first %d of %d frames)" % (len(stack), all_frames))
        if full[0] != want_summary:
            bad_summary.append((full[0], want_summary))

result(n_filtered > 0 and not bad_short,
       "the short stacks lack the frames memory_viz filters (%d in these stacks), as the oracle shortens them" % n_filtered,
       repr(bad_short[:3]))
result(n_full > 0 and not bad_full, "the full stack (%d sites) is one <details> away, every frame the JSON holds, wrappers included" % n_full,
       repr(bad_full[:3]))
result(not bad_count, "each site says how many frames its short stack left out, and the count matches", repr(bad_count[:3]))
result(not bad_more, "'… N more' counts the frames after the short list", repr(bad_more[:3]))
result(not bad_summary, "the full stack's summary says how many frames it lists", repr(bad_summary[:3]))
wrappers = [f for (_, full, _r), _s in zip(got_sites, want_sites) if full for f in items(full[1])[0] if WRAPPER.search(f)]
result(bool(wrappers), "a full stack holds a module call wrapper (_call_impl)", "none")


# The Markdown's short stacks are the HTML's: the same filter.
def md_unescape(s):
    """A frame as the Markdown shows it: a code span (commands.h's
    vr_code_span: one backtick and no padding for these frames)."""
    m = re.fullmatch(r"(`+) ?(.*?) ?\1", s)
    return m.group(2) if m else re.sub(r"\\(.)", r"\1", s.replace("\u2060", ""))


md_stacks = []
lists = re.findall(r"^Who held the memory at the peak.*?\n\n(.*?)\n\n", md, re.S | re.M)
for block in re.split(r"\n(?=- )", "\n".join(lists)):
    lines = [l[4:] for l in block.splitlines() if l.startswith("  - ")]
    frames = [md_unescape(l) for l in lines if not l.startswith(("(", "\u2026"))]
    if frames:
        md_stacks.append(frames)
html_stacks = []
for short, _, _r in got_sites:
    m = re.search(r"<ol class=\"vr-stack\">\n(.*?)</ol>", short, re.S)
    if m and items(m.group(1))[0]:
        html_stacks.append(items(m.group(1))[0])
result(md_stacks == html_stacks and len(md_stacks) > 0, "the Markdown's short stacks are the HTML's (%d)" % len(md_stacks),
       "md %d, html %d; first differing: %r" % (len(md_stacks), len(html_stacks),
                                                next(((a[:2], b[:2]) for a, b in zip(md_stacks, html_stacks) if a != b), None)))
