"""dcsim_hubs - figures and report section of a placement across hubs
(`dcsim hubs SCENARIO.xml -o FILE.h5`, docs/hubs.md, docs/trace-format.md
"Hubs tables"), and of a table of such runs (`dcsim sweep HUBS.xml -o`:
/hubs_sweep; `dcsim compare HUBS.xml ... -o`: /compare).

    /usr/bin/python3 analysis/dcsim_hubs.py hubs.h5 -o figs/   # every figure
    /usr/bin/python3 analysis/dcsim_hubs.py sweep.h5 -o figs/  # a table's figures
    ./build/dcsim report hubs.h5 sweep.h5                      # the same, in the report

Everything is drawn from the file, nothing recomputed by a model: the hub
comparison is /hubs/hubs (one bar per hub), the areas over time are
/hubs/series (per hub per bin, whose sums over the bins are /hubs/hubs), the
saving is the policy's totals (the sums of /hubs/hubs; its mean serving RTT
the /hubs attribute serving_rtt_mean_s) against the baseline's totals that
/hubs carries as attributes (baseline_cost, baseline_co2_kg, ...). Each
figure function returns the numbers it drew (SI units: CNY, kg, L, J, s),
which is how tests/python/test_hubs_report.py compares them with the tables.
On a table, a row per variant: its totals beside the baseline's (the row's
total plus its saving: saving = baseline - policy), and the share of the
jobs each hub took, as the row holds them.
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dcsim_figures as F  # noqa: E402
from dcsim_trace import TraceFormatError, table_columns, variant_table  # noqa: E402

HOUR_S = 3600.0
GWH_J = 3.6e12
MEGA = 1e6
KILOTONNE_KG = 1e6
M3_L = 1e3
FIGURES = ("hubs_compare", "hubs_over_time", "hubs_saving")  # of a run
TABLE_FIGURES = ("hubs_variants", "hubs_jobs")  # of a table
TITLES = {"hubs_compare": "Each hub's energy, cost, CO2, water, utilisation and wait",
          "hubs_over_time": "Cost and CO2 by hub over the months",
          "hubs_saving": "What the policy saves against everything at the nearest hub",
          "hubs_variants": "Each variant's cost, CO2 and water against nearest, and its latency",
          "hubs_jobs": "The share of the jobs each hub took, per variant"}
# a hubs table (compare_hubs.c's names): what tells it from the other tables
TABLE_COLUMNS = ("cost", "co2_kg", "water_l", "saving_cost", "saving_co2_kg",
                 "saving_water_l", "serving_rtt_mean_s", "jobs_hub_1")
COLOURS = (F.BLUE, F.ORANGE, F.SKY, F.GREEN, F.YELLOW, F.VERMILLION, F.PURPLE, F.GREY,
           F.LIGHT_GREY, "#000000")  # ten hubs, ten colours
SAVED = (("cost", "cost (M CNY)", MEGA), ("co2_kg", "CO2 (kt)", KILOTONNE_KG),
         ("water_l", "water (m³)", M3_L))


def _text(v):
    return v.decode("utf-8") if isinstance(v, bytes) else str(v)


def is_hubs(path):
    """Whether path is a `dcsim hubs -o` file (a /hubs group with /hubs/hubs)."""
    with h5py.File(path, "r") as f:
        g = f.get("hubs")
        return isinstance(g, h5py.Group) and isinstance(g.get("hubs"), h5py.Dataset)


def table_name(path):
    """The dataset of a hubs table at path ("hubs_sweep" or "compare"), or
    None (OSError when not HDF5)."""
    with h5py.File(path, "r") as f:
        for name in ("hubs_sweep", "compare"):
            ds = f.get(name)
            if isinstance(ds, h5py.Dataset) and all(c in table_columns(ds)
                                                     for c in TABLE_COLUMNS):
                return name
    return None


class HubsTable:
    """A table of hubs runs, a row per variant or sweep point: /hubs_sweep
    (`dcsim sweep`) or /compare (`dcsim compare -o` on hubs scenarios):
      name       "hubs_sweep" or "compare"
      labels     each row's label (its PATH=VALUE sets, or its file)
      columns    {column: numpy array (float)}, units {column: unit}
      hubs       the jobs_hub_K columns' hubs: the attribute hub_names, or
                 "hub K" where the variants do not share their hubs' names
    TraceFormatError (one line) for a file without one."""

    def __init__(self, path):
        self.path = path
        name = table_name(path)
        if name is None:
            raise TraceFormatError(f"{path}: no hubs table (/hubs_sweep, or a /compare with "
                                   f"the columns {', '.join(TABLE_COLUMNS)})")
        with h5py.File(path, "r") as f:
            ds = f[name]
            table, self.labels = variant_table(ds)
            names = [_text(x) for x in ds.attrs.get("hub_names", [])]
        self.name = name
        cols = list(table.dtype.names)
        self.columns = {c: np.asarray(table[c], dtype=float) for c in cols}
        self.units = dict(table.units)
        k = sum(1 for c in cols if c.startswith("jobs_hub_"))
        self.hubs = names if len(names) == k else [f"hub {i + 1}" for i in range(k)]
        if len(self.labels) != len(table):
            raise TraceFormatError(f"{path}: /{name} has {len(table)} rows but "
                                   f"{len(self.labels)} labels")

    def __len__(self):
        return len(self.labels)

    def jobs(self):
        """[row, hub] jobs placed (0 where a row has fewer hubs: NaN in the file)."""
        m = np.array([self.columns[f"jobs_hub_{h + 1}"] for h in range(len(self.hubs))]).T
        return np.nan_to_num(m.reshape(len(self), len(self.hubs)), nan=0.0)


class HubsRun:
    """A `dcsim hubs -o` file:
      attrs    the root attributes (command, event_digest, scenario_name, ...)
      group    /hubs' attributes (policy, hub_names, horizon_s, baseline_*, ...)
      hubs     /hubs/hubs (one row per hub)
      series   /hubs/series (per hub per bin, hub-major)
      names    the hubs' names, in id order
    TraceFormatError (one line) for a file that is not one, or one written
    before /hubs/series."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            g = f.get("hubs")
            if not isinstance(g, h5py.Group) or "hubs" not in g:
                raise TraceFormatError(f"{path}: not a dcsim hubs file (no /hubs/hubs)")
            if "series" not in g or "baseline_cost" not in g.attrs:
                raise TraceFormatError(f"{path}: a dcsim hubs file without /hubs/series and "
                                       "the baseline's attributes (written by an older dcsim: "
                                       "run dcsim hubs -o again)")
            self.attrs = {k: _text(v) if isinstance(v, (bytes, str)) else v
                          for k, v in f.attrs.items()}
            self.group = {k: v for k, v in g.attrs.items()}
            self.names = [_text(x) for x in g.attrs["hub_names"]]
            self.hubs = g["hubs"][()]
            self.series = g["series"][()]
        self.policy = _text(self.group.get("policy", ""))
        self.n_bins = int(self.series["bin"].max()) + 1 if len(self.series) else 0

    def attr(self, name):
        return float(self.group[name])

    def totals(self):
        """The policy's totals: the sums of /hubs/hubs (SI units)."""
        h = self.hubs
        return {"cost": float(np.sum(h["cost"])), "co2_kg": float(np.sum(h["co2_kg"])),
                "water_l": float(np.sum(h["water_l"])),
                "facility_energy_j": float(np.sum(h["facility_energy_j"])),
                "it_energy_j": float(np.sum(h["it_energy_j"])),
                "serving_rtt_mean_s": self.attr("serving_rtt_mean_s")}

    def baseline(self):
        return {k: self.attr("baseline_" + k) for k in
                ("cost", "co2_kg", "water_l", "facility_energy_j", "it_energy_j",
                 "serving_rtt_mean_s")}

    def by_bin(self, column):
        """(bin edges in s, array [hub, bin]) of a /hubs/series column."""
        n_h, n_b = len(self.hubs), self.n_bins
        m = np.zeros((n_h, n_b))
        m[self.series["hub"], self.series["bin"]] = self.series[column]
        first = self.series[self.series["hub"] == 0]
        edges = np.append(first["t_start_s"], first["t_end_s"][-1]) if len(first) else [0, 1]
        return np.asarray(edges, dtype=float), m


