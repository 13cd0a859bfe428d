# tests/hardening.sh runs this.
import os, sqlite3, subprocess
hold = sqlite3.connect("locked.db", isolation_level=None)
hold.execute("BEGIN EXCLUSIVE")
p = subprocess.run([os.environ["VRAMREPORT"], "import", "notatrace.txt", "--db", "locked.db"],
                   stdin=subprocess.DEVNULL, capture_output=True,
                   env=dict(os.environ, VRAMREPORT_DB_TIMEOUT="1"))
hold.execute("ROLLBACK")
print("exit", p.returncode)
print(p.stderr.decode(errors="replace"), end="")
