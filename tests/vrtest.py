"""Python helpers shared by the shell tests (tests/lib.sh puts this folder
on PYTHONPATH). Each is an independent oracle: it computes what a user
would check from the input files, without vramreport's code."""
import pickle


class DataOnly(pickle.Unpickler):
    """Python's own Unpickler with every global and persistent id refused:
    data only, nothing imported or called (a snapshot needs no more)."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError("global %s.%s refused" % (module, name))

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refused: a persistent id")


def load_pickle(path):
    with open(path, "rb") as f:
        return DataOnly(f).load()


def human_bytes(b):
    """The report's sizes: binary units, three significant digits
    (docs: 1 GiB = 1024 MiB)."""
    if abs(b) < 1024:
        return "%d B" % b
    units = ["KiB", "MiB", "GiB", "TiB", "PiB"]
    v, u = float(b), -1
    while abs(v) >= 1023.995 and u < 4:
        v /= 1024
        u += 1
    a = abs(v)
    fmt = "%.0f %s" if a >= 99.95 else "%.1f %s" if a >= 9.995 else "%.2f %s"
    return fmt % (v, units[u])


def result(ok, desc, detail=""):
    """One check for tests/lib.sh's tap_lines: "PASS<TAB>desc", or
    "FAIL<TAB>desc<TAB>detail" (on one line, cut at 1,500 characters)."""
    if ok:
        print("PASS\t" + desc)
    else:
        print("FAIL\t" + desc + ("\t" + str(detail).replace("\t", " ").replace("\n", " | ")[:1500]
                                 if detail not in ("", None) else ""))


def run_vr(vr, *args):
    """vramreport with args: (exit status, stdout, stderr) as text."""
    import subprocess
    p = subprocess.run([vr] + list(args), capture_output=True)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
