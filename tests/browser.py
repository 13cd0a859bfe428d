#!/usr/bin/env python3
"""tests/browser.py: opens HTML reports in a headless Chromium and checks
what a reader sees. A small client of the DevTools protocol over
--remote-debugging-pipe (no dependencies: the standard library only):
Chromium reads commands from its fd 3 and writes replies and events to its
fd 4, each message one JSON object ended by a NUL byte.

    browser.py [--chromium PATH] [--shots DIR] [--timeout S] NAME=FILE[:chart]...

For each report FILE (one tab each, one Chromium for all), at 1280x800 and
at 390x844 (a phone): no console errors, no request other than the file
itself, #verdict visible in the first screen, the first
`figure.chart svg.vr-chart` visible with its top in the first screen (when
the case says `:chart`); there and at 360x740 and 320x640 (narrow phones): no
sideways scrolling, no two chart texts of a figure overlapping (every <text>
of its svg and every legend item, boxes from getBoundingClientRect), no chart
text over a line it does not label (the series, the capacity, the baseline,
the OOMs' lines, sampled with getPointAtLength; a text may touch a line by
LINE_TOLERANCE_PX; the capacity's and an OOM's own label, and the baseline's
label over the baseline, are theirs), every chart's legend an HTML list
(ul.vr-legend) under its svg in its figure, shown, its text at least 12 px, and
none left in an svg; and under 400 px no chart text under 10 px (its font size
times the svg's scale); offenders are named by their text; in light and in dark mode
(prefers-color-scheme) every text readable (WCAG AA contrast: 4.5, 3 for
large text), the body's and the verdict's especially; and printing to PDF
gives a PDF. Screenshots and PDFs go to DIR (CI keeps them as artefacts).

Prints one line per check, "PASS<TAB>desc" or "FAIL<TAB>desc<TAB>detail"
(tests/lib.sh's tap_lines reads them). Exits 0 when the checks could run
(whatever their results), 2 when Chromium could not be driven (it did not
start, or stopped answering within the timeout: its process group is killed).
VR_CDP_TIMES=1 in the environment prints each command's time.
"""

import argparse
import base64
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

VIEWPORTS = (
    # name, width, height, device scale, mobile, first screen checked
    ("desktop 1280x800", 1280, 800, 1, False, True),
    ("phone 390x844", 390, 844, 2, True, True),
    # Narrower phones: the charts' text and legends, not the first screen
    # (its height is the 390 px phone's check).
    ("phone 360x740", 360, 740, 2, True, False),
    ("phone 320x640", 320, 640, 2, True, False),
)

# A legend (ul.vr-legend, an HTML list under its chart) is read at the
# page's size: never under this (CSS px).
MIN_LEGEND_PX = 12
# A text box may touch a line by this much (CSS px, each side) before it
# counts as lying over it: glyph boxes hold empty room above and below.
LINE_TOLERANCE_PX = 1.5

# The least of an element that must show in the first screen for it to count
# as seen there (CSS px): the whole element when it is smaller.
MIN_VISIBLE_PX = 40


class BrowserError(Exception):
    """Chromium did not start, died, or did not answer in time."""


