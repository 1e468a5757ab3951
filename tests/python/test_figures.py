"""test_figures.py DCSIM SOURCE_DIR - draw every figure of analysis/dcsim_figures.py
from the default scenario's trace (no /step) and the default job on the
SuperPOD fabric at a site (/step, /energy/hourly), and a `dcsim compare` table,
check the files are real PNG/SVG, that the numbers drawn are the trace's, that
an unknown format version is refused in one line, and that the same input
gives byte-identical files. Run with Debian's /usr/bin/python3."""
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
import matplotlib.text  # noqa: E402
import numpy as np  # noqa: E402
import dcsim_figures as figs  # noqa: E402
from dcsim_trace import Trace, TraceFormatError  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MIN_BYTES = 10_000
FIGURES_PY = os.path.join(SOURCE, "analysis", "dcsim_figures.py")


def dcsim(*args):
    return subprocess.run([DCSIM, *args], check=True, capture_output=True, text=True).stdout


class Figures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.default_path = os.path.join(cls.dir, "default.h5")
        # an MFU given and no fabric: a trace without /step (the default before
        # it ran on a fabric). The goodput curve, sweeps, replicas and the site
        # comparison run it too: what they draw does not depend on how the
        # iteration is timed, and the built-in default's step tier costs about
        # 2 s per run on 16,384 GPUs in Release, ten times that under ASan
        # (docs/testing.md).
        no_fabric = cls.no_fabric = os.path.join(SOURCE, "tests/scenarios/no-fabric.xml")
        dcsim("run", no_fabric, "--quiet", "-o", cls.default_path)
        # the SuperPOD example takes the iteration from the step tier, at Wuhu.
        # It stays on all 16,384 GPUs: only there does the spine-core tier
        # carry traffic (at 2,048, 4,096 or 8,192 GPUs its bytes are 0), and
        # the tier heat map is checked on every tier with traffic.
        cls.step_path = os.path.join(cls.dir, "step.h5")
        dcsim("run", os.path.join(SOURCE, "scenarios/examples/superpod-h100.xml"), "--quiet",
              "-o", cls.step_path)
        cls.goodput_path = os.path.join(cls.dir, "goodput.json")
        with open(cls.goodput_path, "w", encoding="utf-8") as f:
            f.write(dcsim("goodput", no_fabric, "--json", "--replicas", "2", "--steps", "3"))
        cls.compare_path = os.path.join(cls.dir, "sites.h5")
        dcsim("compare", no_fabric, "--vary", "site=tianfu,zhangjiakou,wuhu", "-o",
              cls.compare_path)
        cls.default = Trace(cls.default_path)
        cls.step = Trace(cls.step_path)
        cls.traces = {"default": cls.default, "step": cls.step}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def out(self, name):
        return os.path.join(self.dir, name)

    def assert_png(self, path):
        with open(path, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], PNG_SIGNATURE, path)
        self.assertGreater(len(data), MIN_BYTES, path)
        self.assertNotIn(b"Software", data, path)          # no version stamp

    def assert_svg(self, path):
        with open(path, "rb") as f:
            data = f.read()
        self.assertTrue(data.startswith(b"<?xml"), path)
        self.assertIn(b"<svg", data, path)
        self.assertGreater(len(data), MIN_BYTES, path)
        self.assertNotIn(b"<dc:date>", data, path)         # no timestamp

    def test_each_figure_png_and_svg(self):
        for label, t in self.traces.items():
            fns = [figs.time_breakdown, figs.campaign_timeline]
            if t.has_step:
                fns += [figs.step_timeline, figs.tier_utilisation]
            if t.energy_hourly is not None:
                fns.append(figs.power_pue)
            for fn in fns:
                for ext, check in (("png", self.assert_png), ("svg", self.assert_svg)):
                    with self.subTest(trace=label, figure=fn.__name__, ext=ext):
                        path = self.out(f"{label}_{fn.__name__}.{ext}")
                        self.assertEqual(fn(t, path)["path"], path)
                        check(path)
        for ext, check in (("png", self.assert_png), ("svg", self.assert_svg)):
            path = self.out(f"goodput.{ext}")
            figs.goodput_curve(self.goodput_path, path)
            check(path)
            path = self.out(f"sites.{ext}")
            figs.site_comparison(self.compare_path, path)
            check(path)
        self.assertIsNotNone(self.step.energy_hourly)

    def test_print_sizes_and_fonts(self):
        # every figure is a column or two wide and no visible text is under 8 pt
        drawn = []
        save = figs._save
        figs._save = lambda fig, path: (drawn.append((fig, path)), save(fig, path))[1]
        try:
            figs.all_figures(self.step, self.out("sizes"), formats=("png",),
                             goodput=self.goodput_path)
            figs.time_breakdown(self.default, self.out("sizes/single.png"))
            figs.site_comparison(self.compare_path, self.out("sizes/sites.png"))
        finally:
            figs._save = save
        self.assertEqual(len(drawn), 8)
        for fig, path in drawn:
            with self.subTest(figure=os.path.basename(path)):
                width, height = fig.get_size_inches()
                self.assertIn(width, (figs.SINGLE_COLUMN_IN, figs.DOUBLE_COLUMN_IN))
                self.assertLessEqual(height, 9.0)
                texts = [t for t in fig.findobj(matplotlib.text.Text)
                         if t.get_visible() and t.get_text().strip()]
                self.assertTrue(texts)
                small = [(t.get_text(), t.get_fontsize()) for t in texts if t.get_fontsize() < 8]
                self.assertEqual(small, [])
                axes = [ax for ax in fig.axes if ax.get_visible()]
                self.assertTrue(any(ax.get_xlabel() for ax in axes))
                labels = " ".join(ax.get_xlabel() + ax.get_ylabel() for ax in axes)
                self.assertRegex(labels, r"\((s|d|min|B|%|1|10³ iterations|MW|GWh)\)")

    def test_step_figures_need_step(self):
        for fn in (figs.step_timeline, figs.tier_utilisation):
            with self.assertRaisesRegex(ValueError, "needs /step"):
                fn(self.default, self.out("none.png"))

    def test_bad_extension(self):
        with self.assertRaisesRegex(ValueError, r"\.png or \.svg"):
            figs.time_breakdown(self.default, self.out("x.pdf"))

    def test_time_breakdown_draws_the_summary(self):
        for label, t in self.traces.items():
            d = figs.time_breakdown(t, self.out(f"tb_{label}.png"))
            for name in ("compute_time_s", "rework_s", "checkpoint_time_s",
                         "checkpoint_aborted_s", "restart_time_s"):
                self.assertEqual(d["campaign_s"][name], t.value(name), name)
            total = t.value("time_to_train_s")
            self.assertEqual(d["time_to_train_s"], total)
            self.assertAlmostEqual(sum(d["campaign_s"].values()) / total, 1.0, places=9)
        self.assertIsNone(figs.time_breakdown(self.default, self.out("tb.png"))["iteration_s"])
        d = figs.time_breakdown(self.step, self.out("tb_step.png"))
        with h5py.File(self.step_path, "r") as f:
            g = f["step"]
            row = g["stages"][int(g.attrs["critical_stage"])]
            self.assertEqual(d["critical_stage"], int(g.attrs["critical_stage"]))
            for name, value in d["iteration_s"].items():
                self.assertEqual(value, row[name], name)
            self.assertAlmostEqual(sum(d["iteration_s"].values()) / g.attrs["iteration_s"], 1.0,
                                   places=9)

    def test_step_timeline_draws_the_stages(self):
        d = figs.step_timeline(self.step, self.out("st.png"))
        with h5py.File(self.step_path, "r") as f:
            g = f["step"]
            stages = g["stages"][()]
            self.assertEqual(len(d["stage"]), len(stages))
            self.assertEqual(set(d["parts"]), set(figs.STEP_PARTS))
            for name, values in d["parts"].items():
                self.assertTrue(np.array_equal(values, stages[name]), name)
            self.assertTrue(np.array_equal(d["end_s"], stages["end_s"]))
            self.assertEqual(d["iteration_s"], g.attrs["iteration_s"])
            self.assertEqual(d["critical_stage"], int(g.attrs["critical_stage"]))
        # the parts of each stage add up to the iteration (docs/trace-format.md)
        total = sum(d["parts"].values())
        self.assertTrue(np.allclose(total, d["iteration_s"], rtol=1e-9))
        # the Gantt draws /step/tasks as they are
        with h5py.File(self.step_path, "r") as f:
            raw = f["step/tasks"][()]
            self.assertEqual(list(raw.dtype.names),
                             ["stage", "chunk", "microbatch", "backward", "start_s", "end_s"])
            # as a matrix of those six columns, in that order
            tasks = np.column_stack([raw[c].astype(float) for c in raw.dtype.names])
        self.assertTrue(np.array_equal(d["tasks"]["stage"], tasks[:, 0]))
        self.assertTrue(np.array_equal(d["tasks"]["backward"], tasks[:, 3] == 1))
        self.assertTrue(np.array_equal(d["tasks"]["start_s"], tasks[:, 4]))
        self.assertTrue(np.array_equal(d["tasks"]["end_s"], tasks[:, 5]))
        n = len(d["stage"])
        microbatches = int(tasks[:, 2].max()) + 1
        chunks = int(tasks[:, 1].max()) + 1                    # virtual stages (interleaved)
        self.assertEqual(chunks, 8)
        # a forward and a backward per micro-batch and chunk
        self.assertEqual(len(tasks), 2 * n * microbatches * chunks)
        for s in range(n):
            mine = tasks[tasks[:, 0] == s]
            # a stage runs one task at a time, in the order stored
            self.assertTrue(np.all(mine[1:, 4] >= mine[:-1, 5] - 1e-12), s)
            # /step/tasks and /step/stages agree: the tasks' total is the
            # stage's compute plus the communication it cannot hide, and the
            # DP reduction and optimizer run from its last task to its end
            work = sum(d["parts"][c][s] for c in ("compute_s", "tp_s", "cp_s", "ep_s"))
            self.assertAlmostEqual(d["busy_s"][s] / work, 1.0, places=9)
            self.assertAlmostEqual(d["dp_start_s"][s] + d["parts"]["dp_s"][s]
                                   + d["parts"]["optimizer_s"][s], d["end_s"][s], places=9)
        # 16 stages x 16 micro-batches x 8 chunks: the zoom panel frames
        # GANTT_ZOOM_WIDTH median task lengths of the critical stage from two
        # before its first backward, and labels only tasks that are there
        self.assertGreater(len(tasks), figs.GANTT_ZOOM_TASKS * n)
        t0, t1 = d["zoom_s"]
        crit = tasks[tasks[:, 0] == d["critical_stage"]]
        median = float(np.median(crit[:, 5] - crit[:, 4]))
        first_back = float(crit[crit[:, 3] == 1][:, 4].min())
        self.assertAlmostEqual(t0, first_back - 2 * median, places=12)
        self.assertAlmostEqual(t1 - t0, figs.GANTT_ZOOM_WIDTH * median, places=12)
        self.assertGreater(len(d["labels"]), n)                 # every stage has some
        shown = {(int(t[0]), f"{'B' if t[3] else 'F'}{int(t[2])}.{int(t[1])}")
                 for t in tasks if t[5] > t0 and t[4] < t1}
        self.assertTrue(set(d["labels"]) <= shown)
        # a trace written before /step/tasks existed still draws (stacked bars)
        old = self.out("no_tasks.h5")
        shutil.copyfile(self.step_path, old)
        with h5py.File(old, "r+") as f:
            del f["step/tasks"]
        d = figs.step_timeline(Trace(old), self.out("st_old.png"))
        self.assertIsNone(d["tasks"])
        self.assert_png(d["path"])

    def test_tier_utilisation_draws_the_tiers(self):
        d = figs.tier_utilisation(self.step, self.out("tu.png"))
        with h5py.File(self.step_path, "r") as f:
            g = f["step"]
            tiers = [c.decode() if isinstance(c, bytes) else c for c in g.attrs["tiers"]]
            self.assertEqual(d["tiers"], tiers)
            self.assertTrue(np.array_equal(d["bytes"], g["tier_bytes"][()]))
            self.assertTrue(np.array_equal(d["peak_utilisation"],
                                           g["tier_peak_utilisation"][()]))
            link_tier = g["link_tier"][()]
            link_u = g["link_utilisation"][()]
            link_bytes = g["link_bytes"][()]
        # the heat map counts every link once, in its tier
        self.assertTrue(np.array_equal(d["links"], np.bincount(link_tier, minlength=len(tiers))))
        self.assertTrue(np.array_equal(d["idle"] + d["counts"].sum(axis=1), d["links"]))
        for k in range(len(tiers)):
            mine = link_tier == k
            self.assertEqual(d["idle"][k], int(np.sum(link_bytes[mine] == 0)), tiers[k])
            # the tier's busiest link is the one /step/tier_peak_utilisation names
            self.assertEqual(link_u[mine].max() if mine.any() else 0.0,
                             d["peak_utilisation"][k], tiers[k])
        self.assertEqual(d["bin_edges"][-1], link_u.max())

    def test_campaign_timeline_draws_the_campaign(self):
        for label, t in self.traces.items():
            d = figs.campaign_timeline(t, self.out(f"ct_{label}.png"))
            with h5py.File(t.path, "r") as f:
                ev = f["campaign/events"][()]
                tl = f["campaign/timeline"][()]
                kinds = h5py.check_enum_dtype(f["campaign/events"].dtype["kind"])
            self.assertTrue(np.array_equal(d["durable_time_s"], ev["time_s"]))
            self.assertTrue(np.array_equal(d["durable_iterations"], ev["iteration"]))
            self.assertEqual(d["durable_iterations"][-1], t.value("iterations"))
            self.assertTrue(np.array_equal(d["reached_time_s"][0::2], tl["start_s"]))
            self.assertTrue(np.array_equal(d["reached_time_s"][1::2], tl["end_s"]))
            self.assertTrue(np.array_equal(d["reached_iterations"][1::2], tl["iteration_end"]))
            for kind, count in (("failure", "failures"), ("restart_done", "restarts"),
                                ("checkpoint_done", "checkpoints")):
                self.assertTrue(np.array_equal(d["events"][kind],
                                               ev["time_s"][ev["kind"] == kinds[kind]]), kind)
                self.assertEqual(len(d["events"][kind]), t.value(count), kind)
                # a row of thousands of events is drawn as counts per bin, which
                # add up to the row's events; a short row keeps its ticks
                if kind in d["density"]:
                    edges, counts = d["density"][kind]
                    self.assertGreater(len(d["events"][kind]), figs.DENSE_EVENTS, kind)
                    self.assertEqual(int(counts.sum()), len(d["events"][kind]), kind)
                    self.assertAlmostEqual(edges[-1] * figs.DAY_S, t.value("time_to_train_s"),
                                           delta=1e-6 * t.value("time_to_train_s"))
                else:
                    self.assertLessEqual(len(d["events"][kind]), figs.DENSE_EVENTS, kind)
            # the zoom panel frames the failure that lost the most work
            fails = ev[ev["kind"] == kinds["failure"]]
            if len(fails):
                worst = fails["time_s"][int(np.argmax(fails["lost_work_s"]))]
                self.assertLessEqual(d["zoom_s"][0], worst)
                self.assertLess(worst, d["zoom_s"][1])
                self.assertLessEqual(d["zoom_s"][1], t.value("time_to_train_s"))
            else:
                self.assertIsNone(d["zoom_s"])

    def test_goodput_from_json(self):
        with open(self.goodput_path, encoding="utf-8") as f:
            g = json.load(f)
        d = figs.goodput_curve(self.goodput_path, self.out("gp.svg"))
        self.assertEqual(list(d["interval_s"]), [c["interval_s"] for c in g["curve"]])
        self.assertEqual(list(d["ettr"]), [c["ettr_mean"] for c in g["curve"]])
        self.assertEqual(list(d["ettr_ci95"]), [c["ettr_ci95"] for c in g["curve"]])
        for key in ("young_interval_s", "daly_interval_s", "best_interval_s"):
            self.assertEqual(d[key], g[key], key)

    def test_goodput_from_a_sweep(self):
        path = self.out("sweep.h5")
        dcsim("sweep", self.no_fabric, "--quiet",
              "--grid", "checkpoint/@interval=10min,20min,40min",
              "--grid", "reliability/@scale=0.5,2", "--replicas", "4", "-o", path)
        d = figs.goodput_curve(path, self.out("gp_sweep.png"))
        self.assert_png(d["path"])
        self.assertEqual([x["label"] for x in d["series"]],
                         ["0.5x failure rate", "2x failure rate"])     # in words
        with h5py.File(path, "r") as f:
            pts = f["sweep/points"][()]
        for series, scale in zip(d["series"], (b"0.5", b"2")):
            rows = pts[pts["reliability/@scale"] == scale]
            rows = rows[np.argsort(rows["checkpoint_interval_s"], kind="stable")]
            self.assertTrue(np.array_equal(series["interval_s"], rows["checkpoint_interval_s"]))
            self.assertTrue(np.array_equal(series["ettr"], rows["ettr_frac_mean"]))
            self.assertTrue(np.array_equal(series["ettr_ci95"], rows["ettr_frac_ci95"]))
            self.assertEqual(series["best_interval_s"],
                             rows["checkpoint_interval_s"][np.argmax(rows["ettr_frac_mean"])])
            self.assertEqual(series["daly_interval_s"], rows["daly_interval_s"][0])
        # more failures, less goodput at every interval
        self.assertTrue(np.all(d["series"][1]["ettr"] < d["series"][0]["ettr"]))
        flat = self.out("sweep_scale_only.h5")
        dcsim("sweep", self.no_fabric, "--quiet", "--grid", "reliability/@scale=0.5,2",
              "--replicas", "2", "-o", flat)
        with self.assertRaisesRegex(ValueError, "does not vary a checkpoint parameter"):
            figs.goodput_curve(flat, self.out("none.png"))

    def test_goodput_from_traces(self):
        paths = []
        for interval in ("30min", "10min"):
            paths.append(self.out(f"interval_{interval}.h5"))
            dcsim("run", self.no_fabric, "--quiet", "--replicas", "3",
                  "--set", f"checkpoint/@interval={interval}", "-o", paths[-1])
        traces = [Trace(p) for p in paths]
        d = figs.goodput_curve(traces, self.out("gp_traces.png"))
        self.assert_png(d["path"])
        by_interval = sorted(traces, key=lambda t: t.value("checkpoint_interval_s"))
        self.assertEqual(list(d["interval_s"]),
                         [t.value("checkpoint_interval_s") for t in by_interval])
        out = json.loads(dcsim("run", self.no_fabric, "--quiet", "--replicas", "3", "--json",
                               "--set", "checkpoint/@interval=10min"))
        stat = out["replicas"]["ettr_frac"]
        self.assertAlmostEqual(d["ettr"][0], stat["mean"], places=12)
        # dcsim's ci95 uses Student's t; the figure's table has 4 digits
        self.assertAlmostEqual(d["ettr_ci95"][0] / stat["ci95"], 1.0, places=3)

    def test_all_figures_and_cli(self):
        out = self.out("all_default")
        paths = figs.all_figures(self.default, out)
        self.assertEqual([os.path.basename(p) for p in paths],
                         ["time_breakdown.png", "time_breakdown.svg",
                          "campaign_timeline.png", "campaign_timeline.svg"])
        out = self.out("cli_step")
        r = subprocess.run([sys.executable, FIGURES_PY, self.step_path, "-o", out,
                            "--goodput", self.goodput_path], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        printed = r.stdout.split()
        self.assertEqual(len(printed), 12)       # 6 figures x (png, svg)
        for path in printed:
            (self.assert_png if path.endswith(".png") else self.assert_svg)(path)

    def test_power_pue_draws_the_hourly_table(self):
        d = figs.power_pue(self.step, self.out("pp.png"))
        with h5py.File(self.step_path, "r") as f:
            hourly = f["energy/hourly"][()]
            it_energy = f["summary/it_energy_j"][()]
            facility_energy = f["summary/facility_energy_j"][()]
        for name in ("hour_start_s", "it_power_w", "facility_power_w", "pue"):
            self.assertTrue(np.array_equal(d[name], hourly[name]), name)
        # the steps drawn integrate to the run's energy (docs/trace-format.md)
        self.assertAlmostEqual(float(np.sum(d["it_power_w"] * d["hour_s"])) / it_energy, 1.0,
                               places=9)
        self.assertAlmostEqual(float(np.sum(d["facility_power_w"] * d["hour_s"]))
                               / facility_energy, 1.0, places=9)
        self.assertEqual(d["hour_s"][0], 3600.0)
        with self.assertRaisesRegex(ValueError, "needs /energy/hourly"):
            figs.power_pue(self.default, self.out("none.png"))

    def test_site_comparison_draws_the_compare_table(self):
        d = figs.site_comparison(self.compare_path, self.out("sc.svg"))
        self.assertEqual(d["labels"], ["site=tianfu", "site=zhangjiakou", "site=wuhu"])
        with h5py.File(self.compare_path, "r") as f:
            table = f["compare"][()]
        self.assertEqual([v.decode() if isinstance(v, bytes) else v for v in table["variant"]],
                         d["labels"])
        for name in ("it_energy_j", "facility_energy_j", "energy_cost_cny", "co2_kg"):
            self.assertTrue(np.array_equal(d[name], table[name]), name)
        # the same job everywhere: one IT energy, facility energy above it
        self.assertEqual(len(set(d["it_energy_j"])), 1)
        self.assertTrue(np.all(d["facility_energy_j"] > d["it_energy_j"]))
        future = self.out("future_sites.h5")
        shutil.copyfile(self.compare_path, future)
        with h5py.File(future, "r+") as f:
            f["compare"].attrs["layout_version"] = "9"
        with self.assertRaisesRegex(TraceFormatError, "layout_version 9 is not one"):
            figs.site_comparison(future, self.out("future.png"))

    def test_unknown_format_version_is_refused(self):
        path = self.out("future.h5")
        shutil.copyfile(self.default_path, path)
        with h5py.File(path, "r+") as f:
            f.attrs["format_version"] = np.int32(99)
        with self.assertRaises(TraceFormatError) as cm:
            Trace(path)
        message = str(cm.exception)
        self.assertNotIn("\n", message)
        self.assertIn("format version 99 is not supported", message)
        r = subprocess.run([sys.executable, FIGURES_PY, path, "-o", self.out("future")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertTrue(r.stderr.startswith("dcsim_figures.py: error: "), r.stderr)
        self.assertIn("format version 99 is not supported", r.stderr)
        self.assertFalse(os.path.exists(self.out("future")))

    def test_same_input_same_bytes(self):
        # one rendering in this process, one by the CLI in another: SVG ids,
        # metadata and rasterised parts must not depend on the process
        for label, t in self.traces.items():
            here, there = self.out(f"same_{label}_a"), self.out(f"same_{label}_b")
            paths = figs.all_figures(t, here, formats=("svg",))
            r = subprocess.run([sys.executable, FIGURES_PY, t.path, "-o", there,
                                "--format", "svg"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(sorted(os.listdir(here)), sorted(os.listdir(there)))
            for path in paths:
                with self.subTest(trace=label, figure=os.path.basename(path)):
                    with open(path, "rb") as fa, \
                            open(os.path.join(there, os.path.basename(path)), "rb") as fb:
                        self.assertEqual(fa.read(), fb.read())

if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