def _short(v):
    """A bar's label: thousands with separators, smaller values to 3 digits."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _bars(ax, names, values, title, fmt):
    x = np.arange(len(names))
    ax.bar(x, values, color=F.BLUE, width=0.7)
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=60, ha="right")
    ax.set_title(title)
    top = float(np.max(values)) if len(values) else 0.0
    ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    for i, v in enumerate(values):
        ax.text(i, v, fmt.format(v) if fmt else _short(v), ha="center", va="bottom",
                fontsize=5)


@F._styled
def hubs_compare(run, path):
    """Six bar panels, one bar per hub: facility energy (GWh), cost (M CNY:
    energy + data), CO2 (kt), water (m3), utilisation over the horizon (%),
    P90 queue wait (h); /hubs/hubs as it is. Double column. Returns {"path",
    "names", "facility_energy_j", "cost", "co2_kg", "water_l", "utilisation",
    "wait_p90_s"} (per hub, SI)."""
    h = run.hubs
    out = {"path": path, "names": run.names}
    for k in ("facility_energy_j", "cost", "co2_kg", "water_l", "utilisation", "wait_p90_s"):
        out[k] = np.asarray(h[k], dtype=float)
    fig = F._figure(F.DOUBLE_COLUMN_IN, 4.6)
    axes = fig.subplots(2, 3).ravel()
    panels = (("facility_energy_j", GWH_J, "facility energy (GWh)", None),
              ("cost", MEGA, "cost, energy and data (M CNY)", None),
              ("co2_kg", KILOTONNE_KG, "CO2 (kt)", None),
              ("water_l", M3_L, "water (m³)", None),
              ("utilisation", 0.01, "utilisation over the horizon (%)", "{:.1f}"),
              ("wait_p90_s", HOUR_S, "P90 queue wait at the hub (h)", None))
    for ax, (k, scale, title, fmt) in zip(axes, panels):
        _bars(ax, run.names, out[k] / scale, title, fmt)
    F._save(fig, path)
    return out


@F._styled
def hubs_over_time(run, path):
    """Stacked areas over the bins of /hubs/series (months of 730 h, or days
    for a short horizon): cost (M CNY) and CO2 (kt) by hub, each hub's band
    its bin's value. Double column. Returns {"path", "edges_s", "cost",
    "co2_kg"} ([hub, bin] arrays, SI): their sums are the table's."""
    edges, cost = run.by_bin("cost")
    _, co2 = run.by_bin("co2_kg")
    day = run.attr("series_bin_s") < 30 * F.DAY_S
    unit = F.DAY_S if day else run.attr("series_bin_s")
    x = edges / unit
    fig = F._figure(F.DOUBLE_COLUMN_IN, 3.4)
    ax_c, ax_k = fig.subplots(1, 2)
    for ax, m, scale, title in ((ax_c, cost, MEGA, "cost by hub (M CNY per bin)"),
                                (ax_k, co2, KILOTONNE_KG, "CO2 by hub (kt per bin)")):
        low = np.zeros(m.shape[1])
        for i, name in enumerate(run.names):
            top = low + m[i] / scale
            ax.stairs(top, x, baseline=low, fill=True, color=COLOURS[i % len(COLOURS)],
                      label=name)
            low = top
        ax.set_title(title)
        ax.set_xlabel("day of the run" if day else "month of the run (730 h)")
        ax.set_xlim(x[0], x[-1])
        ax.set_ylim(0, float(low.max()) * 1.1 if len(low) and low.max() > 0 else 1.0)
    ax_k.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=6)
    F._save(fig, path)
    return {"path": path, "edges_s": edges, "cost": cost, "co2_kg": co2}


