"""test_gallery.py DCSIM SOURCE_DIR - the examples gallery (docs/gallery.md)
runs in CI: analysis/dcsim_gallery.py answers its five questions from
scenarios/examples/gallery-*.xml, and each answer is checked against the
tables dcsim wrote, an independent run, and the closed forms that must hold
(cost = energy x price, facility energy = IT energy x PUE, goodput falls
with the failure rate, rent = GPU-hours x price). Run with /usr/bin/python3."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

DCSIM = os.path.abspath(sys.argv[1])
SOURCE = os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(SOURCE, "analysis"))
import numpy as np  # noqa: E402
from dcsim_trace import read_compare, read_sweep  # noqa: E402

EXAMPLES = os.path.join(SOURCE, "scenarios", "examples")
KWH_J = 3.6e6


class Gallery(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "figures")
        cls.tables = os.path.join(cls.tmp.name, "tables")
        r = subprocess.run(["/usr/bin/python3", os.path.join(SOURCE, "analysis", "dcsim_gallery.py"),
                            "--dcsim", DCSIM, "-o", cls.out, "--tables", cls.tables],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"dcsim_gallery.py failed: {r.stderr}")
        cls.lines = r.stdout.splitlines()
        with open(os.path.join(cls.out, "gallery.json"), encoding="utf-8") as f:
            cls.answers = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def dcsim_json(self, *args):
        return json.loads(subprocess.run([DCSIM] + list(args) + ["--json"], check=True,
                                         capture_output=True, text=True).stdout)

    def test_every_question_answered_with_a_figure(self):
        names = ("ib_vs_roce", "which_hub", "checkpoint_failures", "liquid_vs_air",
                 "build_vs_rent")
        self.assertEqual(sorted(self.answers), sorted(names))
        self.assertEqual([line.split(":", 1)[0] for line in self.lines], list(names))
        for name in names:
            with open(os.path.join(self.out, f"gallery_{name}.png"), "rb") as f:
                head = f.read(8)
            self.assertEqual(head, b"\x89PNG\r\n\x1a\n", name)
            scenario = self.answers[name]["command"].split()[2]
            self.assertTrue(os.path.isfile(os.path.join(SOURCE, scenario)), scenario)

    def test_ib_vs_roce_equals_a_plain_run(self):
        a = self.answers["ib_vs_roce"]
        table = read_compare(os.path.join(self.tables, "ib_roce.h5"))
        self.assertEqual(a["labels"], ["network=ib-ndr", "network=roce-400g"])
        # the RoCE variant is exactly `dcsim run` with the link swapped
        run = self.dcsim_json("run", os.path.join(EXAMPLES, "gallery-ib-vs-roce-4k.xml"),
                              "--set", "cluster/fabric/@link=roce-400g", "--quiet")
        self.assertEqual(a["time_to_train_s"][1], run["summary"]["time_to_train_s"])
        self.assertEqual(float(table["time_to_train_s"][1]), run["summary"]["time_to_train_s"])
        t = a["time_to_train_s"]
        self.assertEqual(a["winner"], a["labels"][int(np.argmin(t))])

    def test_which_hub_cost_and_co2_follow_energy(self):
        a = self.answers["which_hub"]
        table = read_compare(os.path.join(self.tables, "hubs.h5"))
        self.assertEqual(len(table), 8)
        kwh = np.array(table["facility_energy_j"]) / KWH_J
        # flat prices and factors: cost and CO2 are energy times the site's figure
        np.testing.assert_allclose(table["energy_cost_cny"], kwh * table["price_cny_per_kwh"],
                                   rtol=1e-9)
        np.testing.assert_allclose(table["co2_kg"], kwh * table["emission_kg_per_kwh"],
                                   rtol=1e-9)
        self.assertEqual(a["cheapest"], table.labels[int(np.argmin(table["energy_cost_cny"]))])
        self.assertEqual(a["cleanest"], table.labels[int(np.argmin(table["co2_kg"]))])
        # the job is the same everywhere: the site moves energy, never the run
        self.assertEqual(len(set(np.array(table["time_to_train_s"]).tolist())), 1)

    def test_checkpoint_goodput_falls_with_failures(self):
        one, two = self.answers["checkpoint_failures"]["series"]
        self.assertEqual((one["label"], two["label"]), ("1x failure rate", "2x failure rate"))
        self.assertEqual(one["interval_s"], two["interval_s"])
        self.assertTrue(all(g2 < g1 for g1, g2 in zip(one["ettr"], two["ettr"])))
        # more failures: the best interval is never longer, nor is Daly's
        self.assertLessEqual(two["best_interval_s"], one["best_interval_s"])
        self.assertLess(two["daly_interval_s"], one["daly_interval_s"])
        sweep = read_sweep(os.path.join(self.tables, "sweep.h5"))
        self.assertEqual(len(sweep.done()), 18)

    def test_liquid_vs_air_energy_is_it_times_pue(self):
        a = self.answers["liquid_vs_air"]
        table = read_compare(os.path.join(self.tables, "cooling.h5"))
        np.testing.assert_allclose(table["facility_energy_j"],
                                   np.array(table["it_energy_j"]) * table["pue_frac"], rtol=1e-9)
        self.assertEqual(len(set(np.array(table["it_energy_j"]).tolist())), 1)
        pue = dict(zip(a["labels"], a["pue"]))
        self.assertLess(pue["site/@cooling=direct-liquid"], pue["site/@cooling=air-economiser"])
        self.assertLess(pue["site/@cooling=air-economiser"], pue["site/@cooling=air-chiller"])

    def test_build_vs_rent_break_even(self):
        a = self.answers["build_vs_rent"]
        s = self.dcsim_json("run", os.path.join(EXAMPLES, "gallery-build-vs-rent.xml"),
                            "--quiet")["summary"]
        gpu_h = s["gpu_count"] * s["time_to_train_s"] / 3600.0
        self.assertAlmostEqual(a["gpu_h"], gpu_h, delta=1e-9 * gpu_h)
        self.assertAlmostEqual(a["rented_cny"], 15.0 * gpu_h, delta=1e-9 * a["rented_cny"])
        self.assertAlmostEqual(a["built_cny"], s["capex_amortised_cny"] + s["energy_cost_cny"],
                               delta=1e-6 * a["built_cny"])
        self.assertAlmostEqual(a["breakeven_rent_cny_per_gpu_h"] * gpu_h, a["built_cny"],
                               delta=1e-9 * a["built_cny"])


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
