# tests/where.sh runs this.
import json, sys
want, before = json.load(open(sys.argv[1])), json.load(open(sys.argv[3]))
got = {}
for line in open(sys.argv[2]):
    addr, frame, module = line.rstrip("\n").split("\t")
    got[addr] = [None if frame == "-" else frame, None if module == "-" else module]
ok = got == want
print(("PASS" if ok else "FAIL") + "\teach allocation at the line of its call\tgot %s want %s" % (got, want))
moved = sum(1 for a in want if want[a][0] != before[a][0])
print(("PASS" if moved >= 5 else "FAIL") + "\tthe calls' lines differ from where their functions begin (%d)" % moved)
