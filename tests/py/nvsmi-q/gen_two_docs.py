# tests/nvsmi-q.sh runs this.
import sys
doc = open(sys.argv[1], encoding="utf-8").read()
later = doc.replace("Tue Dec 30 09:46:54 2025", "Tue Dec 30 09:46:55 2025").replace(
    "<used>22437 MiB</used>", "<used>22001 MiB</used>")
open("a5000-twice.xml", "w", encoding="utf-8").write(doc + "\n" + later)