@F._styled
def hubs_saving(run, path):
    """The policy's totals against the baseline's (everything at the nearest
    hub), side by side with the saving written over them: cost (M CNY), CO2
    (kt), water (m3) and the mean serving RTT (ms; the latency paid).
    Double column. Returns {"path", "policy", "baseline", "saving"} (SI;
    saving = baseline - policy, the RTT's negative when the policy adds)."""
    pol, base = run.totals(), run.baseline()
    keys = SAVED + (("serving_rtt_mean_s", "mean serving RTT (ms)", 1e-3),)
    saving = {k: base[k] - pol[k] for k, _, _ in keys}
    fig = F._figure(F.DOUBLE_COLUMN_IN, 2.4)
    axes = fig.subplots(1, len(keys))
    for ax, (k, title, scale) in zip(axes, keys):
        vals = (base[k] / scale, pol[k] / scale)
        ax.bar([0, 1], vals, color=(F.GREY, F.BLUE), width=0.6)
        ax.set_xticks([0, 1])
        ax.set_xticklabels(["nearest", run.policy])
        pct = 100 * saving[k] / base[k] if base[k] else 0.0
        word = "saves" if saving[k] >= 0 else "adds"
        ax.set_title(f"{title}\n{word} {_short(abs(saving[k]) / scale)} ({abs(pct):.3g} %)")
        top = max(vals)
        ax.set_ylim(0, top * 1.15 if top > 0 else 1.0)
    F._save(fig, path)
    return {"path": path, "policy": pol, "baseline": base, "saving": saving}


