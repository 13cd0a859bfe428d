# tests/segmap.sh runs this.
"""What the HTML report shows: its segment maps, their rows, <details>, the
chart's baseline, and whether any markup from the input came through."""
import json, sys
from html.parser import HTMLParser

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.maps, self.details, self.baselines, self.tags = [], 0, [], set()
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.add(tag)
        cls = a.get("class", "")
        if tag == "svg" and cls == "vr-segmap":
            self.maps.append({"segments": int(a["data-segments"]), "rows": [], "rest": None,
                              "data_rows": int(a["data-rows"])})
        elif tag == "g" and cls in ("vr-segment", "vr-segment-rest"):
            r = {k[5:]: int(v) for k, v in a.items()
                 if k.startswith("data-") and k not in ("data-pool", "data-expandable")}
            if cls == "vr-segment":
                self.maps[-1]["rows"].append(r)
            else:
                self.maps[-1]["rest"] = r
        elif tag == "details" and "vr-site" in cls.split():
            self.details += 1  # a top site's (its full stack is a <details> inside)
        elif tag == "g" and cls == "vr-baseline":
            self.baselines.append(int(a["data-bytes"]))

p = Page()
p.feed(open(sys.argv[1], encoding="utf-8").read())
print(json.dumps({"maps": p.maps, "details": p.details, "baselines": p.baselines,
                  "tags": sorted(p.tags)}))
