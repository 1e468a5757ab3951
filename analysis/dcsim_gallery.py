"""dcsim_gallery.py - the examples gallery (docs/gallery.md): one scenario per
question an architect brings, each run with the command the gallery shows,
its figure drawn and its answer put in words.

    /usr/bin/python3 analysis/dcsim_gallery.py [--dcsim build/dcsim] -o DIR [--dpi N]

writes DIR/gallery_<question>.png (one per question), DIR/gallery.json (every
answer's figures, from the tables dcsim wrote) and prints one line per
question; --tables KEEP keeps those tables. Run from anywhere; the scenarios are scenarios/examples/gallery-*.xml
beside this file. Takes about 15 s on one core. tests/python/test_gallery.py
runs it in CI and checks the answers against the tables and the closed forms.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dcsim_figures as figs  # noqa: E402
from dcsim_figures import (BLUE, DAY_S, DOUBLE_COLUMN_IN, FONT_PT, GREEN, GREY,  # noqa: E402
                           GWH_J, KILOTONNE_KG, MEGA, MINUTE_S, ORANGE, VERMILLION, _figure,
                           _save, _styled)
from dcsim_trace import read_compare  # noqa: E402
from dcsim_units import variant_words  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "scenarios", "examples")
HOUR_S = 3600.0

# the hubs the which-hub question compares: the eight national hubs' clusters
# of sites.md with a price quote or the documented default (dcsim compare --sites)
HUBS = ("zhangjiakou", "horinger", "wuhu", "shaoguan", "tianfu", "chongqing", "guian",
        "zhongwei")
COOLING = ("air-chiller", "air-economiser", "evaporative", "direct-liquid")
INTERVALS = ("2min", "3min", "4min", "5min", "7min", "10min", "15min", "20min", "30min")

# panels of an outcome comparison: column of /compare, axis label, scale, format
PANELS = {
    "time_to_train_s": ("time to train (days)", DAY_S, "{:.2f}"),
    "mfu_frac": ("MFU (%)", 0.01, "{:.1f}"),
    "ettr_frac": ("goodput, ETTR (%)", 0.01, "{:.2f}"),
    "pue_frac": ("PUE over the run", 1.0, "{:.3f}"),
    "facility_energy_j": ("facility energy (GWh)", GWH_J, "{:.2f}"),
    "energy_cost_cny": ("energy cost (M CNY)", MEGA, "{:.2f}"),
    "co2_kg": ("emissions (kt CO$_2$)", KILOTONNE_KG, "{:.2f}"),
}
COLOURS = (BLUE, ORANGE, GREEN, GREY, VERMILLION)


@_styled
def outcome_comparison(table, path, columns, title):
    """One panel per column of a /compare table (PANELS), a bar per variant in
    the file's order, labelled in words ('on roce-400g'); the best value of
    each panel (lowest, or highest for MFU and ETTR) in bold. Double column.
    Returns {"path", "labels", column: values in the file's units}."""
    labels = [variant_words(label) for label in table.labels]
    n = len(labels)
    fig = _figure(DOUBLE_COLUMN_IN, 1.0 + 0.24 * n)
    axes = np.atleast_1d(fig.subplots(1, len(columns), sharey=True))
    y = np.arange(n)
    out = {"path": path, "labels": list(table.labels)}
    for k, (ax, column) in enumerate(zip(axes, columns)):
        label, scale, fmt = PANELS[column]
        values = np.array(table[column], dtype=float)
        out[column] = values
        shown = values / scale
        ax.barh(y, shown, height=0.7, color=COLOURS[k % len(COLOURS)], edgecolor=GREY,
                linewidth=0.3)
        best = int(np.argmax(values) if column in ("mfu_frac", "ettr_frac")
                   else np.argmin(values))
        low, high = float(shown.min()), float(shown.max())
        span = high - low
        # bars that differ by a few per cent: start the axis near the smallest so
        # the difference shows (the axis says where it starts)
        left = max(0.0, low - 2 * span) if span and span < 0.1 * high else 0.0
        ax.set_xlim(left, high + (high - left) * 0.35)
        for yi, v in zip(y, shown):
            ax.text(v, yi, " " + fmt.format(v), va="center", ha="left", fontsize=FONT_PT,
                    fontweight="bold" if yi == best else "normal")
        ax.set_xlabel(label)
    axes[0].set_yticks(y, labels)
    axes[0].set_ylim(n - 0.5, -0.5)
    fig.suptitle(title, fontsize=FONT_PT + 1)
    _save(fig, path)
    return out


@_styled
def build_vs_rent(summary, path):
    """Two bars: the run's built cost (its share of the capital cost plus
    energy) and its rented cost, in M CNY, with the break-even rent in the
    title. Single column."""
    share = summary["capex_amortised_cny"] / MEGA
    energy = summary["energy_cost_cny"] / MEGA
    rented = summary["rent_cost_cny"] / MEGA
    fig = _figure(figs.SINGLE_COLUMN_IN, 1.9)
    ax = fig.add_subplot()
    ax.barh([0], [share], color=BLUE, label="capital share", height=0.6)
    ax.barh([0], [energy], left=[share], color=ORANGE, label="energy", height=0.6)
    ax.barh([1], [rented], color=GREEN, label="rent", height=0.6)
    for yi, v in ((0, share + energy), (1, rented)):
        ax.text(v, yi, f" {v:.1f}", va="center", ha="left", fontsize=FONT_PT)
    ax.set_yticks([0, 1], ["build", "rent"])
    ax.set_ylim(1.5, -0.5)
    ax.set_xlim(0, max(share + energy, rented) * 1.25)
    ax.set_xlabel("cost of the run (M CNY)")
    ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=3, borderaxespad=0.2,
              handlelength=1.0)
    _save(fig, path)


