"""test_report_layout.py DCSIM SOURCE_DIR - the HTML report lays out cleanly
on a phone (390 px) and a desktop (1280 px): headless Chromium loads a copy of
each report (a run, a compare table, a sweep, several traces, made with the
built dcsim on scenarios/examples/) inside an <iframe srcdoc> of the width
under test (PROBE_PAGE: Chromium's window is never narrower than 500 px),
whose inline script writes every element's getBoundingClientRect() as JSON
into <pre id="boxes"> once the page and its figures have loaded;
`--dump-dom` returns the page with it.
The test fails on
  - any two sibling blocks (headings, paragraphs, tables, figures, sections,
    the wrappers around tables) whose boxes overlap, and
  - any element whose box reaches past the viewport's right edge (or left of
    0), or a page wider than the viewport, except inside an element that
    scrolls horizontally itself (a table's <div class="wide">, overflow-x:
    auto): scrolling there is the wrapper's job, not the page's.
It also takes screenshots at both widths with analysis/screenshot_report.sh
(PNG, the window's size) and prints reports to PDF with it (%PDF header, the
page tree's count equal to the pages, more pages for a longer report). Exit status 77 (skipped) when chromium is not
installed. Run with Debian's /usr/bin/python3."""
import html as html_module
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

DCSIM = sys.argv[1]
SOURCE = sys.argv[2]
SHOT = os.path.join(SOURCE, "analysis", "screenshot_report.sh")
SKIPPED = 77
BROWSERS = ("chromium", "chromium-browser", "google-chrome")
WIDTHS = (390, 1280)            # a phone (iPhone 12-15 CSS width), a desktop
HEIGHT = 3000
SLACK_PX = 0.5                  # sub-pixel rounding

# Chromium's window is at least 500 px wide, so the report is laid out in an
# <iframe srcdoc> of the width under test (same origin as the probe page, whose
# script measures inside it; media queries and percentages see the frame's width).
PROBE_PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="frame" style="display:block;border:0;width:%(width)dpx;height:%(height)dpx"
 srcdoc="%(report)s"></iframe>
