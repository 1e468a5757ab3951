"""test_cluster_report.py DCSIM SOURCE_DIR - the cluster figures and report
(analysis/dcsim_cluster.py, docs/analysis.md "Job streams") against
`dcsim cluster --json` of the same run: the time average of the plotted
utilisation is the JSON utilisation and of the plotted queue the mean queue
(to 1e-9), each JSON bin the average of the plotted steps over its width; the
drawn CDFs' nearest-rank quantiles are the JSON's P50/P90/P99 and its 20 CDF
points (the same doubles, to the JSON's printing: an ulp); the plotted power integrates to the IT and facility energy;
the fragmentation panel's extra leaves give jobs_over_leaves and
excess_leaves_mean, its stretches the interference GPU-hours. `dcsim report`
on a cluster file embeds the four figures and a table whose data-values are
the JSON's; the same file gives the same bytes; a layout version it does not
know is refused in one line with nothing written. Small runs:
tests/scenarios/cluster-energy-site.xml (a site), cluster-energy.xml (none)
and the interference example. Run with Debian's /usr/bin/python3."""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

DCSIM = os.path.abspath(sys.argv[1])
SOURCE = os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SOURCE, "analysis"))
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import dcsim_cluster as C  # noqa: E402

SITE = os.path.join(SOURCE, "tests", "scenarios", "cluster-energy-site.xml")
NOSITE = os.path.join(SOURCE, "tests", "scenarios", "cluster-energy.xml")
INTERF = os.path.join(SOURCE, "scenarios", "examples", "cluster-interference-leafspine.xml")
REL = 1e-9


