# tests/bandwidth.sh runs this.
import re
h = open("evil.html", encoding="utf-8").read()
seg = h[h.find("Bandwidth or capacity</h2>"):]
rows = re.findall(r"<tr>(.*?)</tr>", seg[:seg.find("</table>")], re.S)
print([len(re.findall(r"<t[dh][ >]", r)) for r in rows])