<script>
window.addEventListener("load", function () {
  var win = document.getElementById("frame").contentWindow, doc = win.document;
  var inline = /^inline(?!-block)|^table-(row|cell|column|header|footer)|^none$|^contents$/;
  var all = Array.prototype.slice.call(doc.body.querySelectorAll("*"));
  var index = new Map(all.map(function (e, i) { return [e, i]; }));
  function scroller(e) {
    for (var p = e.parentElement; p && p !== doc.body; p = p.parentElement) {
      var o = win.getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll" || o === "hidden") return true;
    }
    return false;
  }
  var boxes = all.map(function (e, i) {
    var r = e.getBoundingClientRect(), cs = win.getComputedStyle(e);
    return {i: i, tag: e.tagName.toLowerCase(), id: e.id || "",
            cls: e.getAttribute("class") || "", fig: e.getAttribute("data-figure") || "",
            parent: index.has(e.parentElement) ? index.get(e.parentElement) : -1,
            block: !inline.test(cs.display) || e.tagName === "IMG",
            scrolled: scroller(e), x: r.left, y: r.top + win.scrollY, w: r.width,
            h: r.height};
  });
  var pre = document.createElement("pre");
  pre.id = "boxes";
  pre.textContent = JSON.stringify({viewport: doc.documentElement.clientWidth,
                                    page: doc.documentElement.scrollWidth, boxes: boxes});
  document.body.appendChild(pre);
});
</script></body></html>
"""


def browser():
    return next((b for b in BROWSERS if shutil.which(b)), None)


def dcsim(*args):
    return subprocess.run([DCSIM, *args], check=True, capture_output=True, text=True)


def measure(html, width, workdir):
    """{viewport, page, boxes} of html laid out at width px by headless Chromium."""
    with open(html, encoding="utf-8") as f:
        text = f.read()
    probe = os.path.join(workdir, f"probe-{width}-{os.path.basename(html)}")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(PROBE_PAGE % {"width": width, "height": HEIGHT,
                              "report": html_module.escape(text, quote=True)})
    profile = tempfile.mkdtemp(dir=workdir)
    r = subprocess.run([browser(), "--headless=new", "--disable-gpu", "--no-sandbox",
                        "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run",
                        f"--user-data-dir={profile}", f"--window-size={max(width, 500) + 20},{HEIGHT + 20}",
                        "--virtual-time-budget=10000", "--dump-dom", f"file://{probe}"],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="boxes">(.*?)</pre>', r.stdout, re.S)
    if not m:
        raise AssertionError(f"no boxes from chromium at {width} px: {r.stderr[-500:]}")
    return json.loads(html_module.unescape(m.group(1)))


def describe(b):
    return (f"<{b['tag']}{'#' + b['id'] if b['id'] else ''}"
            f"{' .' + b['cls'] if b['cls'] else ''}{' ' + b['fig'] if b['fig'] else ''}> "
            f"x {b['x']:.0f}..{b['x'] + b['w']:.0f}, y {b['y']:.0f}..{b['y'] + b['h']:.0f}")


def overlaps(boxes):
    """Pairs of sibling blocks whose boxes intersect (both with an area)."""
    by_parent = {}
    for b in boxes:
        if b["block"] and b["w"] > SLACK_PX and b["h"] > SLACK_PX:
            by_parent.setdefault(b["parent"], []).append(b)
    found = []
    for kids in by_parent.values():
        for i, a in enumerate(kids):
            for b in kids[i + 1:]:
                w = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
                h = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
                if w > SLACK_PX and h > SLACK_PX:
                    found.append(f"{describe(a)} overlaps {describe(b)}")
    return found


def overflows(layout):
    """Elements (outside a horizontal scroller) past the viewport, and the page's width."""
    vw = layout["viewport"]
    boxes = layout["boxes"]

    def out(b):
        return (not b["scrolled"] and b["w"] > 0
                and (b["x"] + b["w"] > vw + SLACK_PX or b["x"] < -SLACK_PX))
    # the outermost element past the edge, not each of its descendants
    found = [f"{describe(b)} past the {vw} px viewport" for b in boxes
             if out(b) and not (b["parent"] >= 0 and out(boxes[b["parent"]]))]
    if layout["page"] > vw:
        found.append(f"the page is {layout['page']} px wide in a {vw} px viewport")
    return found


