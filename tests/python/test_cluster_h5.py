"""test_cluster_h5.py DCSIM SOURCE_DIR - `dcsim cluster -o FILE.h5` read back
with h5py (docs/trace-format.md "Cluster tables"): one row per job whose
wait and slowdown follow from its times; the series' IT power integrates to
the JSON's IT energy and its facility power to the facility energy; the busy
GPUs integrate to the busy GPU-seconds; the file is refused over the
scenario and over a directory, and no temporary is left. A small run:
tests/scenarios/cluster-energy-site.xml. Run with Debian's /usr/bin/python3."""
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

SCN = os.path.join(SOURCE, "tests", "scenarios", "cluster-energy-site.xml")
NOSITE = os.path.join(SOURCE, "tests", "scenarios", "cluster-energy.xml")


def run(scn, path):
    out = subprocess.run([DCSIM, "cluster", "--quiet", "--json", scn, "-o", path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def integral(t, v, end):
    dt = np.diff(np.append(t, end))
    assert (dt >= 0).all()
    return float((v * dt).sum())


class ClusterTables(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.tmp.name, "c.h5")
        cls.json = run(SCN, cls.path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_jobs(self):
        with h5py.File(self.path, "r") as f:
            self.assertEqual(f.attrs["kind"], "cluster")
            self.assertEqual(f.attrs["event_digest"], "0x" + self.json["digest"])
            jobs = f["cluster/jobs"][()]
        self.assertEqual(len(jobs), self.json["jobs"])
        self.assertTrue((jobs["id"] == np.arange(len(jobs))).all())
        np.testing.assert_allclose(jobs["wait_s"], jobs["start_s"] - jobs["submit_s"],
                                   rtol=0, atol=1e-9)
        run_s = jobs["end_s"] - jobs["start_s"]
        np.testing.assert_allclose(jobs["slowdown"], (jobs["wait_s"] + run_s) / run_s,
                                   rtol=1e-12)
        self.assertTrue((jobs["leaves"] >= jobs["min_leaves"]).all())
        self.assertAlmostEqual(float(jobs["end_s"].max()), self.json["end_s"], places=6)
        busy = float((jobs["gpus"] * run_s).sum())
        self.assertAlmostEqual(busy / self.json["busy_gpu_s"], 1, places=12)

    def test_series_integrals(self):
        with h5py.File(self.path, "r") as f:
            g = f["cluster"]
            s = g["series"][()]
            end = float(g.attrs["end_s"])
            self.assertEqual(g.attrs["site"], "zhongwei")
        e = self.json["energy"]
        self.assertTrue(e["has_site"])
        it = integral(s["t_s"], s["it_power_w"], end)
        fac = integral(s["t_s"], s["facility_power_w"], end)
        busy = integral(s["t_s"], s["busy_gpus"].astype(float), end)
        self.assertAlmostEqual(it / e["it_energy_j"], 1, places=12)
        self.assertAlmostEqual(fac / e["facility_energy_j"], 1, places=12)
        self.assertAlmostEqual(busy / self.json["busy_gpu_s"], 1, places=12)
        # every row inside one hour of the site's PUE
        hours = np.floor(s["t_s"] / 3600)
        ends = np.append(s["t_s"][1:], end)
        self.assertTrue((np.floor(np.nextafter(ends, 0) / 3600) == hours).all())
        self.assertTrue((s["facility_power_w"] > s["it_power_w"]).all())

    def test_no_site(self):
        path = os.path.join(self.tmp.name, "n.h5")
        d = run(NOSITE, path)
        self.assertFalse(d["energy"]["has_site"])
        with h5py.File(path, "r") as f:
            s = f["cluster/series"][()]
            self.assertEqual(int(f["cluster"].attrs["has_site"]), 0)
        self.assertTrue((s["facility_power_w"] == 0).all())

    def test_refusals(self):
        for target in (SCN, self.tmp.name):
            p = subprocess.run([DCSIM, "cluster", "--quiet", SCN, "-o", target],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertEqual(glob.glob(os.path.join(self.tmp.name, "*.tmp.*")), [])
        self.assertEqual(glob.glob(SCN + ".tmp.*"), [])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
