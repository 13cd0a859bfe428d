# tests/nvsmi-q.sh runs this.
import sys
data = open(sys.argv[1], "rb").read()
second = data.index(b'<gpu id="00000000:C1:00.0">')
open("a5000-cut.xml", "wb").write(data[:second + 2000])
# Cut inside the second document of two: the first document is kept whole.
open("a5000-cut2.xml", "wb").write(data + b"\n" + data[:second - 100])
