# tests/hardening.sh runs this.
import os, pty, select, sqlite3, subprocess, time
hold = sqlite3.connect("locked.db", isolation_level=None)
hold.execute("BEGIN EXCLUSIVE")
master, slave = pty.openpty()
p = subprocess.Popen([os.environ["VRAMREPORT"], "import", "waited.json", "--db", "locked.db"],
                     stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                     env=dict(os.environ, VRAMREPORT_DB_TIMEOUT="120"))
os.close(slave)
said, released, guard = b"", False, time.monotonic() + 120  # a guard, not a measure
while True:
    if not released and (b"waiting for another vramreport holding" in said or time.monotonic() > guard):
        hold.execute("ROLLBACK")
        hold.close()
        released = True
    r, _, _ = select.select([master], [], [], 0.1)
    if not r:
        continue
    try:
        chunk = os.read(master, 4096)
    except OSError:
        break
    if not chunk:
        break
    said += chunk
print("exit", p.wait())
print(said.decode(errors="replace"))
