"""dcsim_brief - the conclusions at the top of a report of several variants
(`dcsim compare -o` tables, `dcsim sweep -o` files, several run traces): which
variant wins on time to train, energy cost, CO2, ETTR and MFU, by how much
(± the 95 % interval where replicas give one), and why the best differs from
the runner-up and from the baseline (the first variant).

Nothing here recomputes physics; it only does arithmetic on the fields the
files carry:
  - time to train of run traces and sweeps is a sum (docs/trace-format.md,
    "Time is conserved"): compute + rework + checkpoint writes + aborted
    writes + restarts (waits for spares and repairs included) + the persist,
    elastic, degraded and straggler stretches + maintenance. The difference
    is the difference term by term; with /step in both traces and equal
    iteration counts, the compute term is split further by the critical
    stage's iteration parts (compute, exposed TP/PP/DP/CP/EP communication,
    bubble, optimizer) x iterations.
  - products are split exactly by the logarithmic mean Divisia index (LMDI-I,
    Ang 2004, Energy Policy 32:1131): for Y = x1 x2 ... xn, the part of
    Y_b - Y_a due to x_k is L(Y_b, Y_a) ln(x_k,b / x_k,a), L(p, q) =
    (p - q) / ln(p / q); the parts add up to the difference exactly. Energy
    cost = time x mean IT power x PUE x price (cost / facility kWh); CO2 =
    time x mean IT power x PUE x emission factor (CO2 / facility kWh); the
    time to train of a compare table = (time x MFU x ETTR) x 1/MFU x 1/ETTR,
    the first factor being the work at peak speed (job size over GPUs).
  - the 95 % interval of a difference between two sweep points is
    sqrt(ci_a^2 + ci_b^2), independent replicas (conservative when the
    points share seeds)."""
import math
import os

import numpy as np
from dcsim_figures import (BLUE, GREEN, ORANGE, GREY, FONT_PT, DOUBLE_COLUMN_IN,
                           _figure, _save, _styled)
from dcsim_units import human, plus_minus, variant_words, label as metric_label

DAY_S = 86400.0

# objective: (key, words, lower is better, comparative)
OBJECTIVES = (("time_to_train_s", "time to train", True, "faster"),
              ("energy_cost_cny", "energy cost", True, "cheaper"),
              ("co2_kg", "CO2", True, "lower in CO2"),
              ("ettr_frac", "ETTR", False, "higher in ETTR"),
              ("mfu_frac", "MFU", False, "higher in MFU"))

# /summary (and sweep) terms that add up to time_to_train_s
TIME_TERMS = (("compute_time_s", "productive compute"), ("rework_s", "rework after failures"),
              ("checkpoint_time_s", "checkpoint writes"),
              ("checkpoint_aborted_s", "aborted checkpoint writes"),
              ("restart_time_s", "restarts (with waits for spares and repairs)"),
              ("maintenance_time_s", "planned maintenance"),
              ("persist_slowdown_s", "slowed by async persists"),
              ("elastic_slowdown_s", "slowed by missing replicas"),
              ("degraded_slowdown_s", "slowed by the degraded fabric"),
              ("straggler_slowdown_s", "slowed by stragglers"),
              ("slowdown_s", "slowed (stragglers, degraded fabric, missing replicas)"))
STEP_TERMS = (("compute_s", "compute kernels"), ("tp_s", "exposed TP communication"),
              ("pp_s", "exposed PP communication"), ("dp_s", "exposed DP reduction"),
              ("cp_s", "exposed CP communication"), ("ep_s", "exposed EP all-to-all"),
              ("bubble_s", "pipeline bubble"), ("optimizer_s", "optimizer step"))
COUNTS = (("failures", "failures"), ("restarts", "restarts"), ("checkpoints", "checkpoints"))
TIE = 1e-9      # relative differences below this are ties (the same run)


class Variant:
    """One row to rank: name in words, key -> (value, ci95 or None), units,
    the critical stage's iteration parts (or None) and the iteration count."""

    def __init__(self, name, key, values, units, step=None):
        self.name, self.key, self.values, self.units, self.step = name, key, values, units, step

    def get(self, key):
        return self.values.get(key, (None, None))[0]

    def ci(self, key):
        return self.values.get(key, (None, None))[1]


# --- the rows ------------------------------------------------------------------------------

def from_compare(table):
    """Rows of a compare table; with `dcsim compare --replicas` a metric with
    `_mean` and `_ci95` columns ranks on the replicas' mean and carries its
    interval (the plain run's value is replica 0's)."""
    units = dict(table.units)
    names = table.dtype.names
    out = []
    for lab, row in zip(table.labels, table):
        values = {c: (float(row[c]), None) for c in names}
        for c in names:
            if c.endswith("_mean") and c[:-5] + "_ci95" in names:
                values[c[:-5]] = (float(row[c]), float(row[c[:-5] + "_ci95"]))
        out.append(Variant(variant_words(lab), lab, values, units))
    return out


