# tests/snapshots.sh runs this.
import os, pickle
class Run:
    def __reduce__(self):
        return (os.system, ("touch ran-a-command",))
# A snapshot-looking dict holding code, named as if it were JSON.
open("evil.json", "wb").write(pickle.dumps({"segments": [Run()]}, protocol=4))
open("evil2.pickle", "wb").write(pickle.dumps({"segments": [], "x": Run()}, protocol=2))
