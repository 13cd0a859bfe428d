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
