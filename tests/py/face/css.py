# tests/face.sh runs this.
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
css = "".join(re.findall(r"<style>(.*?)</style>", html, re.S))
def say(ok, what, detail=""):
    print(("PASS" if ok else "FAIL") + "\t" + what + ("\t" + detail if detail and not ok else ""))
say(re.search(r"@media[^{]*prefers-color-scheme:\s*dark", css), "CSS: a prefers-color-scheme: dark block")
say(re.search(r"@media\s+print\s*\{", css), "CSS: a print stylesheet")
# A min-width as a property (not a media query's condition) keeps content
# wider than a phone.
props = re.findall(r"[{;]\s*min-width\s*:\s*([^;}]+)", css)
say(not props, "CSS: no min-width property that forces sideways scrolling", repr(props))
say(re.search(r"table\s*\{[^}]*overflow-x:\s*auto", css), "CSS: tables scroll inside themselves")
# Every chart's SVG fills its figure and scales (a viewBox, width 100%);
# the legends' swatches (ul.vr-legend, svg.vr-swatch) are icons.
svgs = [s for s in re.findall(r"<svg [^>]*>", html) if 'class="vr-swatch"' not in s]
say(svgs and all('viewBox="' in s and 'width="100%"' in s for s in svgs),
    "SVG: every chart has a viewBox and width 100%%", repr([s[:80] for s in svgs]))
say(re.search(r'<meta name="viewport" content="width=device-width', html), "HTML: a viewport meta")
say(not re.search(r'(src|href)="(https?:)?//', html), "HTML: no network request (src/href)")
