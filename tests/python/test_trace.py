"""test_trace.py DCSIM SOURCE_DIR - read a dcsim trace back with h5py
(through analysis/dcsim_trace.py) and check it against the JSON summary and
the campaign's conservation laws. Run with Debian's /usr/bin/python3."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

DCSIM = sys.argv[1]
SOURCE = sys.argv[2]
sys.path.insert(0, os.path.join(SOURCE, "analysis"))
import h5py  # noqa: E402
import numpy as np  # noqa: E402
from dcsim_trace import Trace  # noqa: E402


class TraceRoundTrip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.tmp.name, "run.h5")
        out = subprocess.run([DCSIM, "run", "--json", "-o", cls.path], check=True,
                             capture_output=True, text=True).stdout
        cls.json = json.loads(out)
        cls.trace = Trace(cls.path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_root_attributes(self):
        a = self.trace.attrs
        self.assertEqual(a["seed"], 42)
        self.assertEqual(a["event_digest"], self.json["event_digest"])
        self.assertEqual(a["dcsim_version"], self.json["dcsim_version"])
        self.assertEqual(a["format_version"], 1)
        self.assertIn('<dcsim version="1" seed="42"', self.trace.scenario_xml)

    def test_every_dataset_has_units(self):
        missing = []
        with h5py.File(self.path, "r") as f:
            def visit(name, obj):
                if isinstance(obj, h5py.Dataset) and "units" not in obj.attrs:
                    missing.append(name)
            f.visititems(visit)
        self.assertEqual(missing, [])
        self.assertEqual(set(self.trace.event_units), set(self.trace.events.dtype.names))

    def test_summary_matches_json(self):
        self.assertEqual(set(self.trace.summary), set(self.json["summary"]))
        for name, (value, unit) in self.trace.summary.items():
            self.assertEqual(value, self.json["summary"][name], name)
            self.assertEqual(unit, self.json["units"][name], name)

    def test_event_counts(self):
        ev, kinds, t = self.trace.events, self.trace.event_kinds, self.trace
        count = {k: int(np.sum(ev["kind"] == v)) for k, v in kinds.items()}
        self.assertEqual(count["failure"], t.value("failures"))
        self.assertEqual(count["restart_done"], t.value("restarts"))
        self.assertEqual(count["checkpoint_done"], t.value("checkpoints"))
        self.assertEqual(count["job_start"], 1)
        self.assertEqual(count["job_done"], 1)
        self.assertTrue(np.all(np.diff(ev["time_s"]) >= 0))
        lost = ev["lost_work_s"][ev["kind"] == kinds["failure"]].sum()
        self.assertAlmostEqual(lost / t.value("rework_s"), 1.0, places=9)

    def test_timeline_conserves_time(self):
        tl, t = self.trace.timeline, self.trace
        self.assertEqual(tl["start_s"][0], 0.0)
        self.assertTrue(np.array_equal(tl["start_s"][1:], tl["end_s"][:-1]))
        self.assertEqual(tl["end_s"][-1], t.value("time_to_train_s"))
        spent = t.time_in_state()
        rel = lambda a, b: abs(a - b) <= 1e-9 * abs(b)  # noqa: E731
        self.assertTrue(rel(spent["compute"], t.value("compute_time_s") + t.value("rework_s")))
        self.assertTrue(rel(spent["checkpoint"],
                            t.value("checkpoint_time_s") + t.value("checkpoint_aborted_s")))
        self.assertTrue(rel(spent["restart"], t.value("restart_time_s")))
        self.assertEqual(int(np.sum(tl["was_interrupted"])), t.value("failures"))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
