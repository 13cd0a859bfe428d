# tests/nvsmi-q.sh runs this.
import json, os, subprocess, sys
ORACLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "oracle_xml.py")
def want(f):
    return json.loads(subprocess.check_output([sys.executable, ORACLE, sys.argv[1] + "/" + f]))
a100 = want("telegraf-a100-sxm4-v12.xml")["gpus"]
migs = [k for k in a100 if not k.endswith("|")]
print(("PASS" if len(migs) == 4 else "FAIL") + "\tthe A100 has 4 MIG devices with memory of their own\t%r" % migs)
a5000 = want("telegraf-dual_a5000-v13.xml")["gpus"]
print(("PASS" if len(a5000) == 2 and all(g["samples"][0]["processes"] for g in a5000.values()) else "FAIL")
      + "\tthe dual A5000 has 2 GPUs, each with a process")
print(("PASS" if sorted(g["idx"] for g in a5000.values()) == [0, 1] else "FAIL")
      + "\tthe dual A5000 lists both GPUs it has: indexes 0 and 1")
print(("PASS" if all(g["idx"] is None for g in a100.values()) else "FAIL")
      + "\tthe A100 log lists 1 GPU of the 4 attached: no index")
