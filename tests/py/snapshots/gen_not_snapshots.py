# tests/snapshots.sh runs this.
import collections, pickle
big = pickle.dumps({"lr": 0.001, "epochs": 3, "blob": list(range(500000))}, protocol=4)
open("notsnap/args.pickle", "wb").write(big)
open("notsnap/args-cut.pickle", "wb").write(big[:len(big) // 2])
sd = collections.OrderedDict([("layer.weight", [0.5, 1.5]), ("layer.bias", [0.0])])
open("notsnap/state-p2.pt", "wb").write(pickle.dumps(sd, protocol=2))
open("notsnap/state-p4.pt", "wb").write(pickle.dumps(sd, protocol=4))
open("notsnap/numbers.pickle", "wb").write(pickle.dumps([1, 2, 3], protocol=4))
open("notsnap/empty.pickle", "wb").write(pickle.dumps({}, protocol=4))
