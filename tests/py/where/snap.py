# tests/where.sh runs this.
import json, sys
want = json.load(open(sys.argv[1]))
got = {}
for line in open(sys.argv[2]):
    k, n = line.rstrip("\n").rsplit("\t", 1)
    got[k] = int(n)
known = sum(v for k, v in want.items() if k != "-")
print(("PASS" if known > 100 else "FAIL") + "\tthe snapshot has allocations with user frames\t%d" % known)
print(("PASS" if got == want else "FAIL") + "\teach snapshot allocation has its stack's first frame outside torch\tgot %s want %s" % (
    sorted(got.items())[:5], sorted(want.items())[:5]))
