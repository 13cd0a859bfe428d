# tests/snapshots-json.sh runs this.
import sys
text = open(sys.argv[1]).read()
start = text.index('"device_traces"')
end = text.index(']]', start)
cut = (start + end) // 2
open("cut.json", "w").write(text[:cut])
print(cut)