def _short_label(label):
    """A variant's tick: its values without the paths (hubs/@policy=cheapest
    hubs/@backlog=gang -> cheapest gang), at most 28 characters."""
    words = [w.rsplit("=", 1)[-1] for w in label.split()]
    text = " ".join(words) if words else label
    return text if len(text) <= 28 else text[:27] + "…"


@F._styled
def hubs_variants(table, path):
    """Four bar panels, a group per row of the table: cost (M CNY), CO2 (kt)
    and water (m3), each the row's total beside its baseline's (everything
    at the nearest hub: the total plus the saving), the saving in % written
    over it; and the mean serving RTT (ms). Double column. Returns {"path",
    "labels", "policy": {cost, co2_kg, water_l}, "baseline": {...}, "saving":
    {...}, "serving_rtt_mean_s"} (per row, SI)."""
    c = table.columns
    pol = {k: c[k] for k, _, _ in SAVED}
    saving = {k: c["saving_" + k] for k, _, _ in SAVED}
    base = {k: pol[k] + saving[k] for k, _, _ in SAVED}
    ticks = [_short_label(s) for s in table.labels]
    x = np.arange(len(table))
    fig = F._figure(F.DOUBLE_COLUMN_IN, 4.4)
    axes = fig.subplots(2, 2).ravel()
    for ax, (k, title, scale) in zip(axes, SAVED):
        ax.bar(x - 0.2, base[k] / scale, width=0.4, color=F.GREY, label="nearest")
        ax.bar(x + 0.2, pol[k] / scale, width=0.4, color=F.BLUE, label="policy")
        for i in range(len(x)):
            pct = 100 * saving[k][i] / base[k][i] if base[k][i] else 0.0
            ax.text(x[i] + 0.2, pol[k][i] / scale, f"{-pct:+.3g} %", ha="center",
                    va="bottom", fontsize=5)
        ax.set_title(title)
        top = float(np.nanmax(np.concatenate([base[k], pol[k]]))) / scale if len(x) else 0.0
        ax.set_ylim(0, top * 1.35 if top > 0 else 1.0)
    axes[0].legend(loc="upper left", ncol=2, fontsize=6)
    rtt = c["serving_rtt_mean_s"]
    axes[3].bar(x, rtt * 1e3, width=0.6, color=F.ORANGE)
    axes[3].set_title("mean serving RTT (ms)")
    for ax in axes:
        ax.set_xticks(x)
        ax.set_xticklabels(ticks, rotation=30, ha="right", fontsize=6)
    F._save(fig, path)
    return {"path": path, "labels": list(table.labels), "policy": pol, "baseline": base,
            "saving": saving, "serving_rtt_mean_s": rtt}


