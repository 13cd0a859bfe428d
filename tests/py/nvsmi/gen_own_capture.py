# tests/nvsmi.sh runs this.
import sys
text = open(sys.argv[1], encoding="utf-8").read()
sec = text.split("# $ nvidia-smi \n")[2].split("\n", 1)[1]
table = sec[: sec.index("\n\n\n")] + "\n"
rule = "#" * 72
def section(cmd, body):
    return "%s\n# $ %s\n%s\n%s\n\n" % (rule, cmd, rule, body)
out = section("nvidia-smi --query-gpu=index,pci.bus_id,memory.used,memory.total --format=csv,noheader,nounits -lms 500",
              "0, 00000000:00:09.0, 19818, 81559\n0, 00000000:00:09.0, 20001, 81559\n0, 00000000:00:09.0, [N/A], 81559")
out += section("nvidia-smi -l 1", table + "\n" + table.replace("08:12:53", "08:12:54"))
out += section("nvidia-smi -q", "==============NVSMI LOG==============\n\nTimestamp : Tue Jul 14 08:12:53 2026")
out += section("uptime", " 08:12:55 up 3 days")
out += section("nvidia-smi pmon -c 1", "# gpu  pid  type\n    0  11345  C")
open("own-capture.txt", "w").write(out)
