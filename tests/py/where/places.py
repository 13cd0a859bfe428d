# tests/where.sh runs this.
import json, sys
want = json.load(open(sys.argv[1]))
got = {}
for line in open(sys.argv[2]):
    addr, frame, module = line.rstrip("\n").split("\t")
    got[addr] = [None if frame == "-" else frame, None if module == "-" else module]
print(("PASS" if sorted(got) == sorted(want) else "FAIL") + "\tevery allocation is in the database\t%s %s" % (sorted(got), sorted(want)))
for addr in sorted(want, key=int):
    w, g = want[addr], got.get(addr)
    ok = g == w
    print(("PASS" if ok else "FAIL") + "\tallocation at %#x: %s, %s" % (int(addr), w[0], w[1]) +
          ("" if ok else "\tgot %s" % (g,)))
