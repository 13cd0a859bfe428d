# tests/gpustat.sh runs this.
import random, sys
data = bytearray(open(sys.argv[1], "rb").read())
rnd = random.Random(13)
for _ in range(len(data) // 20):
    data[rnd.randrange(len(data))] = rnd.choice(b"|,/:[]()0123456789 %M?-\n\x1b\x00\xff")
open(sys.argv[2], "wb").write(bytes(data))
