# tests/headroom.sh runs this.
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
g = re.search(r'<g class="vr-legend">(.*?)</g>', html, re.S)
print("\n".join(re.findall(r"<text[^>]*>([^<]*)</text>", g.group(1)) if g else []))
