# tests/face.sh runs this.
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
truth = json.load(open("truth.json"))
def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + ("\t" + str(detail) if not ok else ""))
m = re.search(r'<svg[^>]*class="vr-chart vr-composition".*?</svg>', html, re.S)
say(m, "the composition bar is drawn")
svg = m.group(0) if m else ""
# Its legend: the HTML list under it, in its figure.
lm = re.search(r'<figure class="chart composition"><svg.*?</svg>\s*(<ul class="vr-legend">.*?</ul>)</figure>', html, re.S)
legend = lm.group(1) if lm else ""
parts = re.findall(r'<rect class="vr-part ([a-z_ -]+)" data-bytes="(\d+)"[^>]*><title>([^<]*)</title>', svg)
total = sum(int(b) for _, b, _ in parts)
say(total == truth["capacity"], "the bar's parts sum to the capacity (%d)" % truth["capacity"], (total, parts))
cats = sum(int(b) for c, b, _ in parts if c.startswith("vr-cat-"))
say(cats == truth["peak_allocated"], "its categories sum to the allocated peak (%d)" % truth["peak_allocated"], cats)
# With nvidia-smi's used memory at the peak (argv[2]), the part outside
# PyTorch is used less reserved and free is the capacity less used.
used = int(sys.argv[2]) if len(sys.argv) > 2 else truth["peak_reserved"]
want = {"vr-dev-cached": truth["peak_reserved"] - truth["peak_allocated"],
        "vr-dev-free": truth["capacity"] - used}
if used > truth["peak_reserved"]:
    want["vr-dev-outside"] = used - truth["peak_reserved"]
else:
    say(not [p for p in parts if p[0] == "vr-dev-outside"], "no part outside PyTorch without nvidia-smi")
for c, b in want.items():
    got = [p for p in parts if p[0] == c]
    say(len(got) == 1 and int(got[0][1]) == b, "%s is %d bytes" % (c, b), got)
for c, b, title in parts:
    say("{:,} B".format(int(b)) in title, "%s's <title> has its exact bytes" % c, title)
say(all(re.search(r'<li class="vr-dev-%s" data-bytes="%d"' % (c[7:], b), legend) for c, b in want.items()),
    "the legend names %s with their bytes" % ", ".join(c[7:] for c in want))
# Every known device part shows, however small (at least 3 units wide), and
# the capacity is a tick at the bar's end (parts summing to the capacity).
widths = dict(re.findall(r'<rect class="vr-part (vr-dev-[a-z]+)" data-bytes="\d+" x="[\d.]+" y="\d+" width="([\d.]+)"', svg))
for c, b in want.items():
    if b > 0:
        say(float(widths.get(c, 0)) >= 3, "%s shows (at least 3 units wide)" % c, widths)
cap = re.search(r'<path class="vr-capacity" data-bytes="(\d+)" d="M([\d.]+) ', svg)
ends = [float(x) + float(w) for x, w in re.findall(r'<rect class="vr-part [^"]*" data-bytes="\d+" x="([\d.]+)" y="\d+" width="([\d.]+)"', svg)]
say(cap and int(cap.group(1)) == truth["capacity"] and ends and abs(float(cap.group(2)) - max(ends)) < 0.5,
    "the capacity is a tick at the bar's end", (cap and cap.groups(), ends[-1:]))
