# tests/segmap.sh runs this.
import sys
text = open(sys.argv[1]).read()
def say(desc, ok, detail=""):
    print(("PASS\t%s" % desc) if ok else ("FAIL\t%s\t%s" % (desc, detail)))
say("Markdown: no SVG and no placeholder", "<svg" not in text and "vrchart" not in text)
lines = text.split("\n")
start = next(i for i, l in enumerate(lines) if l.startswith("Who held the memory"))
items, nested = 0, []
for l in lines[start + 1:]:
    if l.startswith("- "):
        items += 1
        nested.append(0)
    elif l.startswith("  - "):
        nested[-1] += 1
    elif l.startswith("#"):
        break
say("Markdown: one list item per top site", items > 0, "no items")
say("Markdown: each stack at most 12 frames and two notes", max(nested) <= 14, repr(nested))
say("Markdown: long stacks say how many more", any("more" in l for l in lines if l.startswith("  - ")))
