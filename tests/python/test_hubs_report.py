"""test_hubs_report.py DCSIM SOURCE_DIR - the hubs figures and report
(analysis/dcsim_hubs.py, docs/hubs.md "Figures") against the file's tables
and `dcsim hubs --json` of the same run: the bars are /hubs/hubs' columns as
they are; the stacked areas over time sum, per hub and in all, to
/hubs/hubs' cost and CO2 (1e-9); the saving panel's policy totals are the
JSON run's totals and its baseline the JSON baseline's (1e-9), its saving
the JSON saving. Every figure renders as PNG and SVG; `dcsim report` on a
hubs file embeds the three figures and a table whose data-values are the
JSON's, and the same file gives the same bytes; a file without
/hubs/series is refused in one line. The example scenario (ten hubs, a
year: monthly bins) and the one-hub test scenario (20 days: daily bins).
Run with Debian's /usr/bin/python3."""
import html
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

DCSIM = os.path.abspath(sys.argv[1])
SOURCE = os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SOURCE, "analysis"))
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import dcsim_hubs as H  # noqa: E402

EXAMPLE = os.path.join(SOURCE, "scenarios", "examples", "hubs-east-west-year.xml")
ONE = os.path.join(SOURCE, "tests", "scenarios", "hubs-one.xml")
TRACE = os.path.join(SOURCE, "tests", "scenarios", "hubs-trace.xml")
REL = 1e-9


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def read(path, mode="r"):
    with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
        return f.read()