class Chromium:
    """One Chromium process driven through its pipe; every wait is bounded
    by the deadline given to each call."""

    def __init__(self, path, profile_dir, timeout):
        self.timeout = timeout
        self.next_id = 0
        self.pending = b""
        self.events = []
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        # The child's ends come to a shell as its standard input and output,
        # which it moves to fds 3 and 4 before Chromium starts (Chromium's
        # own output goes to the log).
        args = [
            "/bin/sh", "-c", 'exec "$@" 3<&0 4>&1 0</dev/null 1>&2', "sh",
            path, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
            "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-default-apps", "--mute-audio",
            "--user-data-dir=" + profile_dir, "about:blank",
        ]
        self.log = open(os.path.join(profile_dir, "chromium.log"), "wb")
        try:
            self.proc = subprocess.Popen(
                args, stdin=to_child_r, stdout=from_child_w, stderr=self.log,
                start_new_session=True)
        except OSError as e:
            raise BrowserError("cannot start %s: %s" % (path, e))
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self.wfd = to_child_w
        self.rfd = from_child_r

    def close(self):
        """Kills Chromium's whole process group (the wrapper script, the
        browser and its helpers) and waits for it."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for fd in (self.wfd, self.rfd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.log.close()

    def send(self, method, params=None, session=None):
        t0 = time.monotonic()
        try:
            return self._send(method, params, session)
        finally:
            if os.environ.get("VR_CDP_TIMES"):
                print("# %.3f s %s" % (time.monotonic() - t0, method))

    def _send(self, method, params=None, session=None):
        """Sends a command; returns its result, or raises BrowserError on an
        error reply or when no reply comes before the timeout."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        deadline = time.monotonic() + self.timeout
        while data:
            if not select.select([], [self.wfd], [], max(0.0, deadline - time.monotonic()))[1]:
                raise BrowserError("%s: Chromium does not read its pipe" % method)
            try:
                data = data[os.write(self.wfd, data):]
            except OSError as e:
                raise BrowserError("%s: Chromium's pipe: %s" % (method, e))
        want = self.next_id
        while True:
            msg = self.read_message(deadline, method)
            if msg.get("id") == want:
                if "error" in msg:
                    raise BrowserError("%s: %s" % (method, msg["error"].get("message")))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, session, timeout=None):
        """Waits for an event (already queued or still to come)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for ev in self.events:
                if ev["method"] == method and ev.get("sessionId") == session:
                    self.events.remove(ev)
                    return ev
            msg = self.read_message(deadline, "waiting for " + method)
            if "method" in msg:
                self.events.append(msg)

    def read_message(self, deadline, what):
        while b"\0" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                raise BrowserError("%s: no answer from Chromium in %g s" % (what, self.timeout))
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise BrowserError("%s: Chromium closed its pipe (exit %s)"
                                   % (what, self.proc.poll()))
            self.pending += chunk
        raw, self.pending = self.pending.split(b"\0", 1)
        return json.loads(raw)

    def take_events(self, session):
        mine = [e for e in self.events if e.get("sessionId") == session]
        self.events = [e for e in self.events if e.get("sessionId") != session]
        return mine


# The page-side checks: one function run by Runtime.evaluate, returning JSON.
# Colours: computed styles are rgb()/rgba() (or color(srgb ...)); a
# background is found by compositing ancestors' backgrounds over the canvas.
PAGE_JS = r"""
((vw, LINE_TOL) => {
  const parse = (s) => {
    let m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+%?))?\s*\)$/.exec(s);
    if (m) {
      let a = m[4] === undefined ? 1 : (m[4].endsWith('%') ? parseFloat(m[4]) / 100 : parseFloat(m[4]));
      return [+m[1], +m[2], +m[3], a];
    }
    m = /^color\(srgb\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s*\/\s*([\d.]+))?\s*\)$/.exec(s);
    if (m) return [m[1] * 255, m[2] * 255, m[3] * 255, m[4] === undefined ? 1 : +m[4]];
    return null;
  };
  const over = (top, under) => {
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a)).concat([1]);
  };
  const lum = (c) => {
    const l = c.slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  };
  const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  const scheme = getComputedStyle(document.documentElement).colorScheme || '';
  // The canvas under everything: Chromium's dark canvas only when the page opts in.
  const canvas = (dark && /dark/.test(scheme)) ? [18, 18, 18, 1] : [255, 255, 255, 1];
  const bgOf = (el) => {
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let bg = canvas;
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const hex = (c) => '#' + c.slice(0, 3).map(v => Math.round(v).toString(16).padStart(2, '0')).join('');
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (el.classList && el.classList.length ? '.' + Array.from(el.classList).join('.') : '');
  const shown = (el) => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' && +s.opacity !== 0; };
  const textOf = (el) => (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 50);
  const contrastOf = (el, fgProp, bg) => {
    const s = getComputedStyle(el);
    const fg = parse(s[fgProp]);
    if (!fg) return { el: name(el), text: textOf(el), bad: 'colour ' + s[fgProp] };
    const size = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    const need = (size >= 24 || (size >= 18.66 && bold)) ? 3 : 4.5;
    const c = over(fg, bg);
    return { el: name(el), text: textOf(el), fg: hex(c), bg: hex(bg), ratio: Math.round(ratio(c, bg) * 100) / 100, need };
  };
  const box = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return { top: r.top, bottom: r.bottom, left: r.left, right: r.right, width: r.width, height: r.height,
             visibility: getComputedStyle(el).visibility, display: getComputedStyle(el).display };
  };
  // Every piece of HTML text (outside SVG) against what is behind it.
  const texts = [];
  const seen = new Set();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || seen.has(el) || !n.nodeValue.trim() || el.closest('svg, style, script, title')) continue;
    seen.add(el);
    if (shown(el)) texts.push(contrastOf(el, 'color', bgOf(el)));
  }
  // SVG text against the chart's own background (rect.vr-bg), else the page's.
  for (const svg of document.querySelectorAll('svg')) {
    let bg = bgOf(svg);
    const rect = svg.querySelector('rect.vr-bg');
    if (rect) { const f = parse(getComputedStyle(rect).fill); if (f) bg = over(f, bg); }
    for (const t of svg.querySelectorAll('text')) if (shown(t)) texts.push(contrastOf(t, 'fill', bg));
  }
  // Inside a box that scrolls or clips on its own: not the page's width.
  const clipped = (el) => {
    for (let e = el.parentElement; e && e !== document.body; e = e.parentElement)
      if (getComputedStyle(e).overflowX !== 'visible') return true;
    return false;
  };
  // What sticks out past the viewport's right edge, boxes and text (a long
  // word overflows its box without widening it).
  const pastEdge = (vw) => {
    const out = [];
    for (const e of document.body.querySelectorAll('*'))
      if (!e.parentElement.closest('svg') && !clipped(e) && e.getBoundingClientRect().right > vw + 1)
        out.push(name(e) + ' to x=' + Math.round(e.getBoundingClientRect().right));
    const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest('svg') || getComputedStyle(el).overflowX !== 'visible' || clipped(el)) continue;
      const r = document.createRange(); r.selectNodeContents(n);
      const right = r.getBoundingClientRect().right;
      if (right > vw + 1) out.push('text in ' + name(el) + ' to x=' + Math.round(right) + ': ' + JSON.stringify(n.nodeValue.trim().slice(0, 40)));
    }
    return out.slice(0, 4);
  };
  // The charts' words: every <text> of every figure's svg and every legend
  // item (li in a figure's legend list), as boxes on the screen, each with
  // its size in CSS px (its font size times the svg's scale).
  const words = [];
  document.querySelectorAll('figure').forEach((fig, fi) => {
    for (const t of fig.querySelectorAll('svg text')) {
      if (!shown(t) || !textOf(t)) continue;
      const r = t.getBoundingClientRect(), m = t.getScreenCTM();
      const k = m ? Math.hypot(m.a, m.b) : 1;
      words.push({ fig: fi, text: textOf(t), px: Math.round(parseFloat(getComputedStyle(t).fontSize) * k * 10) / 10,
                   l: r.left, t: r.top, r: r.right, b: r.bottom });
    }
    // An item that wraps (a phone's legend flows inline) is a box per line.
    for (const li of fig.querySelectorAll('.vr-legend li, ul.vr-legend > li')) {
      if (!shown(li) || !textOf(li)) continue;
      for (const r of li.getClientRects())
        if (r.width > 0 && r.height > 0)
          words.push({ fig: fi, text: textOf(li), px: parseFloat(getComputedStyle(li).fontSize),
                       l: r.left, t: r.top, r: r.right, b: r.bottom });
    }
  });
  // The legends: in each figure.chart, the list under its svg (a child of
  // the figure), shown, its items' text size; no legend left in an svg.
  const legends = [];
  document.querySelectorAll('figure.chart').forEach((fig, fi) => {
    const lists = fig.querySelectorAll(':scope > ul.vr-legend');
    const inSvg = fig.querySelectorAll('svg g.vr-legend').length;
    const items = [];
    for (const ul of lists)
      for (const li of ul.querySelectorAll('li'))
        items.push({ text: textOf(li), shown: shown(li), px: parseFloat(getComputedStyle(li).fontSize) });
    const after = Array.from(lists).every(ul => { const p = ul.previousElementSibling; return p && p.tagName.toLowerCase() === 'svg'; });
    legends.push({ fig: fi, cls: fig.className, lists: lists.length, inSvg, after, items });
  });
  // Text over lines: every chart text of an svg against the lines drawn in
  // it (the series, the capacity, the baseline, each OOM), sampled about
  // every screen px along the path, except the line the text labels: a
  // text in the line's own group (the capacity's label, an OOM's label),
  // and the baseline's label over the baseline. The charts' paths are
  // absolute M, L, H and V moves, read from their d; any other path is
  // sampled with getPointAtLength (slow on long paths).
  const vertices = (d) => {
    const runs = [], tok = d.match(/[A-Za-z]|-?[\d.]+(?:e-?\d+)?/g) || [];
    let x = 0, y = 0, cmd = '', run = null;
    for (let i = 0; i < tok.length;) {
      if (/[A-Za-z]/.test(tok[i])) { cmd = tok[i++]; if (!/[MLHV]/.test(cmd)) return null; continue; }
      if (cmd === 'M') { x = +tok[i++]; y = +tok[i++]; run = [[x, y]]; runs.push(run); cmd = 'L'; continue; }
      if (cmd === 'L') { x = +tok[i++]; y = +tok[i++]; }
      else if (cmd === 'H') x = +tok[i++];
      else if (cmd === 'V') y = +tok[i++];
      else return null;
      if (!run) return null;
      run.push([x, y]);
    }
    return runs;
  };
  const overLines = [];
  document.querySelectorAll('figure.chart > svg').forEach((svg) => {
    const lines = [];
    const add = (p, what, group) => { if (p && p.getTotalLength) lines.push({ p, what, group }); };
    svg.querySelectorAll('path.vr-series').forEach((p) => add(p, p.getAttribute('class').split(' ').find(c => /^vr-series-\d/.test(c)), null));
    svg.querySelectorAll('g.vr-capacity > path[stroke-dasharray]').forEach((p) => add(p, 'capacity', p.parentElement));
    svg.querySelectorAll('g.vr-baseline > path').forEach((p) => add(p, 'baseline', p.parentElement));
    svg.querySelectorAll('g.vr-oom > path').forEach((p) => add(p, 'OOM line', p.parentElement));
    const texts = Array.from(svg.querySelectorAll('text')).filter(t => shown(t) && textOf(t));
    for (const ln of lines) {
      const m = ln.p.getScreenCTM();
      if (!m) continue;
      const pts = [], scr = (q) => [m.a * q[0] + m.c * q[1] + m.e, m.b * q[0] + m.d * q[1] + m.f];
      const runs = vertices(ln.p.getAttribute('d') || '');
      if (runs) {
        for (const run of runs)
          for (let i = 0; i < run.length; i++) {
            const b = scr(run[i]);
            if (i === 0) { pts.push(b); continue; }
            const a = scr(run[i - 1]), n = Math.ceil(Math.hypot(b[0] - a[0], b[1] - a[1]));
            for (let k = 1; k <= n; k++) pts.push([a[0] + (b[0] - a[0]) * k / n, a[1] + (b[1] - a[1]) * k / n]);
          }
      } else {
        const len = ln.p.getTotalLength(), n = Math.min(6000, Math.ceil(len) + 1);
        for (let i = 0; i < n; i++) {
          const q = ln.p.getPointAtLength(len * i / Math.max(1, n - 1));
          pts.push(scr([q.x, q.y]));
        }
      }
      for (const t of texts) {
        if (ln.group && ln.group.contains(t)) continue;
        if (ln.what === 'baseline' && t.classList.contains('vr-baseline-label')) continue;
        const r = t.getBoundingClientRect(), k = LINE_TOL;
        const hit = pts.find(([x, y]) => x > r.left + k && x < r.right - k && y > r.top + k && y < r.bottom - k);
        if (hit) overLines.push(JSON.stringify(textOf(t)) + ' over ' + ln.what + ' at ' + Math.round(hit[0]) + ',' + Math.round(hit[1]));
      }
    }
  });
  // Two texts overlap when their boxes share more than 1 px both ways.
  const overlaps = [];
  for (let i = 0; i < words.length; i++)
    for (let j = i + 1; j < words.length; j++) {
      const a = words[i], c = words[j];
      if (a.fig !== c.fig) continue;
      const w = Math.min(a.r, c.r) - Math.max(a.l, c.l), h = Math.min(a.b, c.b) - Math.max(a.t, c.t);
      if (w > 1 && h > 1) overlaps.push(JSON.stringify(a.text) + ' over ' + JSON.stringify(c.text));
    }
  const small = words.filter(x => x.px < 10).map(x => 'fig' + x.fig + ' ' + JSON.stringify(x.text) + ' ' + x.px + ' px');
  const verdict = document.getElementById('verdict');
  return JSON.stringify({
    words: words.length, overlaps, small, legends, overLines,
    width: innerWidth, height: innerHeight, dark,
    scrollWidth: Math.max(document.documentElement.scrollWidth, document.body.scrollWidth),
    wide: pastEdge(vw),
    verdict: box(verdict),
    diff: !!document.getElementById('diff'),
    diffTable: box(document.querySelector('#diff table')),
    chart: box(document.querySelector('figure.chart svg.vr-chart')),
    chartClass: (document.querySelector('figure.chart svg.vr-chart') || {getAttribute: () => null}).getAttribute('class'),
    timeline: box(document.querySelector('svg.vr-chart[data-x-range]')),
    body: contrastOf(document.body, 'color', bgOf(document.body)),
    verdictText: verdict ? contrastOf(verdict, 'color', bgOf(verdict)) : null,
    texts,
  });
})
"""


class Results:
    def __init__(self, out):
        self.out = out

    def check(self, ok, desc, detail=""):
        if ok:
            self.out.write("PASS\t%s\n" % desc)
        else:
            self.out.write("FAIL\t%s\t%s\n" % (desc, detail.replace("\t", " ").replace("\n", "; ")))
        self.out.flush()


def in_first_screen(b, vh):
    """Whether a box shows in the first screen: its top inside it and at
    least MIN_VISIBLE_PX of it (all of it when smaller) above the fold."""
    if not b:
        return False, "not in the page"
    if b["width"] <= 0 or b["height"] <= 0 or b["visibility"] == "hidden":
        return False, "no size or hidden: %r" % b
    shown = min(b["bottom"], vh) - max(b["top"], 0)
    if b["top"] < 0 or b["top"] >= vh or shown < min(MIN_VISIBLE_PX, b["height"]):
        return False, "top %.0f, bottom %.0f: below the first screen (height %d)" % (b["top"], b["bottom"], vh)
    return True, ""


def fmt_contrast(c):
    if "bad" in c:
        return "%s %r: %s" % (c["el"], c["text"], c["bad"])
    return "%s %r: %s on %s = %.2f (needs %g)" % (c["el"], c["text"], c["fg"], c["bg"], c["ratio"], c["need"])


def readable(c):
    return "bad" not in c and c["ratio"] >= c["need"]


class Page:
    """One report in its own tab."""

    def __init__(self, browser, url):
        self.b = browser
        self.url = url
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.target = target
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.cmd(domain + ".enable")
        self.events = []

    def cmd(self, method, params=None):
        return self.b.send(method, params, self.session)

    def load(self):
        self.cmd("Page.navigate", {"url": self.url})
        self.b.wait_event("Page.loadEventFired", self.session)

    def evaluate(self, expr):
        r = self.cmd("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise BrowserError("page script failed: %s" % json.dumps(r["exceptionDetails"])[:300])
        return r["result"].get("value")

    def collect(self):
        self.events += self.b.take_events(self.session)

    def console_errors(self):
        errs = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                errs.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                errs.append("log: %s" % p["entry"].get("text"))
            elif e["method"] == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                errs.append("exception: %s" % d.get("exception", {}).get("description", d.get("text")))
        return errs

    def requests(self):
        urls = []
        for e in self.events:
            if e["method"] == "Network.requestWillBeSent":
                u = e["params"]["request"]["url"]
                if u != self.url and not u.startswith("data:"):
                    urls.append(u)
        return urls

    def close(self):
        self.b.send("Target.closeTarget", {"targetId": self.target})


def save(path, data_b64):
    with open(path, "wb") as f:
        f.write(base64.b64decode(data_b64))


def check_layout(r, page, name, vp, shots, chart):
    label, w, h, scale, mobile, first_screen = vp
    page.cmd("Emulation.setDeviceMetricsOverride",
             {"width": w, "height": h, "deviceScaleFactor": scale, "mobile": mobile})
    page.cmd("Emulation.setEmulatedMedia", {"media": "screen", "features": [{"name": "prefers-color-scheme", "value": "light"}]})
    page.load()
    m = json.loads(page.evaluate("(%s)(%d, %g)" % (PAGE_JS, w, LINE_TOLERANCE_PX)))
    if first_screen and m["diff"]:
        # vramreport diff's page has no verdict banner: its first figures,
        # the peaks before and after, are what a reader looks for first.
        ok, why = in_first_screen(m["diffTable"], h)
        r.check(ok, "%s, %s: the diff's first table (the peaks) is in the first screen" % (name, label), why)
    elif first_screen:
        ok, why = in_first_screen(m["verdict"], h)
        r.check(ok, "%s, %s: #verdict is visible in the first screen" % (name, label), why)
    if chart and first_screen:
        ok, why = in_first_screen(m["chart"], h)
        r.check(ok, "%s, %s: the memory chart (figure.chart svg.vr-chart) starts in the first screen" % (name, label), why)
        # The device bar comes first (the report's order: verdict, bar,
        # timeline); the timeline must start in the first screen too.
        ok, why = in_first_screen(m["timeline"], h)
        r.check(ok, "%s, %s: the timeline (svg.vr-chart[data-x-range]) starts in the first screen" % (name, label), why)
        t = m["timeline"]
        print("# %s, %s: first chart class=%r; the timeline (svg.vr-chart[data-x-range]) %s"
              % (name, label, m["chartClass"], "top at %.0f px" % t["top"] if t else "absent"), flush=True)
    r.check(not m["overlaps"], "%s, %s: no two chart texts overlap (%d texts)" % (name, label, m["words"]),
            "%d overlaps: %s" % (len(m["overlaps"]), " | ".join(m["overlaps"][:6])))
    if w <= 400:
        r.check(not m["small"], "%s, %s: no chart text under 10 px" % (name, label),
                "%d under 10 px: %s" % (len(m["small"]), " | ".join(m["small"][:12])))
    check_legends(r, m, name, label, chart)
    r.check(not m["overLines"], "%s, %s: no chart text lies over a line it does not label" % (name, label),
            "%d: %s" % (len(m["overLines"]), " | ".join(m["overLines"][:6])))
    r.check(m["scrollWidth"] <= w, "%s, %s: no sideways scrolling" % (name, label),
            "the page is %d px wide in a %d px viewport; past the edge: %s" % (m["scrollWidth"], w, ", ".join(m["wide"])))
    slug = label.split()[0] if first_screen else label.split()[1]
    save(os.path.join(shots, "%s-%s.png" % (name, slug)),
         page.cmd("Page.captureScreenshot", {"format": "png"})["data"])
    return m


def check_legends(r, m, name, label, chart):
    """Each chart's legend is an HTML list under its svg, in its figure,
    shown, its text at least MIN_LEGEND_PX; none is left inside an svg. A
    report with a memory chart has at least one legend."""
    legends = m["legends"]
    inside = ["fig%d (%s): %d in the svg" % (g["fig"], g["cls"], g["inSvg"]) for g in legends if g["inSvg"]]
    r.check(not inside, "%s, %s: no chart legend is drawn inside its svg" % (name, label), "; ".join(inside))
    listed = [g for g in legends if g["lists"]]
    if chart:
        r.check(listed, "%s, %s: the charts' legends are HTML lists (ul.vr-legend) in their figures" % (name, label),
                "%d figures, none with a ul.vr-legend" % len(legends))
    bad = []
    for g in listed:
        if not g["after"]:
            bad.append("fig%d (%s): the list does not follow the svg" % (g["fig"], g["cls"]))
        for it in g["items"]:
            if not it["shown"] or not it["text"]:
                bad.append("fig%d %r: not shown" % (g["fig"], it["text"]))
            elif it["px"] < MIN_LEGEND_PX:
                bad.append("fig%d %r: %.1f px" % (g["fig"], it["text"], it["px"]))
    if listed:
        r.check(not bad, "%s, %s: every legend item is shown under its chart, at least %d px (%d items)"
                % (name, label, MIN_LEGEND_PX, sum(len(g["items"]) for g in listed)), " | ".join(bad[:8]))


def check_contrast(r, page, name, scheme, shots):
    page.cmd("Emulation.setEmulatedMedia", {"media": "screen", "features": [{"name": "prefers-color-scheme", "value": scheme}]})
    m = json.loads(page.evaluate("(%s)(1280, %g)" % (PAGE_JS, LINE_TOLERANCE_PX)))
    r.check(m["dark"] == (scheme == "dark"), "%s, %s mode: the page sees prefers-color-scheme: %s" % (name, scheme, scheme))
    r.check(readable(m["body"]), "%s, %s mode: body text is readable (contrast >= 4.5)" % (name, scheme), fmt_contrast(m["body"]))
    v = m["verdictText"]
    if not m["diff"]:
        r.check(v is not None and readable(v), "%s, %s mode: the verdict's text is readable" % (name, scheme),
                fmt_contrast(v) if v else "no #verdict")
    bad = [t for t in m["texts"] if not readable(t)]
    r.check(not bad, "%s, %s mode: every text (HTML and chart) is readable (WCAG AA)" % (name, scheme),
            "%d of %d unreadable, e.g. %s" % (len(bad), len(m["texts"]), " | ".join(fmt_contrast(t) for t in bad[:4])))
    if scheme == "dark":
        # Readable is not enough: a dark mode has a dark page under light text.
        body = m["body"]
        dark_bg = "bg" in body and sum(int(body["bg"][i:i + 2], 16) for i in (1, 3, 5)) < 3 * 128
        r.check(dark_bg, "%s, dark mode: the page turns dark" % name,
                "body background %s" % body.get("bg", body.get("bad")))
    save(os.path.join(shots, "%s-desktop-%s.png" % (name, scheme)),
         page.cmd("Page.captureScreenshot", {"format": "png"})["data"])


def check_print(r, page, name, shots):
    page.cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        pdf = base64.b64decode(page.cmd("Page.printToPDF", {"printBackground": True})["data"])
    except BrowserError as e:
        r.check(False, "%s: prints to PDF" % name, str(e))
        return
    with open(os.path.join(shots, "%s.pdf" % name), "wb") as f:
        f.write(pdf)
    r.check(pdf.startswith(b"%PDF-") and len(pdf) > 1000, "%s: prints to PDF" % name,
            "%d bytes starting %r" % (len(pdf), pdf[:8]))


def check_report(r, browser, name, path, chart, shots):
    url = "file://" + os.path.abspath(path)
    page = Page(browser, url)
    for vp in VIEWPORTS:
        check_layout(r, page, name, vp, shots, chart)
    page.cmd("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": False})
    for scheme in ("light", "dark"):
        check_contrast(r, page, name, scheme, shots)
    check_print(r, page, name, shots)
    # Let late events (a failed fetch, an error after load) arrive.
    page.evaluate("new Promise(r => setTimeout(r, 100))")
    page.collect()
    errs = page.console_errors()
    r.check(not errs, "%s: no console errors" % name, "; ".join(errs[:5]))
    reqs = page.requests()
    r.check(not reqs, "%s: no network requests (only the file itself)" % name,
            "%d requests: %s" % (len(reqs), ", ".join(reqs[:5])))
    page.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    ap.add_argument("--shots", default=".")
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("cases", nargs="+", metavar="NAME=FILE[:chart]")
    a = ap.parse_args()
    os.makedirs(a.shots, exist_ok=True)
    # Killed from outside (timeout(1)): still kill Chromium's group on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    r = Results(sys.stdout)
    profile = tempfile.mkdtemp(prefix="vr-chromium.")
    browser = None
    try:
        browser = Chromium(a.chromium, profile, a.timeout)
        version = browser.send("Browser.getVersion")
        print("# %s" % version.get("product"), flush=True)
        for case in a.cases:
            name, path = case.split("=", 1)
            chart = path.endswith(":chart")
            if chart:
                path = path[:-len(":chart")]
            check_report(r, browser, name, path, chart, a.shots)
        browser.send("Browser.close")
    except BrowserError as e:
        r.check(False, "Chromium answers", str(e))
        if browser:
            try:
                with open(os.path.join(profile, "chromium.log"), "rb") as f:
                    tail = f.read()[-1500:].decode("utf-8", "replace")
                print("# chromium's output: " + tail.replace("\n", "\n# "))
            except OSError:
                pass
        return 2
    finally:
        if browser:
            browser.close()
        subprocess.run(["rm", "-rf", profile])
    return 0


if __name__ == "__main__":
    sys.exit(main())
