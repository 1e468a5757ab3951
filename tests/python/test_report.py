"""test_report.py DCSIM SOURCE_DIR - `dcsim report` end to end: every number
in the HTML report equals the trace's, every figure the trace supports is
embedded as a self-contained SVG, several traces (and `dcsim compare`
tables) are compared side by side, the printed summary is the trace's, a
trace of an unknown format version, a truncated or damaged trace (or one that
crashes the HDF5 library) fails in one line with exit status 2 and no
report, and the same traces give the same bytes. Run with Debian's
/usr/bin/python3."""
import base64
import html.parser
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

DCSIM = sys.argv[1]
SOURCE = sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "analysis"))
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import dcsim_report  # noqa: E402
import dcsim_units  # noqa: E402

DATA_SVG = "data:image/svg+xml;base64,"


def dcsim(*args, check=True):
    return subprocess.run([DCSIM, *args], check=check, capture_output=True, text=True)


class ReportParser(html.parser.HTMLParser):
    """The report's numbers and images: cells with data-metric/data-value (by
    table id), cells with data-cause, and every <img> with its figure name."""

    def __init__(self):
        super().__init__()
        self.cells = {}          # table id -> [(attrs dict)]
        self.images = []         # (figure name, src)
        self.table = None
        self.figure = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("id")
            self.cells.setdefault(self.table, [])
        elif tag == "td" and ("data-value" in a):
            self.cells[self.table].append(a)
        elif tag == "figure":
            self.figure = a.get("data-figure")
        elif tag == "img":
            self.images.append((self.figure, a.get("src", "")))

    def handle_endtag(self, tag):
        if tag == "table":
            self.table = None


def parse(path):
    p = ReportParser()
    with open(path, encoding="utf-8") as f:
        p.feed(f.read())
    return p


def h5_summary(path):
    with h5py.File(path, "r") as f:
        return {name: f["summary"][name][()] for name in f["summary"]}


def exact(value):
    """The repr the report writes in data-value."""
    return repr(value.item() if hasattr(value, "item") else value)


