# tests/headroom.sh runs this.
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
# The memory chart's legend: the HTML list under its SVG, in its figure.
g = re.search(r'<figure class="chart"><svg.*?</svg>\s*<ul class="vr-legend">(.*?)</ul></figure>', html, re.S)
print("\n".join(re.findall(r"<span>([^<]*)</span>", g.group(1)) if g else []))
