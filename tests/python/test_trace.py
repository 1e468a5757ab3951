"""test_trace.py DCSIM SOURCE_DIR - read a dcsim trace back with h5py
(through analysis/dcsim_trace.py) and check it against the JSON summary and
the campaign's conservation laws; check the reader's tables carry the
datasets' units and that it refuses an unknown format version in one line.
Run with Debian's /usr/bin/python3."""
import json
import os
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
from dcsim_trace import (Table, Trace, TraceFormatError, read_table,  # noqa: E402
                         to_pandas)


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
        self.assertEqual(a["format_version"], 2)
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


def _texts(values):
    return [v.decode() if isinstance(v, bytes) else str(v) for v in values]


class TraceTables(unittest.TestCase):
    """Tables as structured arrays with units: the campaign tables for every
    trace, /step from a step-tier run, /replicas from --replicas."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.replicas_path = os.path.join(d, "replicas.h5")
        # an MFU given and no fabric: a trace without /step
        subprocess.run([DCSIM, "run", os.path.join(SOURCE, "tests/scenarios/no-fabric.xml"),
                        "--quiet", "--replicas", "3", "-o", cls.replicas_path],
                       check=True, capture_output=True)
        # the SuperPOD example: the step tier's /step, and its site's /energy
        cls.step_path = os.path.join(d, "step.h5")
        subprocess.run([DCSIM, "run", os.path.join(SOURCE, "scenarios/examples/superpod-h100.xml"),
                        "--quiet", "-o", cls.step_path], check=True, capture_output=True)
        cls.replicas = Trace(cls.replicas_path)
        cls.step = Trace(cls.step_path)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_campaign_tables_carry_units(self):
        t = self.replicas
        with h5py.File(self.replicas_path, "r") as f:
            for table, name in ((t.events, "campaign/events"), (t.timeline, "campaign/timeline")):
                ds = f[name]
                self.assertIsInstance(table, Table)
                self.assertEqual(table.dtype.names, ds.dtype.names)
                self.assertEqual(list(table.units.values()), _texts(ds.attrs["units"]))
                self.assertTrue(np.array_equal(table.view(np.ndarray), ds[()]))
        fails = t.events_of("failure")
        self.assertIsInstance(fails, Table)                 # row selections keep units
        self.assertEqual(fails.units["lost_work_s"], "s")
        self.assertNotIsInstance(fails["time_s"], Table)    # a column is a plain array
        self.assertEqual(len(fails), t.value("failures"))
        self.assertIsNone(t.step_stages)
        self.assertFalse(t.has_step)
        self.assertEqual(t.unknown_objects, [])

    def test_summary_table(self):
        st = self.replicas.summary_table
        self.assertEqual(list(st["name"]), list(self.replicas.summary))
        for name, value, unit in st:
            self.assertEqual((value, unit), (float(self.replicas.summary[name][0]),
                                             self.replicas.summary[name][1]))

    def test_replicas_table(self):
        r = self.replicas.replicas
        with h5py.File(self.replicas_path, "r") as f:
            raw = f["replicas"][()]
            types = {c: f["replicas"].dtype[c] for c in f["replicas"].dtype.names}
        self.assertEqual(list(r.dtype.names), list(raw.dtype.names))
        for c in raw.dtype.names:
            self.assertTrue(np.array_equal(r[c], raw[c]), c)
        # counts are integers in the file, times and fractions float64
        self.assertEqual(types["failures"], np.dtype("uint64"))
        self.assertEqual(types["checkpoints"], np.dtype("uint64"))
        self.assertEqual(types["rework_s"], np.dtype("float64"))
        self.assertEqual(r.units["time_to_train_s"], "s")
        self.assertEqual(r.units["ettr_frac"], "1")
        self.assertEqual(r.units["failures"], "1")
        self.assertEqual(r["ettr_frac"][0], self.replicas.value("ettr_frac"))  # replica 0
        self.assertEqual(len(self.replicas.replica_digests), 3)

    def test_step_tables(self):
        t = self.step
        self.assertTrue(t.has_step)
        with h5py.File(self.step_path, "r") as f:
            g = f["step"]
            stages = g["stages"][()]
            self.assertEqual(list(t.step_stages.dtype.names), list(stages.dtype.names))
            for c in stages.dtype.names:
                self.assertTrue(np.array_equal(t.step_stages[c], stages[c]), c)
                self.assertEqual(t.step_stages.units[c], "1" if c.endswith("fraction") else "s")
            self.assertEqual(list(t.step_tiers["tier"]), _texts(g.attrs["tiers"]))
            self.assertTrue(np.array_equal(t.step_tiers["bytes"], g["tier_bytes"][()]))
            self.assertTrue(np.array_equal(t.step_tiers["peak_utilisation"],
                                           g["tier_peak_utilisation"][()]))
            self.assertEqual(t.step_tiers.units, {"tier": "-", "bytes": "B",
                                                  "peak_utilisation": "1"})
            self.assertTrue(np.array_equal(t.link_bytes["bytes"], g["link_bytes"][()]))
            self.assertEqual(t.link_bytes.units["bytes"], "B")
            self.assertEqual(t.step_attrs["critical_stage"], int(g.attrs["critical_stage"]))
            self.assertEqual(t.step_tasks.units, {"stage": "1", "chunk": "1", "microbatch": "1",
                                                  "backward": "1", "start_s": "s", "end_s": "s"})
            self.assertTrue(np.array_equal(t.step_tasks["end_s"], g["tasks"]["end_s"]))
            self.assertEqual(g["tasks"].dtype["stage"], np.dtype("uint32"))
            self.assertEqual(g["tasks"].dtype["backward"], np.dtype("uint8"))
        self.assertEqual(set(t.tables), {"events", "timeline", "summary_table", "step_stages",
                                         "step_tiers", "step_tasks", "link_bytes",
                                         "link_utilisation", "energy_hourly"})

    def test_every_table_is_compound_with_a_unit_per_column(self):
        """format_version 2: no 2-D dataset anywhere; every compound dataset
        has one unit per field; the flows' kind is an HDF5 enum."""
        flows, scenario = (os.path.join(self.tmp.name, n) for n in ("flows.h5", "c.xml"))
        with open(os.path.join(SOURCE, "scenarios/examples/concurrency-leafspine.xml"),
                  encoding="utf-8") as f:   # the concurrent iteration, as tests/cli/concurrent.sh
            text = f.read().replace("  </job>", '    <step network="concurrent"/>\n  </job>')
        with open(scenario, "w", encoding="utf-8") as f:
            f.write(text)
        subprocess.run([DCSIM, "run", scenario, "--quiet", "--flow-log", "50", "-o", flows],
                       check=True, capture_output=True)
        seen = []
        for path in (self.replicas_path, self.step_path, flows):
            with h5py.File(path, "r") as f:
                def visit(name, obj):
                    if not isinstance(obj, h5py.Dataset):
                        return
                    self.assertLessEqual(obj.ndim, 1, f"{path}: {name} is {obj.ndim}-D")
                    if obj.dtype.names:
                        seen.append(name)
                        self.assertEqual(len(_texts(obj.attrs["units"])), len(obj.dtype.names),
                                         name)
                f.visititems(visit)
                if "step/flows" in f:
                    kind = h5py.check_enum_dtype(f["step/flows"].dtype["kind"])
                    self.assertEqual(kind, {"pp": 0, "dp": 1, "gather": 2, "tp": 3, "cp": 4,
                                            "ep": 5})
                    df = to_pandas(path, "/step/flows")
                    self.assertEqual(len(df), 50)
                    self.assertTrue(set(df["kind"].astype(str)) <= set(kind))
        for name in ("replicas", "step/stages", "step/tasks", "step/flows", "energy/hourly"):
            self.assertIn(name, seen)

    def test_format_1_tables_still_read(self):
        """A 2-D float64 table with `columns` (format_version 1) reads as the
        same Table its compound successor gives."""
        path = os.path.join(self.tmp.name, "format1.h5")
        shutil.copyfile(self.replicas_path, path)
        new = self.replicas.replicas
        with h5py.File(path, "r+") as f:
            del f["replicas"]
            names = list(new.dtype.names)
            d = f.create_dataset("replicas", data=np.array([[float(r[c]) for c in names]
                                                            for r in new]))
            d.attrs["columns"] = names
            d.attrs["units"] = "s (ettr_frac, counts: 1)"
            f.attrs["format_version"] = np.int32(1)
        old = Trace(path).replicas
        self.assertEqual(old.dtype.names, new.dtype.names)
        for c in names:
            self.assertTrue(np.array_equal(old[c], new[c].astype(float)), c)
        self.assertEqual(old.units, new.units)

    def test_unknown_format_version_is_refused(self):
        path = os.path.join(self.tmp.name, "future.h5")
        shutil.copyfile(self.replicas_path, path)
        with h5py.File(path, "r+") as f:
            f.attrs["format_version"] = np.int32(3)
        with self.assertRaises(TraceFormatError) as cm:
            Trace(path)
        self.assertNotIn("\n", str(cm.exception))
        self.assertIn("trace format version 3 is not supported (this reader knows 1, 2)",
                      str(cm.exception))
        r = subprocess.run([sys.executable, os.path.join(SOURCE, "analysis", "dcsim_trace.py"),
                            path], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stdout, r.stderr.count("\n")), (1, "", 1))
        with h5py.File(path, "r+") as f:
            del f.attrs["format_version"]
        with self.assertRaisesRegex(TraceFormatError, "no root attribute format_version"):
            Trace(path)

    def test_to_pandas(self):
        """Every table as a DataFrame: same rows and values, enum columns as
        categoricals named as in the file, units in df.attrs."""
        try:
            import pandas as pd
        except ImportError:
            self.skipTest("python3-pandas is not installed (.ci/install-deps installs it)")
        t = self.replicas
        ev = to_pandas(t.events)
        self.assertEqual(list(ev.columns), list(t.events.dtype.names))
        self.assertEqual(len(ev), len(t.events))
        self.assertEqual(ev.attrs["units"], t.events.units)
        self.assertIsInstance(ev["kind"].dtype, pd.CategoricalDtype)
        by_value = sorted(t.event_kinds, key=t.event_kinds.get)
        self.assertEqual(list(ev["kind"].cat.categories), by_value)
        names = {v: k for k, v in t.event_kinds.items()}
        self.assertEqual(list(ev["kind"]), [names[int(k)] for k in t.events["kind"]])
        self.assertEqual(int((ev["kind"] == "failure").sum()), t.value("failures"))
        self.assertTrue(np.array_equal(ev["time_s"].to_numpy(), t.events["time_s"]))
        # straight from the file
        tl = to_pandas(self.replicas_path, "/campaign/timeline")
        self.assertEqual(set(tl["state"].cat.categories), set(t.states))
        self.assertAlmostEqual(float(tl["end_s"].max()), t.value("time_to_train_s"), delta=1e-6)
        rep = to_pandas(self.replicas_path, "/replicas")
        self.assertEqual(list(rep.columns), list(t.replicas.dtype.names))
        self.assertEqual(rep.attrs["units"]["ettr_frac"], "1")
        self.assertEqual(list(rep["failures"]), list(t.replicas["failures"]))
        hourly = self.step.energy_hourly.to_pandas()
        self.assertEqual(hourly.attrs["units"]["it_power_w"], "W")
        self.assertEqual(len(hourly), len(self.step.energy_hourly))
        with self.assertRaisesRegex(TraceFormatError, "no dataset /nowhere"):
            read_table(self.replicas_path, "/nowhere")
        with self.assertRaisesRegex(TraceFormatError, "is not a table"):
            read_table(self.replicas_path, "/replica_digests")

    def test_missing_group_is_refused(self):
        path = os.path.join(self.tmp.name, "partial.h5")
        shutil.copyfile(self.replicas_path, path)
        with h5py.File(path, "r+") as f:
            del f["campaign"]
        with self.assertRaisesRegex(TraceFormatError, "lacks /campaign"):
            Trace(path)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
