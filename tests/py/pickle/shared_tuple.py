# tests/pickle.sh runs this.
import sqlite3, sys
import os, sys
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from vrtest import load_pickle
d = load_pickle(sys.argv[1])
want = (len(d["segments"]), sum(s["total_size"] for s in d["segments"]),
        sorted({"%d,%d" % s["segment_pool_id"] for s in d["segments"]}))
db = sqlite3.connect(sys.argv[2])
n, total = db.execute("SELECT count(*), sum(total_bytes) FROM segment").fetchone()
pools = sorted(r[0] for r in db.execute("SELECT DISTINCT pool FROM segment"))
got = (n, total, pools)
print(("PASS\t%s: 10,000 segments sharing one tuple imported as Python reads them %r"
       % (sys.argv[3], got)) if got == want else
      "FAIL\t%s: the figures as Python reads them\twant %r, got %r" % (sys.argv[3], want, got))
