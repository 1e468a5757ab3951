"""test_serve_report.py DCSIM SOURCE_DIR - the serving figures and report
(analysis/dcsim_serve.py, docs/serving.md "Report figures") against the
commands' own output. On `dcsim serve -o` of the example (two minutes of
traffic: every request kept, exact quantiles): the P50/P90/P99 marked on the
TTFT, TPOT and E2E CDFs are the --json quantiles (the same doubles, to the
JSON's printing: an ulp), the CDFs cover the finished requests and nothing
else; the load figure's time averages are the --json Little's L and mean KV
use (1e-9). On a rate sweep (/serve_sweep) and a compare -o table
(/compare): the throughput-latency curve's points are the --json rows, in
their order. `dcsim report` on the run and the sweep embeds the three
figures; a training compare table is not taken for a serving one, and a file
that is neither is refused in one line. Run with Debian's /usr/bin/python3."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

DCSIM = os.path.abspath(sys.argv[1])
SOURCE = os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SOURCE, "analysis"))
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import dcsim_serve as S  # noqa: E402
from dcsim_trace import TraceFormatError  # noqa: E402

EX = os.path.join(SOURCE, "scenarios", "examples", "serving-llama3-70b-h100.xml")
SHORT = ["--set", "serving/arrivals/@duration=120s"]
SMALL = ["--set", "cluster/gpu/@count=8"]  # 2 replicas: saturated past about 19 requests/s
RATES = "serving/arrivals/@rate=4/s,12/s,20/s,32/s"


def dcsim(*args):
    return subprocess.run([DCSIM, *args], check=True, capture_output=True, text=True).stdout


def same(a, b):
    """Equal to the JSON's printing (cJSON prints 15 digits when they read back
    within an ulp, sim/app/summary.h)."""
    return abs(a - b) <= 2.3e-16 * max(abs(a), abs(b), 1e-300)


class ServeFigures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="dcsim-serve-report-")
        cls.dir = cls.tmp.name
        cls.run_h5 = os.path.join(cls.dir, "run.h5")
        cls.json = json.loads(dcsim("serve", "--quiet", "--json", EX, *SHORT, "-o", cls.run_h5))
        cls.sweep_h5 = os.path.join(cls.dir, "rates.h5")
        cls.sweep = json.loads(dcsim("sweep", "--quiet", "--json", EX, *SHORT, *SMALL, "--grid",
                                     RATES, "-o", cls.sweep_h5))
        cls.cmp_h5 = os.path.join(cls.dir, "cmp.h5")
        cls.cmp = json.loads(dcsim("compare", "--json", EX, *SHORT, "--vary",
                                   "serving/arrivals/@rate=30/s,10/s", "-o", cls.cmp_h5))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_cdf_quantiles_are_the_json(self):
        run = S.load(self.run_h5)
        self.assertIsInstance(run, S.ServeRun)
        self.assertEqual(run.sample_every, 1)  # every request kept ...
        self.assertNotIn("quantile_rel_error", self.json)  # ... and exact quantiles
        got = S.serve_cdf(run, os.path.join(self.dir, "cdf.png"))
        self.assertTrue(os.path.getsize(got["path"]) > 0)
        self.assertEqual(len(got["ttft"]["x"]), self.json["finished"])
        self.assertEqual(len(got["e2e"]["x"]), self.json["finished"])
        n_tpot = int(np.sum(run.finished()["output"] >= 2))
        self.assertEqual(len(got["tpot"]["x"]), n_tpot)
        for name in ("ttft", "tpot", "e2e"):
            for q, key in ((0.5, "p50_s"), (0.9, "p90_s"), (0.99, "p99_s")):
                drawn, want = got[name]["q"][q], self.json[name][key]
                self.assertTrue(same(drawn, want), f"{name} {key}: drawn {drawn!r}, "
                                                   f"--json {want!r}")
                # the marked point lies on the drawn CDF: p(q) >= q, just below it < q
                x, p = got[name]["x"], got[name]["p"]
                i = int(np.searchsorted(x, drawn, side="right")) - 1
                self.assertGreaterEqual(p[i], q)
                self.assertTrue(i == 0 or x[i - 1] == x[i] or p[i - 1] < q)
            self.assertTrue(same(float(got[name]["x"][-1]), self.json[name]["max_s"]))

    def test_cdf_leaves_out_dropped(self):
        # a KV cache of 0.5 % of the memory left: the longest requests do not fit
        path = os.path.join(self.dir, "drop.h5")
        out = json.loads(dcsim("serve", "--quiet", "--json", EX, "--set",
                               "serving/arrivals/@duration=60s", "--set",
                               "serving/replica/@kv-fraction=0.005", "-o", path))
        self.assertGreater(out["dropped"], 0)
        run = S.ServeRun(path)
        self.assertEqual(len(run.requests), out["arrived"])
        got = S.serve_cdf(run, os.path.join(self.dir, "drop.svg"))
        self.assertEqual(len(got["ttft"]["x"]), out["finished"])
        for name in ("ttft", "tpot", "e2e"):
            self.assertTrue(same(got[name]["q"][0.99], out[name]["p99_s"]))

    def test_load_averages_are_the_json(self):
        got = S.serve_load(S.load(self.run_h5), os.path.join(self.dir, "load.svg"))
        self.assertAlmostEqual(got["in_system_mean"] / self.json["little_l"], 1.0, delta=1e-9)
        self.assertAlmostEqual(got["kv_util_mean"] / self.json["kv_util_mean"], 1.0, delta=1e-9)
        self.assertEqual(len(got["edges_s"]), len(got["kv_util"]) + 1)

    def check_curve(self, path, doc, name):
        table = S.load(path)
        self.assertIsInstance(table, S.ServeTable)
        self.assertEqual(table.name, name)
        got = S.serve_curve(table, os.path.join(self.dir, name + ".png"))
        rows = doc["variants"]
        self.assertEqual(got["labels"], [r["variant"] for r in rows])
        for k in S.CURVE_COLUMNS:
            self.assertEqual(len(got[k]), len(rows))
            for drawn, r in zip(got[k], rows):
                self.assertTrue(same(float(drawn), r[k]), f"{name} {k}: {drawn!r} != {r[k]!r}")
        return got

    def test_curve_is_the_sweep(self):
        got = self.check_curve(self.sweep_h5, self.sweep, "serve_sweep")
        # one point per rate, throughput rising to saturation, P99 TTFT not falling
        self.assertEqual(len(got["labels"]), 4)
        self.assertTrue(np.all(np.diff(got["requests_per_s"]) > 0))
        self.assertTrue(np.all(np.diff(got["ttft_p99_s"]) >= 0))

    def test_curve_is_the_compare(self):
        self.check_curve(self.cmp_h5, self.cmp, "compare")

    def test_all_figures_and_report(self):
        paths = S.all_figures(S.load(self.run_h5), os.path.join(self.dir, "figs"),
                              formats=("svg", "png"))
        paths += S.all_figures(S.load(self.sweep_h5), os.path.join(self.dir, "figs"),
                               formats=("svg",))
        self.assertEqual(sorted(os.path.basename(p) for p in paths),
                         ["serve_cdf.png", "serve_cdf.svg", "serve_curve.svg", "serve_load.png",
                          "serve_load.svg"])
        html_path = os.path.join(self.dir, "report.html")
        r = subprocess.run([DCSIM, "report", self.run_h5, self.sweep_h5, "-o", html_path],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(html_path, encoding="utf-8") as f:
            page = f.read()
        for name in ("serve_cdf", "serve_load", "serve_curve"):
            self.assertIn(f'data-figure="{name}"', page)
        self.assertIn("dcsim serve", r.stdout)

    def test_not_serving(self):
        path = os.path.join(self.dir, "other.h5")
        with h5py.File(path, "w") as f:
            f.create_dataset("compare", data=np.zeros((1, 1)))
            f["compare"].attrs["columns"] = ["time_to_train_s"]
        self.assertIsNone(S.kind_of(path))
        with self.assertRaises(TraceFormatError):
            S.load(path)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
