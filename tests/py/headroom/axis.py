# tests/headroom.sh runs this.
import json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
# data-x-range: the axis in ns after the origin, where the report's times
# start (the earliest source's start).
m = re.search(r'<svg[^>]*class="vr-chart"[^>]*data-x-range="(-?\d+) (-?\d+)"', html)
origin = json.load(open(sys.argv[3]))["sources"][0]["start_ts_ns"]
first = int(sys.argv[2])
ok = m is not None and origin + int(m.group(1)) == first and first > origin
print("%s\t2021 trace: the chart's time axis starts at the first memory event (%d ns after the report's start)\t%s"
      % ("PASS" if ok else "FAIL", first - origin, m.groups() if m else "no data-x-range"))
xs = re.search(r'<g class="vr-axis vr-axis-x"[^>]*>\s*<path d="M([\d.]+) ', html)
left = re.search(r'<path class="vr-axis-line" d="M([\d.]+) ', html)
ok = xs is not None and left is not None and float(xs.group(1)) >= float(left.group(1))
print("%s\t2021 trace: the first x tick lies on the axis\t%s" % ("PASS" if ok else "FAIL", (xs and xs.group(1), left and left.group(1))))
