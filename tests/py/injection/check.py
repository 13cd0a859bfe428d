# tests/injection.sh runs this.
import ctypes, ctypes.util, html.parser, json, re, sys
import xml.etree.ElementTree as ET
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