class Layout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.dir = cls.tmp.name
        ex = os.path.join(SOURCE, "scenarios", "examples")
        # 2,048 of the example's GPUs keep the step tier quick (as test_report.py)
        small = ("--set", "cluster/gpu/@count=2048", "--set", "job/parallelism/@zero=3",
                 "--set", "job/parallelism/@global-batch=256")
        run = os.path.join(d, "run.h5")
        dcsim("run", os.path.join(ex, "superpod-guian.xml"), "--quiet", *small, "-o", run)
        other = os.path.join(d, "run30.h5")
        dcsim("run", os.path.join(ex, "superpod-guian.xml"), "--quiet", *small,
              "--set", "checkpoint/@interval=30min", "-o", other)
        # the Llama 3 failure inventory with its MFU given: no step tier, quick
        llama = (os.path.join(ex, "llama3-failures.xml"), "--set", "job/training/@mfu=40%")
        sites = os.path.join(d, "sites.h5")
        dcsim("compare", *llama, "--vary", "site=zhongwei,shaoguan,wuhu,tianfu", "-o", sites)
        sweep = os.path.join(d, "sweep.h5")
        dcsim("sweep", *llama, "--quiet", "--grid", "checkpoint/@interval=10min,30min,1h",
              "--grid", "reliability/@scale=1,2", "--replicas", "3", "-o", sweep)
        cls.reports = {}
        for name, inputs in (("run", [run]), ("compare", [sites]), ("sweep", [sweep]),
                             ("traces", [run, other, sites])):
            out = os.path.join(d, f"{name}.html")
            dcsim("report", *inputs, "-o", out)
            cls.reports[name] = out

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_overlap_no_overflow(self):
        for name, html in sorted(self.reports.items()):
            for width in WIDTHS:
                with self.subTest(report=name, width=width):
                    layout = measure(html, width, self.dir)
                    self.assertEqual(layout["viewport"], width)   # the width asked for
                    boxes = layout["boxes"]
                    # the report's parts were measured: every figure and table
                    with open(html, encoding="utf-8") as f:
                        text = f.read()
                    self.assertEqual(sum(b["tag"] == "figure" for b in boxes),
                                     text.count("<figure"))
                    self.assertEqual(sum(b["tag"] == "table" for b in boxes),
                                     text.count("<table"))
                    self.assertGreater(min(b["h"] for b in boxes if b["tag"] == "img"), 50)
                    problems = overlaps(boxes) + overflows(layout)
                    self.assertEqual(problems, [], "\n".join(problems[:20]))

    def test_the_checks_catch_overlap_and_overflow(self):
        """The same measurement fails a page built to overlap and overflow."""
        bad = os.path.join(self.dir, "bad.html")
        with open(bad, "w", encoding="utf-8") as f:
            f.write("<!DOCTYPE html><html><head><meta name=\"viewport\" "
                    "content=\"width=device-width\"></head><body>"
                    "<h2>a</h2><table style=\"margin-top:-30px\"><tr><td>x</td></tr></table>"
                    "<div class=\"wide\" style=\"overflow-x:auto\"><table style=\"width:2000px\">"
                    "<tr><td>scrolls inside</td></tr></table></div>"
                    "<p style=\"width:2000px\">too wide</p></body></html>")
        layout = measure(bad, 390, self.dir)
        self.assertEqual(len(overlaps(layout["boxes"])), 1, overlaps(layout["boxes"]))
        found = overflows(layout)
        self.assertTrue(any(s.startswith("<p>") for s in found), found)
        self.assertFalse(any("scrolls" in s or "width:2000px" in s for s in found))
        self.assertEqual(sum(1 for s in found if s.startswith("<table")), 0, found)

    def test_screenshots_at_both_widths(self):
        import matplotlib.image
        for name in ("run", "compare"):
            for width in WIDTHS:
                with self.subTest(report=name, width=width):
                    png = os.path.join(self.dir, f"{name}-{width}.png")
                    r = subprocess.run(["sh", SHOT, self.reports[name], png, str(width),
                                        str(HEIGHT)], capture_output=True, text=True,
                                       timeout=120)
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertEqual(matplotlib.image.imread(png).shape[:2], (HEIGHT, width))

    def pdf_pages(self, name):
        pdf = os.path.join(self.dir, f"{name}.pdf")
        r = subprocess.run(["sh", SHOT, self.reports[name], pdf], capture_output=True, text=True,
                           timeout=180)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(pdf, "rb") as f:
            data = f.read()
        self.assertEqual(data[:5], b"%PDF-")
        self.assertIn(b"%%EOF", data[-1024:])
        pages = len(re.findall(rb"/Type\s*/Page\b", data))
        # the page tree's root counts every page
        self.assertEqual(pages, max(int(n) for n in re.findall(rb"/Count\s+(\d+)", data)))
        return pages

    def test_pdf(self):
        """screenshot_report.sh REPORT.html OUT.pdf prints the report (A4):
        several pages for one run, more for two runs and a compare table."""
        one = self.pdf_pages("run")
        self.assertGreaterEqual(one, 2)
        self.assertGreater(self.pdf_pages("traces"), one)


if __name__ == "__main__":
    if not browser():
        print("SKIP: no chromium (Debian: apt install chromium)")
        sys.exit(SKIPPED)
    unittest.main(argv=sys.argv[:1], verbosity=2)
