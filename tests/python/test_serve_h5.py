"""test_serve_h5.py DCSIM SOURCE_DIR - `dcsim serve -o FILE.h5` read back
with h5py (docs/trace-format.md "/serve"): one row per request in arrival
order, each finished one's TTFT and E2E giving the JSON's means and maxima,
the prefix hits the JSON's count, a disaggregated run's KV-transfer
attributes the JSON's "disaggregated" figures; the series' counts sum to the totals, its
levels integrate to Little's L x the run's end, its KV use to the mean; the
same run gives the same bytes; the file is refused over the scenario and
over a directory, and no temporary is left. Small runs:
tests/scenarios/serving-prefix.xml and serving-disagg.xml. Run with Debian's
/usr/bin/python3."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

DCSIM = sys.argv[1]
SOURCE = sys.argv[2]
import h5py  # noqa: E402
import numpy as np  # noqa: E402

PREFIX = os.path.join(SOURCE, "tests", "scenarios", "serving-prefix.xml")
DISAGG = os.path.join(SOURCE, "tests", "scenarios", "serving-disagg.xml")


def run(scn, path, *extra):
    out = subprocess.run([DCSIM, "serve", "--quiet", "--json", scn, "-o", path, *extra],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


class ServeTables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.tmp.name, "s.h5")
        cls.json = run(PREFIX, cls.path, "--bin", "2s")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check_requests(self, path, d):
        with h5py.File(path, "r") as f:
            self.assertEqual(f.attrs["kind"], "serve")
            g = f["serve"]
            self.assertEqual(int(g.attrs["sample_every"]), 1)
            self.assertEqual(int(g.attrs["arrived"]), d["arrived"])
            q = g["requests"][()]
        self.assertEqual(len(q), d["arrived"])
        self.assertTrue((q["seq"] == np.arange(len(q))).all())
        self.assertTrue((np.diff(q["arrival_s"]) >= 0).all())
        done = q[q["dropped"] == 0]
        self.assertEqual(len(done), d["finished"])
        ttft = done["first_token_s"] - done["arrival_s"]
        e2e = done["finish_s"] - done["arrival_s"]
        self.assertTrue((ttft > 0).all() and (e2e >= ttft).all())
        self.assertAlmostEqual(float(ttft.mean()) / d["ttft"]["mean_s"], 1, places=9)
        self.assertAlmostEqual(float(e2e.mean()) / d["e2e"]["mean_s"], 1, places=9)
        self.assertAlmostEqual(float(e2e.max()) / d["e2e"]["max_s"], 1, places=12)
        self.assertAlmostEqual(float(done["finish_s"].max()), d["end_s"], places=9)
        return q

    def test_requests(self):
        q = self.check_requests(self.path, self.json)
        p = self.json["prefix"]
        self.assertEqual(int(q["prefix_hit"].sum()), p["hits"])
        self.assertTrue(p["hits"] > 0)
        # one level: the levels cached are the hit flag
        self.assertTrue((q["prefix_levels_hit"] == q["prefix_hit"]).all())
        self.assertTrue((q["replica"][q["dropped"] == 0] < self.json["replicas"]).all())
        self.assertTrue((q["replica"] == q["prefill_replica"]).all())

    def test_series(self):
        with h5py.File(self.path, "r") as f:
            g = f["serve"]
            s = g["series"][()]
            b = float(g.attrs["bin_s"])
            end = float(g.attrs["end_s"])
        d = self.json
        self.assertEqual(b, 2.0)
        self.assertTrue((s["t_s"] == b * np.arange(len(s))).all())
        self.assertEqual(len(s), int(np.floor(end / b)) + 1)
        self.assertEqual(int(s["arrivals"].sum()), d["arrived"])
        self.assertEqual(int(s["finished"].sum()), d["finished"])
        self.assertEqual(int(s["dropped"].sum()), d["dropped"])
        self.assertEqual(int(s["preemptions"].sum()), d["preemptions"])
        w = np.minimum(end - s["t_s"], b)
        level = float(((s["running"] + s["queued"] + s["transferring"]) * w).sum())
        self.assertAlmostEqual(level / (d["little_l"] * end), 1, places=9)
        kv = float((s["kv_util"] * w).sum()) / end
        self.assertAlmostEqual(kv / d["kv_util_mean"], 1, places=9)

    def test_same_bytes(self):
        with open(self.path, "rb") as f:
            before = f.read()
        run(PREFIX, self.path, "--bin", "2s")  # the same command: the same bytes
        with open(self.path, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_disaggregated(self):
        path = os.path.join(self.tmp.name, "d.h5")
        d = run(DISAGG, path)
        q = self.check_requests(path, d)
        x = d["disaggregated"]
        sent = q[(q["dropped"] == 0) & (q["output"] > 1)]
        self.assertEqual(len(sent), x["transfers"])
        self.assertTrue((sent["prefill_replica"] < x["prefill_replicas"]).all())
        self.assertTrue((sent["replica"] >= x["prefill_replicas"]).all())
        with h5py.File(path, "r") as f:
            s = f["serve/series"][()]
            a = f["serve"].attrs
            # the transfers' medium and figures: those of --json "disaggregated"
            kind = a["transfer_medium_kind"]
            self.assertEqual(kind.decode() if isinstance(kind, bytes) else kind, x["medium"])
            medium = a["transfer_medium"]
            medium = medium.decode() if isinstance(medium, bytes) else medium
            self.assertTrue(medium.startswith("the replicas' links"), medium)
            for k in ("transfers", "transfers_in_flight_max"):
                self.assertEqual(int(a[k]), x[k])
            for k in ("transfer_bytes", "transfer_mean_s", "transfer_p50_s", "transfer_p99_s",
                      "transfer_max_s", "transfer_route_s", "transfer_shared_s"):
                # the JSON's numbers are printed to 15 digits
                self.assertAlmostEqual(float(a[k]), x[k], delta=1e-14 * abs(x[k]), msg=k)
        self.assertTrue(s["transferring"].max() > 0)

    def test_refusals(self):
        for target in (PREFIX, self.tmp.name):
            p = subprocess.run([DCSIM, "serve", "--quiet", PREFIX, "-o", target],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertEqual(glob.glob(os.path.join(self.tmp.name, "*.tmp.*")), [])
        self.assertEqual(glob.glob(PREFIX + ".tmp.*"), [])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
