# tests/nvsmi.sh runs this.
import random, sys
data = bytearray(open(sys.argv[1], "rb").read())
rnd = random.Random(9)
for _ in range(len(data) // 50):
    data[rnd.randrange(len(data))] = rnd.choice(b"|,/:[]0123456789 \n\x00\xff-")
open(sys.argv[2], "wb").write(bytes(data))