def from_sweep(table):
    out = []
    params = list(table.parameters)
    for row in table.done():
        values, units = {}, {}
        for c in table.dtype.names:
            if c.endswith("_mean"):
                k = c[:-5]
                values[k] = (float(row[c]), float(row[k + "_ci95"]))
                units[k] = table.units[c]
            elif c not in params and c not in ("point", "status", "replicas"):
                values[c], units[c] = (float(row[c]), None), table.units[c]
        key = ",".join(f"{p}={row[p]}" for p in params)
        out.append(Variant(variant_words(key), key, values, units))
    return out


def from_traces(traces, labels):
    out = []
    for t, lab in zip(traces, labels):
        values = {k: (float(v), None) for k, (v, _) in t.summary.items()}
        units = {k: u for k, (_, u) in t.summary.items()}
        if "step_mfu_frac" in values and "mfu_frac" not in values:
            values["mfu_frac"] = values["step_mfu_frac"]
            units["mfu_frac"] = "1"
        step = None
        if t.has_step:
            critical = int(t.step_attrs.get("critical_stage", 0))
            row = t.step_stages[critical]
            step = {c: float(row[c]) for c, _ in STEP_TERMS if c in t.step_stages.dtype.names}
        out.append(Variant(lab, lab, values, units, step))
    return out


# --- ranking ------------------------------------------------------------------------------

def _usable(variants, key):
    return all(v.get(key) is not None and math.isfinite(v.get(key)) for v in variants)


def rank(variants, key, lower):
    """Indices of variants from best to worst on key (stable on ties)."""
    return sorted(range(len(variants)), key=lambda i: (variants[i].get(key) if lower
                                                       else -variants[i].get(key)))


def _diff_ci(a, b, key):
    ca, cb = a.ci(key), b.ci(key)
    if ca is None or cb is None or not (math.isfinite(ca) and math.isfinite(cb)):
        return None
    return math.hypot(ca, cb)


def _is_tie(x, y):
    return abs(x - y) <= TIE * max(abs(x), abs(y), 1e-300)


def ranking(variants):
    """[(objective words, key, order, sentence)] for each objective every
    variant carries."""
    out = []
    for key, words, lower, better in OBJECTIVES:
        if len(variants) < 2 or not _usable(variants, key):
            continue
        order = rank(variants, key, lower)
        a, b = variants[order[0]], variants[order[1]]
        unit = a.units.get(key, "")
        va, vb = a.get(key), b.get(key)
        if _is_tie(va, vb):
            ties = sum(1 for i in order if _is_tie(variants[i].get(key), va))
            text = (f"{ties} variants tie at {human(va, unit, key)}" if ties < len(variants)
                    else f"every variant gives {human(va, unit, key)}")
            if ties < len(variants):
                text += "; the rest are worse"
            out.append((words, key, order, text, True))
            continue
        diff = abs(vb - va)
        ci = _diff_ci(a, b, key)
        rel = f" ({100 * diff / abs(vb):.3g} %)" if vb else ""
        margin = plus_minus(diff, ci, unit, key) if ci else human(diff, unit, key)
        if unit == "1" and key.endswith("_frac"):
            margin = margin.replace("%", "percentage points")
            rel = ""
        text = (f"{a.name} is best: {plus_minus(va, a.ci(key), unit, key)}, {margin}{rel} "
                f"{better} than {b.name} ({plus_minus(vb, b.ci(key), unit, key)})")
        if ci is not None and diff <= ci:
            text += "; within the 95 % interval, so not distinguishable with these replicas"
        out.append((words, key, order, text, False))
    return out


# --- why ----------------------------------------------------------------------------------

def _lmdi(ya, yb, factors):
    """[(words, part)] of yb - ya over factors [(words, xa, xb)] (LMDI-I), or
    None when a value is not positive and finite."""
    vals = [ya, yb] + [x for _, xa, xb in factors for x in (xa, xb)]
    if not all(v is not None and math.isfinite(v) and v > 0 for v in vals):
        return None
    if _is_tie(ya, yb):
        return [(w, 0.0) for w, _, _ in factors]
    weight = (yb - ya) / math.log(yb / ya)
    return [(w, weight * math.log(xb / xa)) for w, xa, xb in factors]