def _run(dcsim, args, cwd):
    # stdout is a pipe, so no command draws progress (compare has no --quiet)
    r = subprocess.run([dcsim] + args, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"dcsim {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def _compare(dcsim, tmp, name, scenario, vary):
    out = os.path.join(tmp, name + ".h5")
    command = ["compare", os.path.join(EXAMPLES, scenario), "--vary", vary, "-o", out]
    _run(dcsim, command, tmp)
    return read_compare(out), "dcsim compare scenarios/examples/" + scenario + " --vary " + vary


def _pct(a, b):
    return 100.0 * (a - b) / b


def ib_vs_roce(dcsim, tmp, outdir):
    table, command = _compare(dcsim, tmp, "ib_roce", "gallery-ib-vs-roce-4k.xml",
                              "network=ib-ndr,roce-400g")
    columns = ("time_to_train_s", "mfu_frac", "ettr_frac", "energy_cost_cny", "co2_kg")
    outcome_comparison(table, os.path.join(outdir, "gallery_ib_vs_roce.png"), columns,
                       "Llama 3 70B on 4,096 H100: InfiniBand NDR or RoCE 400G")
    t = np.array(table["time_to_train_s"])
    win = int(np.argmin(t))
    lose = 1 - win
    return {"command": command, "labels": table.labels,
            "time_to_train_s": t.tolist(), "mfu": list(map(float, table["mfu_frac"])),
            "energy_cost_cny": list(map(float, table["energy_cost_cny"])),
            "winner": table.labels[win],
            "answer": (f"{variant_words(table.labels[win])} trains in {t[win] / DAY_S:.2f} days, "
                       f"{(t[lose] - t[win]) / DAY_S:.2f} days ({_pct(t[lose], t[win]):.2f} %) "
                       f"sooner than {variant_words(table.labels[lose])}; `dcsim compare` "
                       "prints which mechanism makes the gap")}


def which_hub(dcsim, tmp, outdir):
    table, command = _compare(dcsim, tmp, "hubs", "gallery-which-hub.xml",
                              "site=" + ",".join(HUBS))
    columns = ("pue_frac", "facility_energy_j", "energy_cost_cny", "co2_kg")
    outcome_comparison(table, os.path.join(outdir, "gallery_which_hub.png"), columns,
                       "The same run at eight hubs, from July")
    cost = np.array(table["energy_cost_cny"])
    co2 = np.array(table["co2_kg"])
    cheap, clean = int(np.argmin(cost)), int(np.argmin(co2))
    east = table.labels.index("site=wuhu")
    return {"command": command, "labels": table.labels, "energy_cost_cny": cost.tolist(),
            "co2_kg": co2.tolist(), "cheapest": table.labels[cheap],
            "cleanest": table.labels[clean],
            "answer": (f"cheapest {variant_words(table.labels[cheap])} "
                       f"({cost[cheap] / MEGA:.2f} M CNY, {_pct(cost[cheap], cost[east]):+.1f} % "
                       f"against Wuhu); cleanest {variant_words(table.labels[clean])} "
                       f"({co2[clean] / KILOTONNE_KG:.2f} kt CO2, "
                       f"{_pct(co2[clean], co2[east]):+.1f} % against Wuhu)")}


def checkpoint_failures(dcsim, tmp, outdir):
    out = os.path.join(tmp, "sweep.h5")
    grid = ["--grid", "checkpoint/@interval=" + ",".join(INTERVALS),
            "--grid", "reliability/@scale=1,2", "--replicas", "8"]
    scenario = os.path.join(EXAMPLES, "gallery-checkpoint-failures.xml")
    _run(dcsim, ["sweep", scenario] + grid + ["-o", out], tmp)
    drawn = figs.goodput_sweep(out, os.path.join(outdir, "gallery_checkpoint_failures.png"))
    series = [{"label": s["label"], "interval_s": s["interval_s"].tolist(),
               "ettr": s["ettr"].tolist(), "best_interval_s": s["best_interval_s"],
               "daly_interval_s": s["daly_interval_s"]} for s in drawn["series"]]
    words = "; ".join(f"{s['label']}: best every {s['best_interval_s'] / MINUTE_S:.1f} min, "
                      f"goodput {max(s['ettr']):.4f} (Daly {s['daly_interval_s'] / MINUTE_S:.1f} "
                      "min)" for s in series)
    return {"command": ("dcsim sweep scenarios/examples/gallery-checkpoint-failures.xml "
                        + " ".join(grid)), "series": series, "answer": words}


def liquid_vs_air(dcsim, tmp, outdir):
    table, command = _compare(dcsim, tmp, "cooling", "gallery-liquid-vs-air.xml",
                              "site/@cooling=" + ",".join(COOLING))
    columns = ("pue_frac", "facility_energy_j", "energy_cost_cny", "co2_kg")
    outcome_comparison(table, os.path.join(outdir, "gallery_liquid_vs_air.png"), columns,
                       "Cooling designs at Shaoguan, June onwards")
    pue = np.array(table["pue_frac"])
    energy = np.array(table["facility_energy_j"])
    air = table.labels.index("site/@cooling=air-chiller")
    liquid = table.labels.index("site/@cooling=direct-liquid")
    return {"command": command, "labels": table.labels, "pue": pue.tolist(),
            "facility_energy_j": energy.tolist(),
            "answer": (f"PUE {pue[air]:.3f} with chillers, {pue[liquid]:.3f} with direct liquid "
                       f"cooling: {(energy[air] - energy[liquid]) / GWH_J:.3f} GWh "
                       f"({-_pct(energy[liquid], energy[air]):.1f} %) less facility energy")}


def build_or_rent(dcsim, tmp, outdir):
    scenario = "gallery-build-vs-rent.xml"
    doc = json.loads(_run(dcsim, ["run", os.path.join(EXAMPLES, scenario), "--json"], tmp))
    s = doc["summary"]
    build_vs_rent(s, os.path.join(outdir, "gallery_build_vs_rent.png"))
    gpu_h = s["gpu_count"] * s["time_to_train_s"] / HOUR_S
    built = s["build_cost_cny"]
    breakeven = built / gpu_h
    return {"command": f"dcsim run scenarios/examples/{scenario}",
            "built_cny": built, "rented_cny": s["rent_cost_cny"], "gpu_h": gpu_h,
            "breakeven_rent_cny_per_gpu_h": breakeven,
            "answer": (f"built {built / MEGA:.1f} M CNY vs rented {s['rent_cost_cny'] / MEGA:.1f} M "
                       f"CNY at the illustrative prices: building pays while rent is above "
                       f"{breakeven:.2f} CNY per GPU-hour")}


QUESTIONS = (("ib_vs_roce", ib_vs_roce), ("which_hub", which_hub),
             ("checkpoint_failures", checkpoint_failures), ("liquid_vs_air", liquid_vs_air),
             ("build_vs_rent", build_or_rent))


def main(argv=None):
    p = argparse.ArgumentParser(prog="dcsim_gallery.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--dcsim", default=os.path.join(HERE, "..", "build", "dcsim"))
    p.add_argument("-o", "--output", required=True, metavar="DIR")
    p.add_argument("--dpi", type=int, default=150, help="PNG resolution (default 150)")
    p.add_argument("--tables", metavar="DIR",
                   help="keep the files dcsim wrote (ib_roce.h5, hubs.h5, sweep.h5, "
                        "cooling.h5) in DIR (default: a temporary directory)")
    args = p.parse_args(argv)
    figs.png_dpi = args.dpi
    os.makedirs(args.output, exist_ok=True)
    answers = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            if args.tables:
                os.makedirs(args.tables, exist_ok=True)
            where = os.path.abspath(args.tables or tmp)
            for name, fn in QUESTIONS:
                answers[name] = fn(os.path.abspath(args.dcsim), where, args.output)
                print(f"{name}: {answers[name]['answer']}")
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        print(f"dcsim_gallery.py: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 1
    with open(os.path.join(args.output, "gallery.json"), "w", encoding="utf-8") as f:
        json.dump(answers, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
