# tests/hardening.sh runs this.
import sys
M = (1 << 64) - 1
P1, P2 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F
P1i, P2i = pow(P1, -1, 1 << 64), pow(P2, -1, 1 << 64)
rotl = lambda x, r: ((x << r) | (x >> (64 - r))) & M
rotr = lambda x, r: ((x >> r) | (x << (64 - r))) & M
rnd = lambda acc, lane: rotl((acc + lane * P2) & M, 31) * P1 & M
word = lambda b: int.from_bytes(b, "little")
lanes = lambda b: [word(b[8 * i:8 * i + 8]) for i in range(4)]
start = [(P1 + P2) & M, P2, 0, (-P1) & M]  # seed 0
a = b"vramreport-collision-test-a:" + b"A" * 36
want = [rnd(rnd(s, x), y) for s, x, y in zip(start, lanes(a[:32]), lanes(a[32:]))]
first = second = b""
for i in range(4):
    n = 0
    while True:
        x = b"b%07d" % n
        y = ((rotr(want[i] * P1i & M, 31) - rnd(start[i], word(x))) * P2i & M).to_bytes(8, "little")
        if all(0x21 <= c < 0x7f for c in y):
            break
        n += 1
    first, second = first + x, second + y
rest = b"\n" + open(sys.argv[1], "rb").read()
open("coll-a.log", "wb").write(a + rest)
open("coll-b.log", "wb").write(first + second + rest)