def _time_terms(a, b):
    """[(words, part of b - a)] of the time to train, term by term, with the
    compute term split by the iteration's parts when both carry them."""
    parts = []
    shown = 0.0
    for key, words in TIME_TERMS:
        xa, xb = a.get(key), b.get(key)
        if xa is None and xb is None:
            continue
        d = (xb or 0.0) - (xa or 0.0)
        if key == "compute_time_s" and a.step and b.step and a.get("iterations") is not None \
                and a.get("iterations") == b.get("iterations"):
            n = a.get("iterations")
            split = 0.0
            for c, w in STEP_TERMS:
                if c in a.step and c in b.step:
                    part = n * (b.step[c] - a.step[c])
                    parts.append((f"{w} (per iteration x {n:,.0f} iterations)", part))
                    split += part
            parts.append(("compute time not split by the iteration's parts", d - split))
        else:
            parts.append((words, d))
        shown += d
    total = b.get("time_to_train_s") - a.get("time_to_train_s")
    if "compute_time_s" not in a.values:      # a sweep: compute is the remainder
        parts.insert(0, ("productive compute (the rest of the time)", total - shown))
    elif abs(total - shown) > 1e-9 * abs(b.get("time_to_train_s")):
        parts.append(("other", total - shown))
    return parts


def _per(v, num, den):
    x, y = v.get(num), v.get(den)
    return x / y if x is not None and y else None


def explain(a, b, key):
    """[(cause, part of b - a in key's unit)] or None: why b differs from a on key."""
    t = "time_to_train_s"
    if key == t:
        if any(k in a.values for k, _ in TIME_TERMS[:2]):
            return _time_terms(a, b)
        if _usable([a, b], "mfu_frac") and _usable([a, b], "ettr_frac"):
            work = [(v.get(t) * v.get("mfu_frac") * v.get("ettr_frac")) for v in (a, b)]
            return _lmdi(a.get(t), b.get(t), [
                ("MFU (compute and exposed communication speed)", 1 / a.get("mfu_frac"),
                 1 / b.get("mfu_frac")),
                ("ETTR (failures, restarts, checkpoints)", 1 / a.get("ettr_frac"),
                 1 / b.get("ettr_frac")),
                ("work at peak speed (job size over GPUs)", work[0], work[1])])
        return None
    if key in ("energy_cost_cny", "co2_kg"):
        last = ("energy price (CNY per facility kWh)" if key == "energy_cost_cny"
                else "grid emission factor (kg CO2 per facility kWh)")
        return _lmdi(a.get(key), b.get(key), [
            ("time to train", a.get(t), b.get(t)),
            ("mean IT power", _per(a, "it_energy_j", t), _per(b, "it_energy_j", t)),
            ("PUE (facility / IT energy)", _per(a, "facility_energy_j", "it_energy_j"),
             _per(b, "facility_energy_j", "it_energy_j")),
            (last, _per(a, key, "facility_energy_j"), _per(b, key, "facility_energy_j"))])
    return None


def _count(x):
    """A count, or a sweep's mean count: 45,358 or 598.7."""
    return f"{x:,.0f}" if x == int(x) else f"{x:,.1f}"


def _counts(a, b):
    bits = []
    for key, words in COUNTS:
        xa, xb = a.get(key), b.get(key)
        if xa is not None and xb is not None and xa != xb:
            bits.append(f"{words} {_count(xb)} vs {_count(xa)}")
    return "; ".join(bits)


