# tests/nvsmi-q.sh runs this.
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
n, i = 0, 0
while i < len(lines):
    if lines[i].startswith("# ") and lines[i].endswith(":: query (-q)"):
        j = i + 1
        while not lines[j].startswith("####"):
            j += 1
        k = j + 1
        while k < len(lines) and not lines[k].startswith("####"):
            k += 1
        with open("%s.%d.txt" % (sys.argv[2], n), "w", encoding="utf-8") as f:
            f.write("\n".join(lines[j + 1:k]) + "\n")
        n += 1
        i = k
    else:
        i += 1
print(n)
