# tests/headroom.sh runs this.
import json, sys

MIB, GIB = 1 << 20, 1 << 30
CAP = 16 * GIB
T0 = 1672444800 * 1000000  # 2022-12-31T00:00:00Z, in us


def op(name, ts, dur):
    return {"ph": "X", "cat": "cpu_op", "name": name, "pid": 7, "tid": 7,
            "ts": T0 + ts, "dur": dur}


class Trace:
    def __init__(self, share):
        self.ev, self.total, self.share = [], 512 * MIB, share

    def mem(self, ts, addr, size, reserved=None):
        self.total += size
        res = reserved if reserved is not None else self.total + 256 * MIB
        self.ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                        "ts": T0 + ts, "args": {"Device Type": 1, "Device Id": 0,
                                                "Addr": addr, "Bytes": size,
                                                "Total Allocated": self.total,
                                                "Total Reserved": res}})

    def build(self):
        m = self.mem
        self.ev += [op("w::make_a", 100, 100), op("w::make_b", 300, 100),
                    op("w::peak", 690, 20), op("w::late", 800, 100)]
        m(110, 0x1000, 100 * MIB)
        m(120, 0x2000, 50 * MIB)
        m(150, 0x9000, -64 * MIB)          # allocated before the trace began
        m(310, 0x3000, 200 * MIB)
        m(320, 0x2000, -50 * MIB)          # w::make_a's, freed in w::make_b
        m(330, 0x4000, 30 * MIB)
        m(700, 0x4000, -30 * MIB)          # at the peak's time, before it
        m(700, 0x5000, 300 * MIB)          # the peak
        m(700, 0x1000, -100 * MIB)         # at the peak's time, after it
        m(700, 0x6000, 50 * MIB)           # ditto: not live at the peak
        m(850, 0x6000, -50 * MIB)
        m(860, 0x7000, 8 * MIB, reserved=int(CAP * self.share))
        return {"schemaVersion": 1, "traceEvents": self.ev,
                "deviceProperties": [{"id": 0, "name": "", "totalGlobalMem": CAP}]}


def old(share):
    """The 2021 format: no Addr, no totals; allocations reach `share` of
    the capacity (8 of them, freed after)."""
    ev, size = [], int(CAP * share) // 8
    for i in range(8):
        ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                   "ts": T0 + 100 + i, "args": {"Device Type": 1, "Device Id": 0,
                                                "Bytes": size}})
    for i in range(8):
        ev.append({"ph": "i", "s": "t", "name": "[memory]", "pid": 7, "tid": 7,
                   "ts": T0 + 200 + i, "args": {"Device Type": 1, "Device Id": 0,
                                                "Bytes": -size}})
    return {"schemaVersion": 1, "traceEvents": ev,
            "deviceProperties": [{"id": 0, "name": "Old GPU", "totalGlobalMem": CAP}]}


json.dump(Trace(0.92).build(), open("near-trace.json", "w"))
json.dump(Trace(0.80).build(), open("far-trace.json", "w"))
json.dump(old(0.93), open("old-trace.json", "w"))
json.dump({"cap": CAP}, open("gen.json", "w"))