class Report(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.dir = cls.tmp.name
        # The built-in default and the SuperPOD example time the iteration with
        # the step tier, about 2 s per run on 16,384 GPUs in Release and ten
        # times that under ASan. No assertion here depends on how the
        # iteration is timed, only on which tables the trace has (/step, and
        # /energy/hourly from the site): the traces that must have /step run
        # on 2,048 of those GPUs (ZeRO 3 to fit 80 GB at data parallelism 16,
        # 256 sequences keep 16 micro-batches per replica), those that need
        # no /step run tests/scenarios/no-fabric.xml or give the MFU
        # (docs/testing.md).
        small = ("--set", "cluster/gpu/@count=2048", "--set", "job/parallelism/@zero=3",
                 "--set", "job/parallelism/@global-batch=256")
        no_fabric = os.path.join(SOURCE, "tests/scenarios/no-fabric.xml")
        # the default on its fabric (the step tier) at its site
        cls.default = os.path.join(d, "default.h5")
        dcsim("run", "--quiet", *small, "-o", cls.default)
        cls.other = os.path.join(d, "seed7.h5")
        dcsim("run", "--quiet", *small, "--seed", "7", "--set", "checkpoint/@interval=30min",
              "-o", cls.other)
        # the default job on the SuperPOD fabric at Gui'an: /step and /energy/hourly
        cls.full = os.path.join(d, "full.h5")
        dcsim("run", os.path.join(SOURCE, "scenarios/examples/superpod-guian.xml"), "--quiet",
              *small, "-o", cls.full)
        # failures by cause: the Llama 3 inventory on 16,384 GPUs, the MFU given
        # (the step tier's iteration does not change how failures are counted)
        cls.causes = os.path.join(d, "causes.h5")
        dcsim("run", os.path.join(SOURCE, "scenarios/examples/llama3-failures.xml"), "--quiet",
              "--set", "job/training/@mfu=42%", "-o", cls.causes)
        cls.sites = os.path.join(d, "sites.h5")
        dcsim("compare", no_fabric, "--vary", "site=zhongwei,shaoguan", "-o", cls.sites)
        cls.no_fabric = no_fabric

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, *paths, name="report.html", extra=()):
        out = os.path.join(self.dir, name)
        r = dcsim("report", *paths, "-o", out, *extra, check=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, "")
        return out, r.stdout

    def assert_summary_cells(self, cells, trace_path, trace_index=None):
        summary = h5_summary(trace_path)
        mine = [c for c in cells if trace_index is None or c.get("data-trace") == str(trace_index)]
        got = {c["data-metric"]: c["data-value"] for c in mine}
        self.assertEqual(len(got), len(mine), "a metric appears twice")
        for name, value in summary.items():
            self.assertIn(name, got, name)
            self.assertEqual(got[name], exact(value), name)
        return got

    def assert_svg_images(self, images, names):
        self.assertEqual([n for n, _ in images], names)
        for name, src in images:
            self.assertTrue(src.startswith(DATA_SVG), name)
            svg = base64.b64decode(src[len(DATA_SVG):], validate=True)
            self.assertTrue(svg.lstrip().startswith((b"<?xml", b"<svg")), name)
            self.assertIn(b"</svg>", svg, name)
            self.assertGreater(len(svg), 10_000, name)
            # self-contained: nothing fetched from elsewhere
            self.assertIsNone(re.search(rb'(href|src)="(https?:|file:|//)', svg), name)

    def test_single_report_numbers_are_the_trace(self):
        out, stdout = self.report(self.full)
        p = parse(out)
        got = self.assert_summary_cells(p.cells["summary"], self.full)
        self.assertEqual(set(got), set(h5_summary(self.full)))   # nothing made up
        self.assert_svg_images(p.images, ["time_breakdown", "campaign_timeline",
                                          "step_timeline", "tier_utilisation", "power_pue"])
        # the printed summary carries the same numbers, formatted as dcsim run does
        summary = h5_summary(self.full)
        for name in ("time_to_train_s", "ettr_frac", "iterations", "it_energy_j", "pue_frac"):
            line = next(x for x in stdout.splitlines() if x.split()[:1] == [name])
            self.assertEqual(line.split()[1], dcsim_report.format_value(summary[name]), name)
        self.assertIn(f"report written to {out}", stdout)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        self.assertNotRegex(text, r'(href|src)="(https?:|file:|//)')   # no outside resources
        with h5py.File(self.full, "r") as f:
            self.assertIn(f.attrs["event_digest"].decode()
                          if isinstance(f.attrs["event_digest"], bytes)
                          else str(f.attrs["event_digest"]), text)

    def test_default_trace_figures(self):
        out, _ = self.report(self.default, name="default.html")
        p = parse(out)
        self.assert_summary_cells(p.cells["summary"], self.default)
        # the default runs on a fabric (the step tier) at a site: every figure
        # a single trace supports
        self.assert_svg_images(p.images, ["time_breakdown", "campaign_timeline", "step_timeline",
                                          "tier_utilisation", "power_pue"])
        # a trace without /step or /energy (an MFU given, no fabric, no site)
        plain = os.path.join(self.dir, "no-fabric.h5")
        dcsim("run", self.no_fabric, "--quiet", "-o", plain)
        out, _ = self.report(plain, name="no-fabric.html")
        self.assert_svg_images(parse(out).images, ["time_breakdown", "campaign_timeline"])

    def test_failures_by_cause_are_the_events(self):
        out, stdout = self.report(self.causes, name="causes.html")
        p = parse(out)
        with h5py.File(self.causes, "r") as f:
            ev = f["campaign/events"][()]
            causes = [c.decode() if isinstance(c, bytes) else c
                      for c in f["campaign/events"].attrs["causes"]]
            kinds = h5py.check_enum_dtype(f["campaign/events"].dtype["kind"])
            failures = int(f["summary/failures"][()])
        fails = ev[ev["kind"] == kinds["failure"]]
        rows = {c["data-cause"]: int(c["data-value"]) for c in p.cells["causes"]}
        self.assertEqual(sum(rows.values()), failures)
        for index, name in enumerate(causes):
            self.assertEqual(rows.get(name, 0), int(np.sum(fails["cause"] == index)), name)
        self.assertIn("failures by cause", stdout)

    def test_comparison_side_by_side(self):
        out, stdout = self.report(self.default, self.other, self.sites, name="cmp.html")
        p = parse(out)
        cells = p.cells["comparison"]
        a = self.assert_summary_cells(cells, self.default, 0)
        b = self.assert_summary_cells(cells, self.other, 1)
        self.assertNotEqual(a["time_to_train_s"], b["time_to_train_s"])
        self.assertEqual(sorted(n for n, _ in p.images).count("campaign_timeline"), 2)
        self.assertEqual([n for n, _ in p.images][-1], "site_comparison")
        # the compare table's cells are the file's
        with h5py.File(self.sites, "r") as f:
            table = f["compare"][()]
            columns = [c for c in table.dtype.names if c != "variant"]
            rows = [c.decode() if isinstance(c, bytes) else c for c in table["variant"]]
        cells = p.cells["compare-0"]
        self.assertEqual(len(cells), len(rows) * len(columns))
        for c in cells:
            i, j = rows.index(c["data-variant"]), columns.index(c["data-metric"])
            self.assertEqual(c["data-value"], repr(float(table[i][columns[j]])))
        self.assertIn("seed7.h5", stdout)
        self.assertIn("site=shaoguan", stdout)

    def test_goodput_curve_option(self):
        g = os.path.join(self.dir, "goodput.json")
        with open(g, "w", encoding="utf-8") as f:
            f.write(dcsim("goodput", self.no_fabric, "--json", "--replicas", "2",
                          "--steps", "3").stdout)
        out, _ = self.report(self.default, name="gp.html", extra=("--goodput", g))
        self.assertEqual([n for n, _ in parse(out).images][-1], "goodput")

    def test_sweep_file(self):
        sweep = os.path.join(self.dir, "sweep.h5")
        dcsim("sweep", self.no_fabric, "--quiet", "--grid", "checkpoint/@interval=10min,30min",
              "--grid", "reliability/@scale=1,2", "--replicas", "3", "-o", sweep)
        out, stdout = self.report(sweep, name="sweep.html")
        p = parse(out)
        with h5py.File(sweep, "r") as f:
            pts = f["sweep/points"][()]
        cells = p.cells["sweep-0"]
        self.assertEqual(len(cells), 4 * len(dcsim_report.SWEEP_COLUMNS))
        for c in cells:
            row = pts[int(c["data-point"])]
            self.assertEqual(c["data-value"], repr(float(row[c["data-metric"] + "_mean"])))
        self.assertEqual([n for n, _ in p.images], ["variant_metrics", "goodput_sweep"])
        self.assertIn("4 points (dcsim sweep), 4 finished", stdout)
        # titled as a sweep; the conclusions rank the points by their means
        with open(out, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("<h1>dcsim sweep: a sweep of 4 points over checkpoint interval x "
                      "failure-rate scale</h1>", text)
        def text_of(v):
            return v.decode() if isinstance(v, bytes) else str(v)
        keys = [f"checkpoint/@interval={text_of(r['checkpoint/@interval'])},"
                f"reliability/@scale={text_of(r['reliability/@scale'])}" for r in pts]
        best = self.ranking(text)
        self.assertEqual(best["time_to_train_s"], keys[int(np.argmin(pts["time_to_train_s_mean"]))])
        self.assertEqual(best["ettr_frac"], keys[int(np.argmax(pts["ettr_frac_mean"]))])
        self.assert_why_adds_up(text, "time_to_train_s")
        self.assertIn("1x failure rate", text)          # legends in words, not scale=1
        self.assertIn("conclusions (a sweep of 4 points", stdout)

    def ranking(self, text):
        """{objective: the best variant's key} from the conclusions' ranking rows."""
        return {m.group(1): m.group(2) for m in
                re.finditer(r'<tr data-objective="([^"]+)" data-best="([^"]*)">', text)}

    def assert_why_adds_up(self, text, key, count=None):
        """Each why table of key: its parts add up to its gap (time is conserved,
        LMDI is exact)."""
        tables = re.findall(rf'<table class="why" data-key="{key}" data-gap="([^"]+)">(.*?)'
                            "</table>", text, re.S)
        self.assertTrue(tables, key)
        if count is not None:
            self.assertEqual(len(tables), count)
        for gap, body in tables:
            parts = [float(v) for v in re.findall(r'data-part="[^"]*" data-value="([^"]+)"',
                                                  body)]
            self.assertTrue(parts)
            # parts under 1e-6 of the values are left out as rounding
            self.assertAlmostEqual(sum(parts), float(gap), delta=1e-5 * abs(float(gap)) + 1)
        return tables

    def test_conclusions_of_a_compare_table(self):
        out, stdout = self.report(self.sites, name="sites.html")
        with open(out, encoding="utf-8") as f:
            text = f.read()
        with h5py.File(self.sites, "r") as f:
            table = f["compare"][()]
            columns = [c for c in table.dtype.names if c != "variant"]
            rows = [c.decode() if isinstance(c, bytes) else c for c in table["variant"]]
        best = self.ranking(text)
        for key in ("energy_cost_cny", "co2_kg"):
            col = table[key]
            self.assertEqual(best[key], rows[int(np.argmin(col))], key)
        # the conclusions come first, then the table; its figure of time, MFU, ETTR
        self.assertLess(text.index('class="conclusions"'), text.index('id="compare-0"'))
        self.assertEqual([n for n, _ in parse(out).images], ["variant_metrics", "site_comparison"])
        self.assertIn("<h1>dcsim compare: 2 variants</h1>", text)
        # the two sites differ by price and grid only: the cost gap is all price
        for _, body in self.assert_why_adds_up(text, "energy_cost_cny", 1):
            self.assertEqual(re.findall(r'data-part="([^"]*)"', body),
                             ["energy price (CNY per facility kWh)"])
        self.assert_why_adds_up(text, "co2_kg", 1)
        self.assertIn("conclusions (2 variants compared (sites.h5))", stdout)

    def test_conclusions_of_traces_and_human_units(self):
        out, _ = self.report(self.default, self.other, name="two.html")
        with open(out, encoding="utf-8") as f:
            text = f.read()
        a, b = h5_summary(self.default), h5_summary(self.other)
        best = self.ranking(text)
        faster = "default.h5" if a["time_to_train_s"] < b["time_to_train_s"] else "seed7.h5"
        self.assertEqual(best["time_to_train_s"], faster)
        # time is conserved: the time-to-train gap is the sum of its terms, the
        # compute term split by the iteration's parts (the same iteration here)
        for _, body in self.assert_why_adds_up(text, "time_to_train_s", 1):
            self.assertIn("rework after failures", body)
        # human units in the cells, the key and the raw value as tooltips
        p = parse(out)
        cell = next(c for c in p.cells["comparison"] if c["data-metric"] == "time_to_train_s")
        self.assertEqual(cell["title"], f"{dcsim_report.format_value(a['time_to_train_s'])} s")
        self.assertIn(f'>{dcsim_units.human(a["time_to_train_s"], "s")}</td>', text)
        self.assertIn('<td class="name" title="time_to_train_s">time to train</td>', text)
        self.assertNotIn("e+1", re.sub(r'(title|data-[a-z]+)="[^"]*"', "",
                                        text.split("<h2>Summary side by side</h2>")[1]
                                        .split("</table>")[0]))

    def test_same_traces_same_bytes(self):
        first, _ = self.report(self.full, self.sites, name="a.html")
        second, _ = self.report(self.full, self.sites, name="b.html")
        with open(first, "rb") as f, open(second, "rb") as g:
            self.assertEqual(f.read(), g.read())

    def test_unknown_format_version_fails_in_one_line(self):
        future = os.path.join(self.dir, "future.h5")
        shutil.copyfile(self.default, future)
        with h5py.File(future, "r+") as f:
            f.attrs["format_version"] = np.int32(99)
        out = os.path.join(self.dir, "future.html")
        before = set(os.listdir(self.dir))
        r = dcsim("report", future, "-o", out, check=False)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertTrue(r.stderr.startswith("dcsim report: error: "), r.stderr)
        self.assertIn("format version 99 is not supported", r.stderr)
        self.assertEqual(set(os.listdir(self.dir)), before)      # no report, no temporary

    def test_bad_inputs_fail_in_one_line(self):
        not_h5 = os.path.join(self.dir, "not.h5")
        with open(not_h5, "w", encoding="utf-8") as f:
            f.write("plain text\n")
        cases = ((os.path.join(self.dir, "missing.h5"), "no such file"),
                 (self.dir, "not a file"),
                 (not_h5, "not.h5: "))
        for path, message in cases:
            with self.subTest(path=path):
                r = dcsim("report", path, "-o", os.path.join(self.dir, "bad.html"), check=False)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
                self.assertIn(message, r.stderr)
                self.assertFalse(os.path.exists(os.path.join(self.dir, "bad.html")))
        r = dcsim("report", self.default, "-o", os.path.join(self.dir, "no/such/dir.html"),
                  check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("cannot write", r.stderr)
        r = subprocess.run([DCSIM, "report", self.default, "-o", os.path.join(self.dir, "x.html")],
                           capture_output=True, text=True,
                           env=dict(os.environ, DCSIM_PYTHON="/nonexistent/python3"))
        self.assertEqual(r.returncode, 1)
        self.assertIn("cannot run /nonexistent/python3", r.stderr)
        r = dcsim("report", check=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage: dcsim report", r.stderr)

    def assert_one_line_failure(self, r, path, out):
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertTrue(r.stderr.startswith(f"dcsim report: error: {path}"), r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_damaged_traces_fail_in_one_line(self):
        """A truncated trace, or one with bytes flipped (seeded), gives a report or
        one line `dcsim report: error: FILE...` with exit status 2: never a
        traceback (was 33 lines), even where h5py raises TypeError or the HDF5
        library crashes."""
        with open(self.default, "rb") as f:
            data = f.read()
        damaged = []
        for frac in (0.02, 0.5, 0.99):
            damaged.append((f"cut{int(frac * 100)}.h5", data[:int(len(data) * frac)]))
        rng = np.random.default_rng(1)
        for k in range(10):
            b = bytearray(data)
            for i in rng.integers(0, len(b), 50):
                b[i] ^= 0xFF
            damaged.append((f"flip{k}.h5", bytes(b)))
        failed = 0
        for name, content in damaged:
            path = os.path.join(self.dir, name)
            with open(path, "wb") as f:
                f.write(content)
            out = os.path.join(self.dir, name + ".html")
            r = dcsim("report", path, "-o", out, check=False)
            with self.subTest(name=name):
                if name.startswith("cut") or r.returncode != 0:
                    failed += 1
                    self.assert_one_line_failure(r, path, out)
        self.assertGreater(failed, 6)

    def test_crashed_reader_fails_in_one_line(self):
        """The HDF5 library can crash (SIGSEGV) on a damaged file before Python
        sees an error: dcsim report says so in one line, exit status 2."""
        crash = os.path.join(self.dir, "crash.sh")
        with open(crash, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\nkill -SEGV $$\n")
        os.chmod(crash, 0o755)
        out = os.path.join(self.dir, "crash.html")
        r = subprocess.run([DCSIM, "report", self.default, "-o", out], capture_output=True,
                           text=True, env=dict(os.environ, DCSIM_PYTHON=crash))
        self.assert_one_line_failure(r, self.default, out)
        self.assertEqual(r.stderr, f"dcsim report: error: {self.default}: the HDF5 reader "
                                   "crashed (Segmentation fault); the file is probably damaged\n")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