class HubsFigures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="dcsim_hubs_")
        cls.runs = {}
        for name, scn in (("example", EXAMPLE), ("one", ONE)):
            h5 = os.path.join(cls.tmp.name, name + ".h5")
            out = subprocess.run([DCSIM, "hubs", "--quiet", "--json", scn, "-o", h5],
                                 check=True, capture_output=True, text=True).stdout
            cls.runs[name] = (h5, json.loads(out))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def each(self):
        for name, (h5, doc) in self.runs.items():
            yield name, H.HubsRun(h5), doc

    def test_compare_bars_are_the_table(self):
        for name, run, doc in self.each():
            got = H.hubs_compare(run, os.path.join(self.tmp.name, name + "_c.svg"))
            for k in ("facility_energy_j", "cost", "co2_kg", "water_l", "utilisation"):
                want = [h[k] for h in doc["run"]["hubs"]]
                for a, b in zip(got[k], want):
                    self.assertTrue(close(a, b, 1e-14), (name, k, a, b))
            p90 = [h["wait_s"]["p90"] for h in doc["run"]["hubs"]]
            self.assertTrue(np.allclose(got["wait_p90_s"], p90, rtol=1e-14, atol=0))
            self.assertEqual(got["names"], [h["name"] for h in doc["run"]["hubs"]])

    def test_areas_sum_to_the_totals(self):
        for name, run, doc in self.each():
            got = H.hubs_over_time(run, os.path.join(self.tmp.name, name + "_t.svg"))
            bins = 13 if name == "example" else int(np.ceil(doc["horizon_s"] / 86400))
            self.assertEqual(got["cost"].shape, (len(run.names), bins))
            self.assertEqual(got["edges_s"][-1], doc["horizon_s"])
            for k in ("cost", "co2_kg"):
                for h, hub in enumerate(doc["run"]["hubs"]):
                    self.assertTrue(close(got[k][h].sum(), hub[k]), (name, k, h))
                self.assertTrue(close(got[k].sum(), doc["run"]["total"][k]), (name, k))

    def test_saving_is_the_json(self):
        for name, run, doc in self.each():
            got = H.hubs_saving(run, os.path.join(self.tmp.name, name + "_s.svg"))
            t, b = doc["run"]["total"], doc["baseline"]["total"]
            for k in ("cost", "co2_kg", "water_l", "serving_rtt_mean_s"):
                self.assertTrue(close(got["policy"][k], t[k]), (name, k))
                self.assertTrue(close(got["baseline"][k], b[k]), (name, k))
            for k in ("cost", "co2_kg", "water_l"):
                self.assertTrue(close(got["saving"][k], doc["saving"][k], 1e-9)
                                or abs(got["saving"][k] - doc["saving"][k]) < 1e-6, (name, k))
            rtt = -doc["saving"]["serving_rtt_mean_s_added"]
            self.assertTrue(abs(got["saving"]["serving_rtt_mean_s"] - rtt) < 1e-15)

    def test_png_and_svg_render(self):
        run = H.HubsRun(self.runs["example"][0])
        paths = H.all_figures(run, os.path.join(self.tmp.name, "figs"))
        self.assertEqual(len(paths), 2 * len(H.FIGURES))
        for p in paths:
            self.assertGreater(os.path.getsize(p), 1000, p)
        self.assertEqual(read(paths[0], "rb")[:8], b"\x89PNG\r\n\x1a\n")

    def report(self, *args):
        return subprocess.run([DCSIM, "report", *args], capture_output=True, text=True)

    def test_report(self):
        h5, doc = self.runs["example"]
        out = os.path.join(self.tmp.name, "r.html")
        p = self.report(h5, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        self.assertEqual(re.findall(r'data-figure="([a-z_]+)"', page), list(H.FIGURES))
        values = {m: float(v) for m, v in
                  re.findall(r'data-metric="([a-z0-9_]+)" data-value="([^"]+)"', page)}
        t, b = doc["run"]["total"], doc["baseline"]["total"]
        want = {"jobs": doc["jobs"], "cost": t["cost"], "co2_kg": t["co2_kg"],
                "water_l": t["water_l"], "baseline_cost": b["cost"],
                "saving_cost": doc["saving"]["cost"]}
        for k, v in want.items():
            self.assertTrue(close(values[k], v, 1e-9), (k, values[k], v))
        self.assertIn("dcsim hubs: cheapest", html.unescape(page))
        self.assertIn("saving_co2_kg", p.stdout)
        out2 = os.path.join(self.tmp.name, "r2.html")
        self.assertEqual(self.report(h5, "-o", out2).returncode, 0)
        self.assertEqual(read(out2, "rb"), read(out, "rb"))

    def test_old_file_refused(self):
        h5, _ = self.runs["one"]
        old = os.path.join(self.tmp.name, "old.h5")
        with h5py.File(h5, "r") as src, h5py.File(old, "w") as dst:
            for k, v in src.attrs.items():
                dst.attrs[k] = v
            g = dst.create_group("hubs")
            for k in ("policy", "hub_names", "origin_names", "horizon_s"):
                g.attrs[k] = src["hubs"].attrs[k]
            src.copy("hubs/hubs", g)
            src.copy("hubs/jobs", g)
        out = os.path.join(self.tmp.name, "old.html")
        p = self.report(old, "-o", out)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("without /hubs/series", p.stderr)
        self.assertFalse(os.path.exists(out))


class HubsTableFigures(unittest.TestCase):
    """A 2 x 2 sweep of the example (/hubs_sweep) and a compare of two hubs
    scenarios (/compare, hubs named differently): the figures' numbers are
    `dcsim hubs --set ... --json` of each point; the report embeds both
    figures and a row per point."""
    POLICIES = ("cheapest", "lowest-carbon")
    BACKLOGS = ("fluid", "gang")

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="dcsim_hubs_table_")
        cls.sweep = os.path.join(cls.tmp.name, "s.h5")
        subprocess.run([DCSIM, "sweep", EXAMPLE, "--grid", "hubs/@policy=" + ",".join(cls.POLICIES),
                        "--grid", "hubs/@backlog=" + ",".join(cls.BACKLOGS), "-o", cls.sweep, "-q"],
                       check=True, capture_output=True)
        cls.points = []
        for p in cls.POLICIES:
            for b in cls.BACKLOGS:
                out = subprocess.run([DCSIM, "hubs", "--quiet", "--json", EXAMPLE, "--set",
                                      "hubs/@policy=" + p, "--set", "hubs/@backlog=" + b],
                                     check=True, capture_output=True, text=True).stdout
                cls.points.append(json.loads(out))
        cls.compare = os.path.join(cls.tmp.name, "c.h5")
        subprocess.run([DCSIM, "compare", EXAMPLE, TRACE, "-o", cls.compare], check=True,
                       capture_output=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_variants_are_the_json(self):
        t = H.HubsTable(self.sweep)
        self.assertEqual((t.name, len(t)), ("hubs_sweep", 4))
        got = H.hubs_variants(t, os.path.join(self.tmp.name, "v.svg"))
        for i, doc in enumerate(self.points):
            tot, base = doc["run"]["total"], doc["baseline"]["total"]
            for k in ("cost", "co2_kg", "water_l"):
                self.assertTrue(close(got["policy"][k][i], tot[k]), (i, k))
                self.assertTrue(close(got["baseline"][k][i], base[k]), (i, k))
                self.assertTrue(close(got["saving"][k][i], doc["saving"][k]), (i, k))
            self.assertTrue(close(got["serving_rtt_mean_s"][i], tot["serving_rtt_mean_s"]), i)

    def test_jobs_are_the_json(self):
        t = H.HubsTable(self.sweep)
        got = H.hubs_jobs(t, os.path.join(self.tmp.name, "j.svg"))
        self.assertEqual(got["hubs"], [h["name"] for h in self.points[0]["run"]["hubs"]])
        for i, doc in enumerate(self.points):
            jobs = [h["jobs"] for h in doc["run"]["hubs"]]
            self.assertEqual(list(got["jobs"][i]), jobs, i)
            self.assertTrue(close(got["share"][i].sum(), 1.0, 1e-12), i)
            self.assertEqual(sum(jobs), doc["run"]["total"]["jobs"], i)
        # the policies place differently: the figure is not one row drawn four times
        self.assertNotEqual(list(got["jobs"][0]), list(got["jobs"][2]))

    def test_compare_of_two_scenarios(self):
        t = H.HubsTable(self.compare)
        self.assertEqual((t.name, len(t)), ("compare", 2))
        with h5py.File(self.compare, "r") as f:  # the hubs differ: no names, "hub K"
            self.assertNotIn("hub_names", f["compare"].attrs)
        self.assertEqual(t.hubs, [f"hub {k + 1}" for k in range(10)])
        got = H.hubs_jobs(t, os.path.join(self.tmp.name, "j2.svg"))
        self.assertEqual(got["jobs"][1].sum(), 5)  # hubs-trace.xml: 5 jobs, NaN past its 2 hubs
        self.assertEqual(list(got["jobs"][1][2:]), [0.0] * 8)

    def test_report(self):
        out = os.path.join(self.tmp.name, "r.html")
        p = subprocess.run([DCSIM, "report", self.sweep, self.compare, "-o", out],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        for fig in H.TABLE_FIGURES:
            self.assertEqual(page.count(f'data-figure="{fig}"'), 2, fig)
        self.assertIn("Hubs sweep", page)
        self.assertIn("Hubs comparison", page)
        self.assertIn("/hubs_sweep, 4 rows (hubs)", p.stdout)
        for i, doc in enumerate(self.points):
            want = f"cost {doc['run']['total']['cost'] / 1e6:.6g} M CNY"
            self.assertIn(want, p.stdout, i)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
