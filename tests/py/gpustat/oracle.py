# tests/gpustat.sh runs this.
"""What a gpustat text holds, read independently of vramreport.

python3 oracle.py FILE -> JSON {"gpus": {idx: {...}}, "stamps": [...],
"cut": bool}. Sizes are gpustat's MB, i.e. MiB."""
import calendar, json, re, sys, time

MIB = 1 << 20
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|[()].|.)")
GPU = re.compile(r"^\[(\d+)\] (.*?)\s*\|(.*?)\|\s*(?:Mem:)?\s*(\d+|\?\?)(?: MiB)?\s*/\s*(\d+|\?\?)\s*(?:MB|MiB)\s*(?:\|(.*))?$")
PROC = re.compile(r"^(.*?)(?:/(\d+|--))?\((\d+|\?)M\)$")
CTIME = re.compile(r"\s([A-Z][a-z]{2} [A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \d{4})(\s|$)")
ISO = re.compile(r"\s(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\s|$)")


def stamp(line):
    m = CTIME.search(line)
    if m:
        return calendar.timegm(time.strptime(re.sub(" +", " ", m.group(1)), "%a %b %d %H:%M:%S %Y")) * 10**9
    m = ISO.search(line)
    if m:
        return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) * 10**9
    return None


def read(path):
    raw = open(path, "rb").read().decode("utf-8")
    lines = raw.split("\n")
    cut = not raw.endswith("\n")
    gpus, stamps, now = {}, [], None
    for n, line in enumerate(lines):
        line = ANSI.sub("", line).strip()
        if not line:
            continue
        m = GPU.match(line)
        if not m:
            if not line.startswith("[") and stamp(line) is not None:
                now = stamp(line)
            continue
        idx, name, mid, used, total, procs = m.groups()
        utils = [int(x) for x in re.findall(r"(\d+) %", mid.split("(")[0])]
        g = gpus.setdefault(idx, {"name": name, "samples": 0, "used": [], "util": [], "total": None, "procs": {}})
        g["samples"] += 1
        g["used"].append(int(used) * MIB if used != "??" else None)
        g["util"].append(utils[-1] if utils else None)
        g["total"] = int(total) * MIB if total != "??" else g["total"]
        stamps.append(now)
        for tok in (procs or "").split():
            p = PROC.match(tok)
            pid = int(p.group(2)) if p.group(2) and p.group(2) != "--" else None
            mem = int(p.group(3)) * MIB if p.group(3) != "?" else None
            key = "%s|%s" % (pid, p.group(1))
            g["procs"][key] = max(x for x in (g["procs"].get(key), mem, -1) if x is not None)
    return {"gpus": gpus, "stamps": stamps, "cut": cut}


if __name__ == "__main__":
    print(json.dumps(read(sys.argv[1]), sort_keys=True))
