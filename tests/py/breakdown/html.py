# tests/breakdown.sh runs this.
import json, re, sys
import xml.etree.ElementTree as ET
html = open(sys.argv[1], encoding="utf-8").read()
got = json.load(open(sys.argv[2]))["devices"][0]["peak_breakdown"]
for cls in ("vr-categories", "vr-composition"):
    m = re.search(r'<svg[^>]*class="vr-chart %s".*?</svg>' % cls, html, re.S)
    if not m:
        print("FAIL\tHTML: the %s chart" % cls)
        continue
    svg = m.group(0)
    try:
        ET.fromstring(svg)
        print("PASS\tHTML: the %s chart is well-formed SVG" % cls)
    except ET.ParseError as e:
        print("FAIL\tHTML: the %s chart is well-formed SVG\t%s" % (cls, e))
    titles = re.findall(r"<title>([^<]*)</title>", svg)
    # the legend: the HTML list under the chart, in its figure
    fig = re.search(r'<figure class="chart %s"><svg.*?</svg>\s*<ul class="vr-legend">(.*?)</ul></figure>'
                    % cls[3:], html, re.S)
    legend = re.findall(r'<li class="vr-cat-([a-z_]+)" data-bytes="(\d+)">.*?<span>([^<]*)</span>',
                        fig.group(1) if fig else "")
    for c, b in got.items():
        exact = "{:,} B".format(b)
        has_title = any(t.startswith(c + ":") and exact in t for t in titles)
        if b > 0:
            print(("PASS" if has_title else "FAIL") + "\tHTML %s: %s titled with %s\t%r" % (cls, c, exact, titles))
        item = [x for x in legend if x[0] == c]
        if (cls == "vr-composition" or c == "kv_cache") and b == 0:
            # the bar's legend names the categories that hold bytes (the
            # table under it lists the others); the timeline's leaves out
            # a KV cache this run never had (this trace has none)
            print(("PASS" if not item else "FAIL") + "\tHTML %s: no legend for empty %s\t%r" % (cls, c, item))
            continue
        # the timeline's legend says the exact bytes; the bar's, kept short
        # for a phone's first screen, its size in binary units (the
        # exact bytes are its data-bytes and the part's tooltip above)
        sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.dirname(
            __import__("os").path.dirname(__import__("os").path.abspath(__file__)))))
        from vrtest import human_bytes
        said = exact if cls == "vr-categories" else human_bytes(b) + ","
        ok = len(item) == 1 and int(item[0][1]) == b and said in item[0][2]
        print(("PASS" if ok else "FAIL") + "\tHTML %s: legend says %s %s\t%r" % (cls, c, said, item))
# The categories over time share the memory chart's time axis: the same
# tick labels at the same x.
mem = re.search(r'<g class="vr-axis vr-axis-x".*?</g>', html, re.S)
cat = re.search(r'<svg[^>]*class="vr-chart vr-categories".*?</svg>', html, re.S)
ticks = lambda text: [(round(float(x), 1), label) for x, label in
                      re.findall(r'<text[^>]* x="([0-9.]+)"[^>]*>([0-9.]+ m?s)</text>', text)]
a, b = ticks(mem.group(0)) if mem else [], ticks(cat.group(0)) if cat else []
print(("PASS" if a and a == b else "FAIL") + "\tHTML: both charts put the same times at the same x\t%r / %r" % (a, b))