def why_html(esc, a, b, key, words):
    """A table of why b trails a on key (b - a split into causes), or ''."""
    parts = explain(a, b, key)
    if not parts:
        return ""
    unit = a.units.get(key, "")
    gap = b.get(key) - a.get(key)
    if _is_tie(a.get(key), b.get(key)):
        return ""
    # parts below a millionth of the values compared are rounding, not causes
    floor = 1e-6 * max(abs(a.get(key)), abs(b.get(key)))
    parts = sorted(((w, p) for w, p in parts if abs(p) > floor), key=lambda x: -abs(x[1]))
    rows = "".join(
        f'<tr><td>{esc(w)}</td><td class="num" data-part="{esc(w)}" data-value="{p!r}">'
        f'{esc(("+" if p > 0 else "") + human(p, unit, key))}</td>'
        f'<td class="num">{100 * p / gap:.0f} %</td></tr>' for w, p in parts)
    counts = _counts(a, b) if key == "time_to_train_s" else ""
    note = f'<p class="note">{esc(b.name)} vs {esc(a.name)}: {esc(counts)}.</p>' if counts else ""
    return (f'<h3>Why {esc(b.name)} trails {esc(a.name)} on {esc(words)} '
            f'({esc(("+" if gap > 0 else "") + human(gap, unit, key))})</h3>'
            f'<div class="wide"><table class="why" data-key="{esc(key)}" '
            f'data-gap="{gap!r}"><thead><tr><th>cause</th>'
            f'<th class="num">difference</th><th class="num">share of the gap</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>{note}")


def conclusions_html(esc, variants, what, index):
    """The ranked summary in words and the why tables, for one group of variants."""
    if len(variants) < 2:
        return ""
    ranked = ranking(variants)
    if not ranked:
        return ""
    rows = []
    for words, key, order, text, _ in ranked:
        places = ", ".join(variants[i].name for i in order)
        rows.append(f'<tr data-objective="{esc(key)}" data-best="{esc(variants[order[0]].key)}">'
                    f'<td title="{esc(key)}">{esc(words)}</td><td>{esc(text)}</td>'
                    f'<td class="desc">{esc(places)}</td></tr>')
    lead = []
    for words, key, order, _, tie in ranked:
        if not tie:
            lead.append(f"{variants[order[0]].name} on {words}")
    lead_text = ("Best: " + "; ".join(lead) + ".") if lead else "Every variant ties."
    parts = [f'<section id="conclusions-{index}" class="conclusions">'
             f"<h2>Conclusions: {esc(what)}</h2>", f'<p class="lead">{esc(lead_text)}</p>',
             '<div class="wide"><table class="ranking"><thead><tr><th>objective</th>'
             "<th>result</th><th>best to worst</th></tr></thead><tbody>"
             + "".join(rows) + "</tbody></table></div>"]
    base = variants[0]
    for words, key, order, _, tie in ranked:
        if tie or key not in ("time_to_train_s", "energy_cost_cny", "co2_kg"):
            continue
        best, second = variants[order[0]], variants[order[1]]
        parts.append(why_html(esc, best, second, key, words))
        if base is not best and base is not second:
            parts.append(why_html(esc, best, base, key, words + ", against the baseline"))
    parts.append("</section>")
    return "\n".join(p for p in parts if p)


def conclusions_text(variants, what):
    ranked = ranking(variants) if len(variants) > 1 else []
    if not ranked:
        return ""
    return "\n".join([f"conclusions ({what}):"]
                     + [f"  {words}: {text}" for words, _, _, text, _ in ranked]) + "\n"


# --- the figure ---------------------------------------------------------------------------

PANELS = (("time_to_train_s", "time to train (days)", DAY_S, BLUE),
          ("mfu_frac", "MFU (%)", 0.01, ORANGE),
          ("ettr_frac", "ETTR (%)", 0.01, GREEN))


@_styled
def metrics_figure(variants, path):
    """Time to train, MFU and ETTR, a bar per variant (named in words) with its
    95 % interval where replicas give one; panels for the metrics every
    variant carries. Double column. Returns {"path", "names", key: values}."""
    panels = [p for p in PANELS if _usable(variants, p[0])]
    if not panels or not variants:
        raise ValueError("no time to train, MFU or ETTR in every variant")
    n = len(variants)
    fig = _figure(DOUBLE_COLUMN_IN, 0.9 + 0.22 * n)
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)[0]
    y = np.arange(n)
    out = {"path": path, "names": [v.name for v in variants]}
    for ax, (key, xlabel, scale, colour) in zip(axes, panels):
        values = np.array([v.get(key) for v in variants]) / scale
        cis = [v.ci(key) for v in variants]
        err = (np.array([c if c is not None and math.isfinite(c) else 0.0 for c in cis]) / scale
               if any(c for c in cis) else None)
        ax.barh(y, values, xerr=err, color=colour, height=0.7, edgecolor=GREY, linewidth=0.3,
                error_kw={"elinewidth": 0.6, "capsize": 1.5})
        ax.set_xlabel(xlabel)
        top = float(np.max(values + (err if err is not None else 0)))
        ax.set_xlim(0, top * 1.3 if top > 0 else 1.0)
        for yi, v in zip(y, values):
            ax.text(v, yi, f" {v:.3g}", va="center", ha="left", fontsize=FONT_PT)
        out[key] = values * scale
    axes[0].set_yticks(y, [v.name for v in variants])
    axes[0].set_ylim(n - 0.5, -0.5)
    _save(fig, path)
    return out


def figure_svg(variants, workdir, name, clean):
    """The metrics figure as cleaned SVG bytes, or None when it cannot be drawn."""
    if len(variants) < 2:
        return None
    path = os.path.join(workdir, f"{name}.svg")
    try:
        metrics_figure(variants, path)
    except ValueError:
        return None
    with open(path, "rb") as f:
        return clean(f.read())


def sweep_title(table):
    """'a sweep of 4 points over checkpoint interval x failure-rate scale'."""
    names = []
    for p in table.parameters:
        leaf = p.rsplit("/", 1)[-1].lstrip("@")
        names.append("failure-rate scale" if p.startswith("reliability") and leaf == "scale"
                     else "checkpoint interval" if p.startswith("checkpoint") and leaf == "interval"
                     else metric_label(leaf.replace("-", "_")))
    return f"a sweep of {len(table)} points over {' x '.join(names) or 'one point'}"

