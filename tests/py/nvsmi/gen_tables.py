# tests/nvsmi.sh runs this.
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
# The load section's table, as `nvidia-smi` alone prints it.
sec = text.split("# $ nvidia-smi \n")[2].split("\n", 1)[1]
single = sec[: sec.index("\n\n\n")] + "\n"
open("single.txt", "w").write(single)
# `nvidia-smi -l 1`: the same table three times, a second apart, other
# figures; the log ends in a process row cut by a killed job.
tables = []
for t, used in enumerate([19818, 20500, 30999]):
    tab = single.replace("08:12:53", "08:12:%02d" % (53 + t)).replace("19818MiB", "%dMiB" % used)
    tab = tab.replace("  2566MiB", "%6dMiB" % (2566 + t))
    tables.append(tab)
rep = "\n".join(tables)
rep = rep[: rep.rindex("./gpu_burn") + 14]
open("repeated.txt", "w").write(rep)