def run(scn, path):
    out = subprocess.run([DCSIM, "cluster", "--quiet", "--json", scn, "-o", path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def read(path, mode="r"):
    with open(path, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
        return f.read()


def close(a, b, rel=REL):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def same(a, b):
    """Equal to the JSON's printing: cJSON prints 15 digits when they read back
    within an ulp (sim/app/summary.h), so a JSON number may be an ulp off the
    double the file holds."""
    return close(a, b, 2.3e-16)


class ClusterFigures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.runs = {}
        for name, scn in (("site", SITE), ("nosite", NOSITE), ("interf", INTERF)):
            path = os.path.join(cls.tmp.name, f"{name}.h5")
            cls.runs[name] = (run(scn, path), C.ClusterRun(path), path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def fig(self, name, fn, ext="svg"):
        return fn(self.runs[name][1], os.path.join(self.tmp.name, f"{name}_{fn.__name__}.{ext}"))

    def test_load_means(self):
        for name in self.runs:
            j, r, _ = self.runs[name]
            d = self.fig(name, C.cluster_load)
            self.assertTrue(close(d["utilisation_mean"], j["utilisation"]),
                            (name, d["utilisation_mean"], j["utilisation"]))
            self.assertTrue(close(d["queue_mean"], j["queue_mean"]), name)
            self.assertEqual(d["edges_s"][0], 0.0)
            self.assertTrue(same(d["edges_s"][-1], j["end_s"]))
            self.assertLessEqual(d["utilisation"].max(), 1.0)
            self.assertEqual(d["queue"].max(), j["queue_max"])

    def test_bins_are_the_steps_averaged(self):
        j, r, _ = self.runs["site"]
        d = self.fig("site", C.cluster_load)
        width, edges = j["bins"]["width_s"], d["edges_s"]
        for k, want in enumerate(j["bins"]["utilisation"]):
            lo, hi = k * width, min((k + 1) * width, j["end_s"])
            left, right = np.clip(edges[:-1], lo, hi), np.clip(edges[1:], lo, hi)
            got = float(np.dot(d["utilisation"], right - left)) / (hi - lo)
            self.assertTrue(abs(got - want) <= REL, (k, got, want))

    def test_cdf_quantiles(self):
        for name in self.runs:
            j, r, _ = self.runs[name]
            d = self.fig(name, C.cluster_cdf)
            self.assertEqual(len(d["wait_s"]), j["jobs"])
            self.assertTrue((np.diff(d["p"]) > 0).all() and d["p"][-1] == 1.0)
            for q, key in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99")):
                self.assertTrue(same(d["wait_q"][q], j["wait_s"][key]), (name, q))
                self.assertTrue(same(d["slowdown_q"][q], j["slowdown"][key]), (name, q))
            self.assertTrue(same(d["wait_s"][-1], j["wait_s"]["max"]))
            for p, w, s in zip(j["cdf"]["p"], j["cdf"]["wait_s"], j["cdf"]["slowdown"]):
                self.assertTrue(same(C.quantile(d["wait_s"], p), w), (name, p))
                self.assertTrue(same(C.quantile(d["slowdown"], p), s), (name, p))
            # the median read off the drawn steps: the first value reaching 0.5
            self.assertTrue(same(d["wait_s"][np.argmax(d["p"] >= 0.5)], j["wait_s"]["p50"]))

    def test_power_integrates_to_energy(self):
        j, r, _ = self.runs["site"]
        d = self.fig("site", C.cluster_power)
        self.assertTrue(close(d["it_energy_j"], j["energy"]["it_energy_j"]))
        self.assertTrue(close(d["facility_energy_j"], j["energy"]["facility_energy_j"]))
        self.assertTrue((d["facility_power_w"] >= d["it_power_w"]).all())
        j, r, _ = self.runs["nosite"]
        d = self.fig("nosite", C.cluster_power)
        self.assertIsNone(d["facility_power_w"])
        self.assertTrue(close(d["it_energy_j"], j["energy"]["it_energy_j"]))

    def test_placement_panel(self):
        for name in self.runs:
            j, r, _ = self.runs[name]
            d = self.fig(name, C.cluster_placement)
            extra = d["extra_leaves"]
            self.assertEqual(int((extra > 0).sum()), j["jobs_over_leaves"])
            self.assertTrue(close(float(extra.sum()) / len(extra), j["excess_leaves_mean"]))
            stretch = d["stretch"]
            self.assertTrue((stretch >= 1.0).all())
            if "interference" not in j:
                self.assertTrue((stretch == 1.0).all(), name)
                continue
            lost = float(((stretch - 1) * r.jobs["isolated_run_s"] * r.jobs["gpus"]).sum())
            self.assertTrue(close(lost / 3600, j["interference"]["cost_gpu_h"], 1e-6))
            self.assertGreater(lost, 0)
            self.assertTrue(same(float(np.sort(stretch)[-1]),
                                 j["interference"]["run_over_isolated"]["max"]))

    def test_png_and_same_bytes(self):
        paths = C.all_figures(self.runs["interf"][1], os.path.join(self.tmp.name, "a"))
        again = C.all_figures(self.runs["interf"][1], os.path.join(self.tmp.name, "b"))
        self.assertEqual(len(paths), 8)  # four figures, PNG and SVG
        for p, q in zip(paths, again):
            self.assertEqual(read(p, "rb"), read(q, "rb"), p)


class ClusterReport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.h5 = os.path.join(cls.tmp.name, "c.h5")
        cls.json = run(SITE, cls.h5)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, *args):
        return subprocess.run([DCSIM, "report", *args], capture_output=True, text=True)

    def test_report(self):
        out = os.path.join(self.tmp.name, "r.html")
        p = self.report(self.h5, "-o", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = read(out)
        figs = re.findall(r'data-figure="([a-z_]+)"', page)
        self.assertEqual(figs, list(C.FIGURES))
        self.assertIn("data:image/svg+xml;base64,", page)
        values = {m: float(v) for m, v in
                  re.findall(r'data-metric="([a-z0-9_]+)" data-value="([^"]+)"', page)}
        j, e = self.json, self.json["energy"]
        want = {"jobs": j["jobs"], "end_s": j["end_s"], "utilisation": j["utilisation"],
                "wait_p50_s": j["wait_s"]["p50"], "wait_p90_s": j["wait_s"]["p90"],
                "wait_p99_s": j["wait_s"]["p99"], "it_energy_j": e["it_energy_j"],
                "facility_energy_j": e["facility_energy_j"], "cost": e["cost"],
                "co2_kg": e["co2_kg"]}
        for k, v in want.items():
            self.assertTrue(same(values[k], v), (k, values[k], v))
        self.assertTrue(close(values["queue_mean"], j["queue_mean"]))
        self.assertTrue(close(values["slowdown_mean"], j["slowdown"]["mean"], 1e-12))
        self.assertIn("dcsim cluster: cluster-energy-site-test", html.unescape(page))
        self.assertIn("utilisation", p.stdout)
        out2 = os.path.join(self.tmp.name, "r2.html")
        self.assertEqual(self.report(self.h5, "-o", out2).returncode, 0)
        self.assertEqual(read(out2, "rb"), read(out, "rb"))

    def test_unknown_layout_refused(self):
        bad = os.path.join(self.tmp.name, "bad.h5")
        shutil.copy(self.h5, bad)
        with h5py.File(bad, "r+") as f:
            f["cluster"].attrs["layout_version"] = "9"
        out = os.path.join(self.tmp.name, "bad.html")
        p = self.report(bad, "-o", out)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertIn("layout_version '9'", p.stderr)
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