@F._styled
def hubs_jobs(table, path):
    """A horizontal bar per row of the table, split by hub: the share of the
    row's jobs each hub took (%), jobs_hub_K / the row's jobs. Double column.
    Returns {"path", "labels", "hubs", "jobs" ([row, hub]), "share" ([row,
    hub], each row summing to 1 where it placed jobs)}."""
    jobs = table.jobs()
    totals = jobs.sum(axis=1)
    share = np.divide(jobs, totals[:, None], out=np.zeros_like(jobs), where=totals[:, None] > 0)
    fig = F._figure(F.DOUBLE_COLUMN_IN, 0.9 + 0.32 * max(len(table), 1))
    ax = fig.subplots(1, 1)
    y = np.arange(len(table))
    left = np.zeros(len(table))
    for h, name in enumerate(table.hubs):
        ax.barh(y, 100 * share[:, h], left=100 * left, color=COLOURS[h % len(COLOURS)],
                label=name, height=0.7)
        left = left + share[:, h]
    ax.set_yticks(y)
    ax.set_yticklabels([_short_label(s) for s in table.labels], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of the variant's jobs (%)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=6)
    F._save(fig, path)
    return {"path": path, "labels": list(table.labels), "hubs": list(table.hubs),
            "jobs": jobs, "share": share}


def all_figures(run, outdir, formats=("png", "svg"), prefix=""):
    """Every hubs figure of a run or a table, each in every format, into
    outdir (created). Returns the paths written."""
    os.makedirs(outdir, exist_ok=True)
    jobs = ((("hubs_variants", hubs_variants), ("hubs_jobs", hubs_jobs))
            if isinstance(run, HubsTable) else
            (("hubs_compare", hubs_compare), ("hubs_over_time", hubs_over_time),
             ("hubs_saving", hubs_saving)))
    return [fn(run, os.path.join(outdir, f"{prefix}{name}.{ext}"))["path"]
            for name, fn in jobs for ext in formats]


def figures_of(run):
    """{name: (value, unit)} of the run's totals and saving, read from the file."""
    pol, base = run.totals(), run.baseline()
    out = {"hubs": (len(run.hubs), "1"), "jobs": (int(np.sum(run.hubs["jobs"])), "1"),
           "horizon_s": (run.attr("horizon_s"), "s"),
           "facility_energy_j": (pol["facility_energy_j"], "J"), "cost": (pol["cost"], "CNY"),
           "co2_kg": (pol["co2_kg"], "kg"), "water_l": (pol["water_l"], "L"),
           "serving_rtt_mean_s": (pol["serving_rtt_mean_s"], "s")}
    for k, unit in (("cost", "CNY"), ("co2_kg", "kg"), ("water_l", "L")):
        out["baseline_" + k] = (base[k], unit)
        out["saving_" + k] = (base[k] - pol[k], unit)
    return out


def report_section(run, svgs, esc, value_cell, figures_html, index=0):
    """The report's section of one hubs file: its settings, the figures'
    table (value cells as the report writes them) and the figures."""
    a = run.attrs
    meta = [("scenario", a.get("scenario_name", "")), ("file", run.path),
            ("policy", run.policy), ("baseline", _text(run.group.get("baseline_policy", ""))),
            ("hubs", ", ".join(run.names)), ("CO2", _text(run.group.get("co2_basis", ""))),
            ("event digest", a.get("event_digest", ""))]
    rows = "\n".join(f"<tr><td class=\"name\">{esc(k)}</td><td>{esc(v)}</td></tr>"
                     for k, v in meta)
    figs = "\n".join(f'<tr><td class="name" title="{esc(k)}">{esc(k.replace("_", " "))}</td>'
                     f"{value_cell(k, v, u)}</tr>" for k, (v, u) in figures_of(run).items())
    return (f'<section class="hubs" id="hubs{index}"><h2>Hubs: '
            f'{esc(a.get("scenario_name", os.path.basename(run.path)))}, policy '
            f'{esc(run.policy)}</h2>\n<table class="meta">{rows}</table>\n<div class="wide">'
            f'<table id="hubs-figures{index}" class="summary"><thead><tr><th>figure</th>'
            f'<th class="num">value</th></tr></thead>\n<tbody>\n{figs}\n</tbody></table></div>\n'
            + figures_html(svgs, os.path.basename(run.path)) + "</section>\n")


# a table's columns in the report, in this order
TABLE_SHOWN = ("cost", "co2_kg", "water_l", "saving_cost", "saving_co2_kg", "saving_water_l",
               "serving_rtt_mean_s", "slo_violation_jobs", "wait_p90_s", "utilisation")


def table_section(table, svgs, esc, value_cell, figures_html, index=0):
    """The report's section of one hubs table: a row per variant with its
    totals and savings (value cells as the report writes them), the figures."""
    meta = [("file", table.path), ("table", "/" + table.name), ("rows", len(table)),
            ("hubs", ", ".join(table.hubs))]
    rows = "\n".join(f'<tr><td class="name">{esc(k)}</td><td>{esc(v)}</td></tr>'
                     for k, v in meta)
    heads = "<th>variant</th>" + "".join(f'<th class="num">{esc(c.replace("_", " "))}</th>'
                                         for c in TABLE_SHOWN)
    body = "\n".join(f'<tr><td class="name">{esc(label)}</td>'
                     + "".join(value_cell(k, float(table.columns[k][i]), table.units.get(k, ""))
                               for k in TABLE_SHOWN) + "</tr>"
                     for i, label in enumerate(table.labels))
    head = "Hubs sweep" if table.name == "hubs_sweep" else "Hubs comparison"
    return (f'<section class="hubs" id="hubs-table{index}"><h2>{esc(head)}</h2>\n'
            f'<table class="meta">{rows}</table>\n<div class="wide"><table '
            f'id="hubs-table-figures{index}" class="summary"><thead><tr>{heads}</tr></thead>\n'
            f"<tbody>\n{body}\n</tbody></table></div>\n"
            + figures_html(svgs, os.path.basename(table.path)) + "</section>\n")


def report_sections(runs, work, clean_svg, esc, value_cell, figures_html):
    """(HTML, stdout text) of every hubs file (a run or a table) given to
    dcsim report."""
    html, text = [], []
    for i, run in enumerate(runs):
        paths = all_figures(run, work, formats=("svg",), prefix=f"h{i}_")
        svgs = []
        for path in paths:
            with open(path, "rb") as f:
                svgs.append((os.path.splitext(os.path.basename(path))[0][len(f"h{i}_"):],
                             clean_svg(f.read())))
        if isinstance(run, HubsTable):
            html.append(table_section(run, svgs, esc, value_cell, figures_html, i))
            c = run.columns
            text.append(f"{run.path}: /{run.name}, {len(run)} rows (hubs)")
            text += [f"  {label}: cost {c['cost'][k] / MEGA:.6g} M CNY, saving "
                     f"{c['saving_cost'][k] / MEGA:.6g} M CNY; CO2 {c['co2_kg'][k] / 1e3:.6g} t, "
                     f"saving {c['saving_co2_kg'][k] / 1e3:.6g} t"
                     for k, label in enumerate(run.labels)]
            continue
        html.append(report_section(run, svgs, esc, value_cell, figures_html, i))
        text.append(f"{run.path}: dcsim hubs, policy {run.policy}, {len(run.hubs)} hubs")
        text += [f"  {k:22s} {v!r:>24s} {u}" for k, (v, u) in figures_of(run).items()]
    return "".join(html), "\n".join(text) + ("\n" if text else "")


def main(argv=None):
    return F.figures_main(argv, "dcsim_hubs.py",
                          "Write every figure of a `dcsim hubs -o` file, or of a "
                          "hubs sweep/compare table (docs/hubs.md).",
                          "HUBS.h5", load, all_figures)


def load(path):
    """A HubsRun for a `dcsim hubs -o` file, a HubsTable for a hubs table."""
    return HubsTable(path) if table_name(path) else HubsRun(path)


if __name__ == "__main__":
    sys.exit(main())
