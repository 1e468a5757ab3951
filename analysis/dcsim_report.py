"""dcsim_report - one self-contained HTML report of dcsim traces (`dcsim report`).

One trace: a title (scenario, source, seed, dcsim version, event digest), the
whole /summary (value, unit, description), failures by cause when the
scenario names causes, and every figure dcsim_figures.all_figures draws for
it. Several traces: one comparison table (a column per trace, the metrics
they share, units once), then each trace's figures in its own section. The
summary (or the side-by-side table) is also printed on stdout.

The file needs nothing outside itself: CSS inline, figures as SVG in
`data:image/svg+xml;base64` <img> (vector, prints sharply; an <img> keeps each
SVG's ids its own). The same traces give byte-identical HTML (no dates, fixed
SVG ids). Every summary cell carries `data-metric` and `data-value` (Python
repr, exact) so tests can read the numbers back. It is written as
NAME.tmp.<pid> and renamed, so a failed run leaves no partial report.

    /usr/bin/python3 analysis/dcsim_report.py run.h5                   # ./report.html
    /usr/bin/python3 analysis/dcsim_report.py a.h5 b.h5 -o cmp.html    # side by side

Exit status 1 with one line `dcsim_report.py: error: ...` on stderr for a trace that cannot
be read or has an unknown format version (dcsim_trace.TraceFormatError), and for any
other failure on a damaged file (DCSIM_REPORT_TRACEBACK=1 shows the traceback).

A screenshot to look at without a browser (Debian package `chromium`):

    sh analysis/screenshot_report.sh report.html report.png
    # = chromium --headless --disable-gpu --no-sandbox --screenshot=report.png \\
    #            --window-size=1200,2000 file:///abs/path/report.html
"""
import argparse
import base64
import functools
import html
import os
import re
import stat
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import h5py  # noqa: E402
import numpy as np  # noqa: E402
import dcsim_figures  # noqa: E402
import dcsim_brief  # noqa: E402
import dcsim_cluster  # noqa: E402
import dcsim_serve  # noqa: E402
import dcsim_hubs  # noqa: E402
from dcsim_units import human, plus_minus, label as metric_label  # noqa: E402
from dcsim_trace import (Trace, TraceFormatError, file_kind, read_compare,  # noqa: E402
                         read_sweep, SweepTable, PacketTrace, read_packet)

DAY_S = 86400.0

# The order the writer adds /summary rows (sim/app/summary.c). HDF5 does not
# keep it unless the group tracks creation order, so this is the fallback;
# names not listed here follow, sorted.
SUMMARY_ORDER = (
    "time_to_train_s", "ettr_frac", "ettr_first_order_frac", "iteration_time_s", "iterations",
    "total_flops", "compute_time_s", "rework_s", "rework_gpu_hours", "checkpoint_time_s",
    "checkpoint_aborted_s", "restart_time_s", "checkpoint_write_s", "checkpoint_size_bytes",
    "silent_failures", "maintenance_time_s", "maintenance_windows", "persist_slowdown_s",
    "spare_wait_s", "repairs", "spares_lowest", "straggler_slowdown_s", "straggler_speed_frac",
    "stragglers", "drains", "elastic_slowdown_s", "elastic_restarts", "failures", "restarts",
    "checkpoints", "checkpoints_aborted", "checkpoint_interval_s",
    "checkpoint_every_iterations", "cluster_mtbf_s", "young_interval_s", "daly_interval_s",
    "gpu_count", "gpu_peak_flops_per_s", "step_mfu_frac", "step_exposed_comm_s",
    "step_bubble_s", "mfu_frac", "events_fired",
    # energy rows (docs/energy.md)
    "it_energy_j", "facility_energy_j", "pue_frac", "pue_annual_frac", "pue_min_frac",
    "pue_max_frac", "it_power_compute_w", "it_power_idle_w", "network_power_w",
    "peak_facility_power_w", "power_swing_w", "water_l", "energy_cost_cny",
    "energy_cost_per_mtok_cny", "co2_kg", "co2_per_mtok_kg", "capex_cny", "capex_amortised_cny",
    "build_cost_cny", "build_cost_per_mtok_cny", "rent_cost_cny", "rent_cost_per_mtok_cny")

FIGURE_TITLES = {
    "time_breakdown": "Where the time goes",
    "campaign_timeline": "Campaign timeline",
    "step_timeline": "One iteration, stage by stage",
    "tier_utilisation": "Fabric load by tier",
    "power_pue": "Power and PUE over the run",
    "goodput": "Goodput against checkpoint interval",
    "site_comparison": "Energy, cost and emissions by variant",
    "goodput_sweep": "Goodput against checkpoint interval, from the sweep",
    "packet_series": "Busiest links' queues, pauses and ECN marks over time",
    "variant_metrics": "Time to train, MFU and ETTR by variant (95 % intervals where replicas "
                       "give them)",
    **dcsim_cluster.TITLES,
    **dcsim_serve.TITLES,
    **dcsim_hubs.TITLES,
}
PACKET_TOP_FIGURE = 4   # links drawn in the packet section's figure
PACKET_TOP_TABLE = 8    # links in its table

SWEEP_COLUMNS = ("time_to_train_s", "ettr_frac", "failures", "rework_gpu_hours")

# figures are drawn at print size (3.5 or 7 in); on screen they are shown larger
SCREEN_SCALE = 1.4
PX_PER_PT = 4.0 / 3.0

CSS = """
body { font: 14px/1.4 "DejaVu Sans", Helvetica, Arial, sans-serif; color: #111;
       background: #fff; max-width: 1100px; margin: 1.5em auto; padding: 0 1em; }
h1 { font-size: 1.5em; margin: 0 0 .3em; }
h2 { font-size: 1.2em; margin: 1.4em 0 .4em; border-bottom: 1px solid #999; }
h3 { font-size: 1.05em; margin: 1.1em 0 .3em; }
table { border-collapse: collapse; margin: .4em 0 1em; font-size: 13px; }
th, td { padding: 2px 8px; border-bottom: 1px solid #ddd; text-align: left;
         vertical-align: top; }
th { border-bottom: 1px solid #555; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
p.lead { font-size: 15px; }
td.name { min-width: 8em; }
td.desc { color: #444; }
.hint { color: #666; }
table.meta td:first-child { color: #444; padding-left: 0; }
div.wide { overflow-x: auto; }
figure { margin: .8em 0 1.4em; break-inside: avoid; page-break-inside: avoid; }
figure img { display: block; max-width: 100%; height: auto; }
figcaption { font-size: 13px; color: #333; margin-top: .2em; }
p.note { color: #444; font-size: 13px; }
@media print {
  body { margin: 0; max-width: none; font-size: 10pt; }
  table { font-size: 9pt; }
  h2 { break-after: avoid; page-break-after: avoid; }
  tr { break-inside: avoid; page-break-inside: avoid; }
}
"""


class ReportError(Exception):
    """A trace that cannot be reported; str() is one line."""


def _esc(text):
    return html.escape(str(text), quote=True)


def _one_line(text):
    return " ".join(str(text).split())


def _what(e):
    """An unexpected exception in a few words: 'TypeError: ...'."""
    return f"{type(e).__name__}: {e}" if str(e) else type(e).__name__


# --- values -------------------------------------------------------------------------------

def _human(value, unit):
    """A reading aid after the value, as `dcsim run` prints it: '(74.00 d)'."""
    if isinstance(value, bool) or not np.isfinite(float(value)):
        return ""
    v = float(value)
    if unit == "s":
        if v >= 2 * DAY_S:
            return f"({v / DAY_S:.2f} d)"
        if v >= 2 * 3600:
            return f"({v / 3600:.2f} h)"
        if v >= 120:
            return f"({v / 60:.2f} min)"
        return ""
    if unit == "J" and v > 0:
        return f"({v / 3.6e12:.4g} GWh)" if v >= 3.6e12 else f"({v / 3.6e9:.4g} MWh)"
    if unit == "W" and v >= 1e3:
        return f"({v / 1e6:.4g} MW)"
    if unit == "B" and v >= 1e3:
        return f"({dcsim_figures._si_bytes(v)})"
    return ""


def format_value(value, unit=""):
    """Counts with digit groups (16,384); other numbers to 6 significant digits."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return f"{int(value):,}"
    return f"{float(value):.6g}"


def value_repr(value):
    """The exact value for data-value: repr of the Python int or float."""
    if isinstance(value, (np.integer, np.floating)):
        value = value.item()
    return repr(value)


# --- reading ------------------------------------------------------------------------------

def creation_order(path):
    """/summary names in the order the writer created them, or None when the
    group does not track creation order (then SUMMARY_ORDER stands in)."""
    with h5py.File(path, "r") as f:
        g = f["summary"]
        if not g.id.get_create_plist().get_link_creation_order() & h5py.h5p.CRT_ORDER_TRACKED:
            return None
        names = []
        g.id.links.iterate(lambda n: names.append(n.decode("utf-8")) and None,
                           idx_type=h5py.h5.INDEX_CRT_ORDER)
        return names


def summary_names(trace):
    """The trace's /summary names in the writer's order if recoverable, else in
    SUMMARY_ORDER, unknown names last, sorted."""
    try:
        order = creation_order(trace.path)
    except (OSError, KeyError, AttributeError):
        order = None
    if order and set(order) == set(trace.summary):
        return order
    rank = {n: i for i, n in enumerate(SUMMARY_ORDER)}
    return sorted(trace.summary, key=lambda n: (rank.get(n, len(rank)), n))


def failures_by_cause(trace):
    """[(cause, failures, per_day, share, lost_work_s)] from /campaign/events,
    most frequent first (ties in the causes attribute's order); [] when the
    scenario names no causes."""
    if not trace.event_causes or "failure" not in trace.event_kinds:
        return []
    fails = trace.events_of("failure")
    days = float(trace.value("time_to_train_s")) / DAY_S
    total = len(fails)
    rows = []
    names = list(trace.event_causes) + ["unnamed per-GPU rate"]
    for index, name in enumerate(names):
        code = index if index < len(trace.event_causes) else -1
        mine = fails[fails["cause"] == code]
        if code == -1 and len(mine) == 0:
            continue
        rows.append((name, len(mine), len(mine) / days if days > 0 else 0.0,
                     len(mine) / total if total else 0.0, float(np.sum(mine["lost_work_s"]))))
    rows.sort(key=lambda r: -r[1])       # stable: equal counts keep the causes' order
    return rows


def _clean_svg(data):
    """matplotlib's SVG without its DOCTYPE line and RDF <metadata> (URLs that
    name a DTD and vocabularies, not resources; nothing else changes)."""
    text = data.decode("utf-8")
    text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", text, count=1)
    text = re.sub(r"<metadata>.*?</metadata>\s*", "", text, count=1, flags=re.S)
    return text.encode("utf-8")


def render_figures(trace, workdir, prefix):
    """[(figure name, SVG bytes)] of every figure all_figures draws for trace."""
    paths = dcsim_figures.all_figures(trace, workdir, formats=("svg",), prefix=prefix)
    out = []
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0][len(prefix):]
        with open(path, "rb") as f:
            out.append((name, _clean_svg(f.read())))
    return out


# --- HTML ---------------------------------------------------------------------------------

def _meta_rows(trace):
    a = trace.attrs
    return [("scenario", a.get("scenario_name", "")),
            ("source", a.get("scenario_source", "")),
            ("seed", a.get("seed", "")),
            ("dcsim version", a.get("dcsim_version", "")),
            ("event digest", a.get("event_digest", "")),
            ("trace", trace.path),
            ("format version", trace.format_version)]


def _raw(value, unit):
    """The trace's number and unit, for a tooltip: '7148160 s'."""
    return f"{format_value(value, unit)} {unit}".strip()


def _name_cell(name):
    """A metric's name in words, its key as the tooltip."""
    return f'<td class="name" title="{_esc(name)}">{_esc(metric_label(name))}</td>'


def _value_cell(name, value, unit, trace_index=None):
    """The value in human units; data-value exact, the raw value as tooltip."""
    extra = f' data-trace="{trace_index}"' if trace_index is not None else ""
    return (f'<td class="num" data-metric="{_esc(name)}" data-value="{_esc(value_repr(value))}"'
            f'{extra} title="{_esc(_raw(value, unit))}">{_esc(human(value, unit, name))}</td>')


def summary_table_html(trace, names, table_id="summary"):
    rows = []
    for name in names:
        value, unit = trace.summary[name]
        rows.append(f'<tr>{_name_cell(name)}{_value_cell(name, value, unit)}'
                    f'<td class="desc">{_esc(trace.summary_descriptions.get(name, ""))}</td></tr>')
    return (f'<div class="wide"><table id="{_esc(table_id)}" class="summary">\n'
            '<thead><tr><th>metric</th><th class="num">value</th>'
            '<th>description</th></tr></thead>\n<tbody>\n' + "\n".join(rows)
            + "\n</tbody>\n</table></div>")


def causes_table_html(rows, table_id="causes"):
    body = "\n".join(
        f'<tr><td>{_esc(cause)}</td><td class="num" data-cause="{_esc(cause)}" '
        f'data-value="{n}">{n:,}</td><td class="num">{per_day:.3f}</td>'
        f'<td class="num">{100 * share:.1f} %</td>'
        f'<td class="num" title="{_esc(_raw(lost, "s"))}">{_esc(human(lost, "s"))}</td></tr>'
        for cause, n, per_day, share, lost in rows)
    return (f'<table id="{_esc(table_id)}" class="causes">\n<thead><tr><th>cause</th>'
            '<th class="num">failures</th><th class="num">per day (1/d)</th>'
            '<th class="num">share</th><th class="num">work lost</th></tr></thead>\n'
            f"<tbody>\n{body}\n</tbody>\n</table>")


def _svg_width_px(svg):
    """The screen width of an SVG drawn at print size: its width in pt x 4/3
    px/pt x SCREEN_SCALE (None when the root has no width in pt)."""
    m = re.search(rb'<svg[^>]*?\swidth="([0-9.]+)pt"', svg)
    return round(float(m.group(1)) * PX_PER_PT * SCREEN_SCALE) if m else None


def figures_html(figures, label):
    out = []
    for name, svg in figures:
        title = FIGURE_TITLES.get(name, name.replace("_", " "))
        data = base64.b64encode(svg).decode("ascii")
        width = _svg_width_px(svg)
        size = f' style="width: {width}px"' if width else ""
        out.append(f'<figure data-figure="{_esc(name)}">'
                   f'<img alt="{_esc(title)} ({_esc(label)})"{size} '
                   f'src="data:image/svg+xml;base64,{data}">'
                   f"<figcaption>{_esc(title)}</figcaption></figure>")
    return "\n".join(out)


def _svg_of(draw, workdir, name, source):
    path = os.path.join(workdir, f"{name}.svg")
    draw(source, path)
    with open(path, "rb") as f:
        return _clean_svg(f.read())


def compare_table_html(table, index):
    """A `dcsim compare -o` table: a row per variant, a column per metric."""
    cols = list(table.dtype.names)
    head = "".join(f'<th class="num" title="{_esc(c)} ({_esc(table.units[c])})">'
                   f"{_esc(metric_label(c))}</th>" for c in cols)
    rows = []
    for variant, row in zip(table.labels, table):
        cells = "".join(
            f'<td class="num" data-variant="{_esc(variant)}" data-metric="{_esc(c)}" '
            f'data-value="{_esc(value_repr(float(row[c])))}" '
            f'title="{_esc(_raw(float(row[c]), table.units[c]))}">'
            f"{_esc(human(float(row[c]), table.units[c], c))}</td>" for c in cols)
        rows.append(f'<tr><td class="name">{_esc(variant)}</td>{cells}</tr>')
    return (f'<div class="wide"><table id="compare-{index}" class="compare">\n<thead><tr>'
            f"<th>variant</th>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows)
            + "\n</tbody>\n</table></div>")


def sweep_table_html(table, index):
    """A `dcsim sweep` file's points: parameters, status, and the mean and 95 %
    half-width of the main metrics."""
    params = list(table.parameters)
    head = "".join(f"<th>{_esc(p)}</th>" for p in params)
    head += "<th>status</th>" + "".join(
        f'<th class="num" title="{_esc(c)}_mean &plusmn; {_esc(c)}_ci95">{_esc(metric_label(c))}<br>'
        '<span class="hint">mean &plusmn; 95 %</span></th>' for c in SWEEP_COLUMNS)
    rows = []
    for row in table:
        done = int(row["status"]) == table.status_done
        cells = "".join(f"<td>{_esc(row[p])}</td>" for p in params)
        cells += f"<td>{'done' if done else 'not done'}</td>"
        for c in SWEEP_COLUMNS:
            mean, ci = float(row[c + "_mean"]), float(row[c + "_ci95"])
            unit = table.units[c + "_mean"]
            cells += (f'<td class="num" data-point="{int(row["point"])}" data-metric="{_esc(c)}" '
                      f'data-value="{_esc(value_repr(mean))}" title="{_esc(_raw(mean, unit))} '
                      f'&plusmn; {_esc(format_value(ci))}">'
                      f"{_esc(plus_minus(mean, ci, unit, c))}</td>")
        rows.append(f"<tr>{cells}</tr>")
    return (f'<div class="wide"><table id="sweep-{index}" class="sweep">\n<thead><tr>{head}'
            "</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table></div>")


def sweep_sections(tables, svgs):
    parts = []
    for i, (table, svg) in enumerate(zip(tables, svgs)):
        a = table.attrs
        parts += [f'<section id="sweep-section-{i}"><h2>Sweep: '
                  f"{_esc(os.path.basename(table.path))}</h2>",
                  f'<p class="note">{_esc(a.get("scenario_name", ""))} '
                  f'({_esc(a.get("scenario_source", ""))}), {a.get("points_finished", "?")} of '
                  f'{a.get("points_total", "?")} points finished, {a.get("replicas", "?")} '
                  f'replicas each, seed {_esc(a.get("seed", ""))}, sweep '
                  f'{_esc(a.get("sweep_id", ""))}</p>',
                  sweep_table_html(table, i)]
        if svg is not None:
            parts.append(figures_html([("goodput_sweep", svg)], os.path.basename(table.path)))
        parts.append("</section>")
    return "\n".join(parts)


def compare_sections(tables, svgs):
    parts = []
    for i, (table, svg) in enumerate(zip(tables, svgs)):
        parts += [f'<section id="compare-section-{i}"><h2>Variants compared: '
                  f"{_esc(os.path.basename(table.path))}</h2>",
                  compare_table_html(table, i), figures_html([("site_comparison", svg)],
                                                             os.path.basename(table.path)),
                  "</section>"]
    return "\n".join(parts)


def packet_table_html(pt, index):
    """The busiest links of a packet trace by peak queue: ends, rate and
    end-of-run counters (/packet/links)."""
    cols = (("max_queued_bytes", "peak queue", "B"), ("max_held_bytes", "peak held", "B"),
            ("bytes_sent", "sent", "B"), ("packets_sent", "packets", "1"),
            ("pauses", "PAUSE frames", "1"), ("ecn_marks", "ECN marks", "1"),
            ("rate_bytes_per_s", "rate", "B/s"))
    head = "".join(f'<th class="num" title="{_esc(c)}">{_esc(label)}</th>'
                   for c, label, _ in cols)
    rows = []
    for link in pt.top_links(PACKET_TOP_TABLE):
        row = pt.links[link]
        cells = "".join(
            f'<td class="num" data-link="{int(row["link"])}" data-metric="{_esc(c)}" '
            f'data-value="{_esc(value_repr(row[c]))}" title="{_esc(_raw(row[c], unit))}">'
            f"{_esc(human(row[c], unit, c))}</td>"
            for c, _, unit in cols)
        rows.append(f'<tr><td class="name">{_esc(dcsim_figures.link_label(pt, link))}</td>'
                    f"{cells}</tr>")
    if not rows:
        rows.append(f'<tr><td colspan="{len(cols) + 1}">no link ever queued a packet</td></tr>')
    return (f'<div class="wide"><table id="packet-links-{index}" class="packet">\n<thead><tr>'
            f"<th>link</th>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows)
            + "\n</tbody>\n</table></div>")


def packet_sections(traces, svgs):
    parts = []
    for i, (pt, svg) in enumerate(zip(traces, svgs)):
        a, p = pt.attrs, pt.packet
        totals = {k: int(np.asarray(pt.links[k]).sum())
                  for k in ("packets_sent", "pauses", "ecn_marks")}
        algo = f", algorithm {p['algo']}" if "algo" in p else ""
        parts += [f'<section id="packet-section-{i}"><h2>Packet tier: '
                  f"{_esc(os.path.basename(pt.path))}</h2>",
                  f'<p class="note">{_esc(p.get("op", "?"))}{_esc(algo)} on '
                  f'{_esc(a.get("scenario_name", ""))} ({_esc(p.get("flow_control", "?"))}, MTU '
                  f'{format_value(p.get("mtu_bytes", 0))} B, buffer '
                  f'{format_value(p.get("buffer_bytes", 0))} B); {len(pt.links):,} links with traffic, '
                  f'{int(p.get("bins", 0))} bins of {format_value(p.get("dt_s", 0))} s; {totals["packets_sent"]:,} '
                  f'packet-hops, {totals["pauses"]:,} PAUSE frames, {totals["ecn_marks"]:,} '
                  f'ECN marks; event digest {_esc(a.get("event_digest", ""))}; '
                  f'<code>{_esc(a.get("command", ""))}</code></p>',
                  "<h3>Busiest links by peak queue</h3>", packet_table_html(pt, i),
                  figures_html([("packet_series", svg)], os.path.basename(pt.path)),
                  "</section>"]
    return "\n".join(parts)


def packet_text(traces):
    lines = []
    for pt in traces:
        p = pt.packet
        lines.append(f"{pt.path}: {p.get('op', '?')} on the packet tier, {len(pt.links)} links"
                     + (f" with traffic (of {int(p['fabric_links'])})" if "fabric_links" in p
                        else "") + ", "
                     f"{int(p.get('bins', 0))} bins of {format_value(p.get('dt_s', 0))} s")
        for link in pt.top_links(PACKET_TOP_FIGURE):
            row = pt.links[link]
            lines.append(f"  {dcsim_figures.link_label(pt, link):48s} peak queue "
                         f"{format_value(row['max_queued_bytes']):>10s} B, pauses "
                         f"{int(row['pauses'])}, marks {int(row['ecn_marks'])}")
    return "\n".join(lines) + ("\n" if lines else "")


def _page(title, body):
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{_esc(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            f"{body}\n</body>\n</html>\n")


def single_report(trace, figures, extra="", brief=""):
    name = trace.attrs.get("scenario_name", os.path.basename(trace.path))
    meta = "\n".join(f"<tr><td>{_esc(k)}</td><td>{_esc(v)}</td></tr>"
                     for k, v in _meta_rows(trace))
    parts = [f"<h1>dcsim report: {_esc(name)}</h1>", brief,
             f'<div class="wide"><table class="meta" id="meta">\n{meta}\n</table></div>',
             "<h2>Summary</h2>", summary_table_html(trace, summary_names(trace))]
    causes = failures_by_cause(trace)
    if causes:
        parts += ["<h2>Failures by cause</h2>", causes_table_html(causes)]
    parts += ["<h2>Figures</h2>", figures_html(figures, name), extra]
    return _page(f"dcsim report: {name}", "\n".join(parts))


def shared_metrics(traces):
    """Names every trace has with the same unit, in the first trace's order."""
    first = traces[0]
    return [n for n in summary_names(first)
            if all(n in t.summary and t.unit(n) == first.unit(n) for t in traces[1:])]


def labels_of(traces):
    """Column labels: the file names, or the paths when file names repeat."""
    base = [os.path.basename(t.path) for t in traces]
    return base if len(set(base)) == len(base) else [t.path for t in traces]


def comparison_report(traces, figures, extra="", brief=""):
    labels = labels_of(traces)
    shared = shared_metrics(traces)
    head = "".join(f'<th class="num" data-trace="{i}">{_esc(label)}</th>'
                   for i, label in enumerate(labels))
    meta_rows = []
    for k, _ in _meta_rows(traces[0]):
        cells = "".join(f"<td>{_esc(dict(_meta_rows(t))[k])}</td>" for t in traces)
        meta_rows.append(f"<tr><td>{_esc(k)}</td>{cells}</tr>")
    rows = []
    for name in shared:
        unit = traces[0].unit(name)
        cells = "".join(_value_cell(name, t.value(name), unit, i) for i, t in enumerate(traces))
        rows.append(f'<tr>{_name_cell(name)}{cells}'
                    f'<td class="desc">{_esc(traces[0].summary_descriptions.get(name, ""))}'
                    "</td></tr>")
    parts = [f"<h1>dcsim comparison: {len(traces)} traces</h1>", brief,
             '<div class="wide"><table class="meta" id="meta">\n<thead><tr><th></th>'
             + "".join(f"<th>{_esc(label)}</th>" for label in labels)
             + "</tr></thead>\n<tbody>\n" + "\n".join(meta_rows) + "\n</tbody>\n</table></div>",
             "<h2>Summary side by side</h2>",
             '<div class="wide"><table id="comparison" class="summary">\n<thead><tr>'
             f"<th>metric</th>{head}<th>description</th></tr></thead>\n<tbody>\n"
             + "\n".join(rows) + "\n</tbody>\n</table></div>"]
    for i, (t, figs, label) in enumerate(zip(traces, figures, labels)):
        name = t.attrs.get("scenario_name", "")
        parts.append(f'<section id="trace-{i}"><h2>{_esc(label)}: {_esc(name)}</h2>')
        only = [n for n in summary_names(t) if n not in shared]
        if only:
            parts += ["<h3>Metrics not in every trace</h3>",
                      summary_table_html(t, only, table_id=f"only-{i}")]
        causes = failures_by_cause(t)
        if causes:
            parts += ["<h3>Failures by cause</h3>", causes_table_html(causes, f"causes-{i}")]
        parts += ["<h3>Figures</h3>", figures_html(figs, label), "</section>"]
    parts.append(extra)
    return _page(f"dcsim comparison: {', '.join(labels)}", "\n".join(parts))


# --- text ---------------------------------------------------------------------------------

def summary_text(traces):
    """The first trace's summary, or with several a side-by-side table."""
    if len(traces) == 1:
        t = traces[0]
        a = t.attrs
        lines = [f"{t.path}: {a.get('scenario_name', '')}, dcsim {a.get('dcsim_version', '')}, "
                 f"seed {a.get('seed', '')}, digest {a.get('event_digest', '')}"]
        for name in summary_names(t):
            value, unit = t.summary[name]
            hint = _human(value, unit)
            lines.append(f"  {name:30s} {format_value(value, unit):>20s} {unit:7s} {hint}"
                         .rstrip())
        causes = failures_by_cause(t)
        if causes:
            lines.append(f"  {'failures by cause':30s} {'count':>20s}")
            lines += [f"    {cause:28s} {n:>20,d}" for cause, n, *_ in causes]
        return "\n".join(lines) + "\n"
    labels = labels_of(traces)
    width = max([16] + [len(label) for label in labels])
    lines = [f"  {i}: {t.path}: {t.attrs.get('scenario_name', '')}, "
             f"digest {t.attrs.get('event_digest', '')}" for i, t in enumerate(traces)]
    lines.append(f"  {'metric':30s} " + " ".join(f"{label:>{width}s}" for label in labels)
                 + "  unit")
    for name in shared_metrics(traces):
        lines.append(f"  {name:30s} "
                     + " ".join(f"{format_value(t.value(name)):>{width}s}" for t in traces)
                     + f"  {traces[0].unit(name)}")
    return "\n".join(lines) + "\n"


# --- driver -------------------------------------------------------------------------------

def _check_file(path):
    if not os.path.exists(path):
        raise ReportError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise ReportError(f"{path}: not a file")


def load(path):
    """Trace(path), with every failure as one-line ReportError."""
    _check_file(path)
    try:
        return Trace(path)
    except TraceFormatError as e:
        raise ReportError(_one_line(e)) from None
    except OSError as e:
        why = e.strerror or str(e)
        raise ReportError(_one_line(f"{path}: {why}")) from None
    except (KeyError, ValueError) as e:
        raise ReportError(_one_line(f"{path}: not a readable dcsim trace ({e})")) from None
    except Exception as e:  # h5py on a damaged file: TypeError, AttributeError, ...
        raise ReportError(_one_line(f"{path}: not a readable dcsim trace "
                                    f"({_what(e)})")) from None


def load_any(path):
    """A Trace, a CompareTable for a `dcsim compare -o` file or a SweepTable
    for a `dcsim sweep -o` file; ReportError (one line) otherwise."""
    _check_file(path)
    try:
        kind = file_kind(path)
    except OSError as e:
        raise ReportError(_one_line(f"{path}: {e.strerror or e}")) from None
    except Exception as e:
        raise ReportError(_one_line(f"{path}: not a readable dcsim file ({_what(e)})")) from None
    if kind in ("trace", "compare") and dcsim_serve.kind_of(path):  # dcsim_serve.py draws it
        return _serve_load(path)
    if kind in ("trace", "compare") and dcsim_hubs.table_name(path):  # /hubs_sweep, hubs /compare
        return _hubs_load(dcsim_hubs.HubsTable, path, "hubs table")
    if kind == "trace" and dcsim_hubs.is_hubs(path):  # dcsim_hubs.py draws and tabulates it
        return _hubs_load(dcsim_hubs.HubsRun, path, "hubs file")
    if kind == "trace":
        return load(path)
    if kind == "cluster":  # dcsim_cluster.py draws and tabulates it
        try:
            return dcsim_cluster.ClusterRun(path)
        except Exception as e:
            raise ReportError(_one_line(e if isinstance(e, TraceFormatError) else
                                        f"{path}: not a readable dcsim cluster file "
                                        f"({_what(e)})")) from None
    reader, what = ((read_sweep, "sweep") if kind == "sweep" else
                    (read_packet, "packet trace") if kind == "packet" else
                    (read_compare, "compare table"))
    try:
        return reader(path)
    except TraceFormatError as e:
        raise ReportError(_one_line(e)) from None
    except Exception as e:
        raise ReportError(_one_line(f"{path}: not a readable dcsim {what} ({_what(e)})")) from None


def _hubs_load(cls, path, what):
    try:
        return cls(path)
    except Exception as e:
        raise ReportError(_one_line(e if isinstance(e, TraceFormatError) else
                                    f"{path}: not a readable dcsim {what} ({_what(e)})")) from None


def _serve_load(path):
    try:
        return dcsim_serve.load(path)
    except Exception as e:
        raise ReportError(_one_line(e if isinstance(e, TraceFormatError) else f"{path}: not a "
                                    f"readable dcsim serving file ({_what(e)})")) from None


def run_packets(traces):
    """The /packet groups of run traces whose step ran on the packet network
    (`dcsim run -o` with <step network="packet"/>), as PacketTraces."""
    out = []
    for t in traces:
        try:
            with h5py.File(t.path, "r") as f:
                if not isinstance(f.get("packet"), h5py.Group):
                    continue
            out.append(read_packet(t.path))
        except TraceFormatError as e:
            raise ReportError(_one_line(e)) from None
        except Exception as e:
            raise ReportError(_one_line(f"{t.path}: not a readable /packet group "
                                        f"({_what(e)})")) from None
    return out


def sweep_text(tables):
    lines = []
    for table in tables:
        lines.append(f"{table.path}: {len(table)} points (dcsim sweep), "
                     f"{len(table.done())} finished")
        params = list(table.parameters)
        lines.append("  " + " ".join(f"{p:>22s}" for p in params)
                     + " " + " ".join(f"{c + ' mean':>22s}" for c in SWEEP_COLUMNS[:2]))
        for row in table:
            lines.append("  " + " ".join(f"{row[p]:>22s}" for p in params) + " "
                         + " ".join(f"{format_value(float(row[c + '_mean'])):>22s}"
                                    for c in SWEEP_COLUMNS[:2]))
    return "\n".join(lines) + ("\n" if lines else "")


def compare_text(tables):
    lines = []
    for table in tables:
        cols = ("energy_cost_cny", "co2_kg", "facility_energy_j", "pue_frac")
        lines.append(f"{table.path}: {len(table)} variants (dcsim compare)")
        lines.append(f"  {'variant':30s} " + " ".join(f"{c:>18s}" for c in cols))
        for label, row in zip(table.labels, table):
            lines.append(f"  {label:30s} "
                         + " ".join(f"{format_value(float(row[c])):>18s}" for c in cols))
    return "\n".join(lines) + ("\n" if lines else "")


def build(paths, goodput=None):
    """(html text, stdout text) for the traces and compare tables at paths,
    with the goodput curve of a `dcsim goodput --json` file when given."""
    loaded = [load_any(p) for p in paths]
    traces = [x for x in loaded if isinstance(x, Trace)]
    sweeps = [x for x in loaded if isinstance(x, SweepTable)]
    packets = [x for x in loaded if isinstance(x, PacketTrace)] + run_packets(traces)
    clusters = [x for x in loaded if isinstance(x, dcsim_cluster.ClusterRun)]
    serves = [x for x in loaded if isinstance(x, dcsim_serve.TYPES)]
    hubs = [x for x in loaded if isinstance(x, (dcsim_hubs.HubsRun, dcsim_hubs.HubsTable))]
    tables = [x for x in loaded if not isinstance(
        x, (Trace, SweepTable, PacketTrace, dcsim_cluster.ClusterRun, dcsim_hubs.HubsRun,
            dcsim_hubs.HubsTable, *dcsim_serve.TYPES))]
    with tempfile.TemporaryDirectory(prefix="dcsim_report_") as work:
        figures = []
        for i, t in enumerate(traces):
            try:
                figures.append(render_figures(t, work, f"t{i}_"))
            except Exception as e:  # values a damaged file holds
                raise ReportError(_one_line(f"{t.path}: cannot draw its figures "
                                            f"({_what(e)})")) from None
        compare_svgs = []
        for i, table in enumerate(tables):
            try:
                compare_svgs.append(_svg_of(dcsim_figures.site_comparison, work, f"c{i}", table))
            except (KeyError, ValueError, IndexError) as e:
                raise ReportError(_one_line(f"{table.path}: cannot draw it ({e})")) from None
        sweep_svgs = []
        for i, table in enumerate(sweeps):
            varies = any("checkpoint" in p for p in table.parameters) and len(table.done())
            sweep_svgs.append(_svg_of(dcsim_figures.goodput_sweep, work, f"s{i}", table)
                              if varies else None)
        packet_svgs = []
        for i, pt in enumerate(packets):
            try:
                packet_svgs.append(_svg_of(functools.partial(dcsim_figures.packet_series,
                                                             top=PACKET_TOP_FIGURE),
                                           work, f"p{i}", pt))
            except (KeyError, ValueError, IndexError) as e:
                raise ReportError(_one_line(f"{pt.path}: cannot draw it ({e})")) from None
        extra = (packet_sections(packets, packet_svgs) + sweep_sections(sweeps, sweep_svgs)
                 + compare_sections(tables, compare_svgs))
        cluster_html, cluster_text = dcsim_cluster.report_sections(
            clusters, work, _clean_svg, _esc, _value_cell, figures_html)
        serve_html, serve_text = dcsim_serve.report_sections(
            serves, work, _clean_svg, _esc, _value_cell, figures_html)
        hubs_html, hubs_text = dcsim_hubs.report_sections(
            hubs, work, _clean_svg, _esc, _value_cell, figures_html)
        extra = hubs_html + cluster_html + serve_html + extra
        brief, brief_text = conclusions(traces, sweeps, tables, work)
        if goodput is not None:
            try:
                svg = _svg_of(dcsim_figures.goodput_curve, work, "goodput", goodput)
            except (OSError, KeyError, ValueError, TypeError) as e:
                raise ReportError(_one_line(f"{goodput}: not a `dcsim goodput --json` "
                                            f"output ({e})")) from None
            extra = ("<h2>Goodput against checkpoint interval</h2>"
                     + figures_html([("goodput", svg)], os.path.basename(goodput)) + extra)
    if len(traces) == 1:
        page = single_report(traces[0], figures[0], extra, brief)
    elif traces:
        page = comparison_report(traces, figures, extra, brief)
    else:
        names = ", ".join(os.path.basename(t.path)
                          for t in hubs + clusters + serves + packets + sweeps + tables)
        title = ("dcsim hubs: " + ", ".join(h.policy if isinstance(h, dcsim_hubs.HubsRun)
                                            else f"{len(h)} variants" for h in hubs)
                 if hubs and not (clusters or packets or sweeps or tables) else
                 "dcsim cluster: " + ", ".join(c.attrs.get("scenario_name", "") for c in clusters)
                 if clusters and not (packets or sweeps or tables) else"dcsim sweep: " + dcsim_brief.sweep_title(sweeps[0]) if sweeps and not tables
                 and not packets and len(sweeps) == 1 else
                 f"dcsim compare: {len(tables[0])} variants" if tables and not sweeps
                 and not packets and len(tables) == 1 else "dcsim comparison")
        page = _page(f"{title} ({names})", f"<h1>{_esc(title)}</h1>\n"
                     f'<p class="note">{_esc(names)}</p>\n' + brief + extra)
    return page, (brief_text + (summary_text(traces) if traces else "") + cluster_text + serve_text
                  + hubs_text
                  + packet_text(packets)
                  + sweep_text(sweeps) + compare_text(tables))


def conclusions(traces, sweeps, tables, work):
    """(HTML, text) of the conclusions: one group for several run traces, one
    per compare table and one per sweep, each with its ranking, its why tables
    and its time to train / MFU / ETTR figure (dcsim_brief)."""
    groups = []
    if len(traces) > 1:
        groups.append((dcsim_brief.from_traces(traces, labels_of(traces)),
                       f"{len(traces)} run traces"))
    for table in tables:
        groups.append((dcsim_brief.from_compare(table),
                       f"{len(table)} variants compared ({os.path.basename(table.path)})"))
    for table in sweeps:
        groups.append((dcsim_brief.from_sweep(table),
                       f"{dcsim_brief.sweep_title(table)} ({os.path.basename(table.path)})"))
    html_parts, text = [], ""
    for i, (variants, what) in enumerate(groups):
        section = dcsim_brief.conclusions_html(_esc, variants, what, i)
        if not section:
            continue
        svg = dcsim_brief.figure_svg(variants, work, f"v{i}", _clean_svg)
        if svg is not None:
            section = section.replace("</section>", figures_html([("variant_metrics", svg)], what)
                                      + "</section>")
        html_parts.append(section)
        text += dcsim_brief.conclusions_text(variants, what)
    return "\n".join(html_parts), text


def check_target(path, inputs):
    """Refuse an output that exists and is not a regular file (os.replace would
    put a file in place of /dev/null) or is one of the inputs (same st_dev and
    st_ino, whatever the name), as the dcsim writers do (sim/app/outpath.c)."""
    try:
        st = os.stat(path)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise ReportError(f"{path}: cannot write the report: it is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise ReportError(f"{path}: cannot write the report: it exists and is not a regular "
                          "file (a device, pipe or socket); dcsim replaces only regular files")
    for name in inputs:
        try:
            s = os.stat(name)
        except OSError:
            continue
        if (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino):
            raise ReportError(f"{path}: cannot write the report: it is {name}, an input of "
                              "this report; choose another name")


def remove_stale(path):
    """Remove path.tmp.<pid> files whose process is gone (a killed report)."""
    folder, base = os.path.split(path)
    prefix = f"{base}.tmp."
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return
    for name in names:
        pid = name[len(prefix):]
        if not name.startswith(prefix) or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass
        except OSError:
            pass


def write_atomic(path, text, inputs=()):
    """Write text to path through path.tmp.<pid> and os.replace."""
    check_target(path, inputs)
    remove_stale(path)
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise ReportError(_one_line(f"{path}: cannot write: {e.strerror or e}")) from None
        raise


def main(argv=None):
    p = argparse.ArgumentParser(
        prog=os.environ.get("DCSIM_REPORT_PROG", "dcsim_report.py"),
        description="Write one self-contained HTML report of one trace, or a comparison of "
                    "several, and print the summary.")
    p.add_argument("traces", nargs="+", metavar="TRACE.h5",
                   help="dcsim run traces (-o), dcsim sweep files, dcsim compare tables")
    p.add_argument("-o", "--output", default="report.html", metavar="REPORT.html",
                   help="the HTML file to write (default: report.html here)")
    p.add_argument("--goodput", metavar="JSON",
                   help="add the goodput curve of a `dcsim goodput --json` output or a "
                        "`dcsim sweep` file")
    args = p.parse_args(argv)
    prog = os.environ.get("DCSIM_REPORT_PROG", "dcsim_report.py")
    try:
        inputs = list(args.traces) + ([args.goodput] if args.goodput else [])
        check_target(args.output, inputs)  # before the work
        page, text = build(args.traces, args.goodput)
        write_atomic(args.output, page, inputs)
    except ReportError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{prog}: error: {_one_line(f'{e.filename or args.output}: {e.strerror or e}')}",
              file=sys.stderr)
        return 1
    except Exception as e:
        # whatever else a damaged file sets off, one line (the traceback with
        # DCSIM_REPORT_TRACEBACK=1)
        if os.environ.get("DCSIM_REPORT_TRACEBACK"):
            raise
        names = ", ".join(args.traces)
        print(f"{prog}: error: {_one_line(f'{names}: cannot report ({_what(e)})')}",
              file=sys.stderr)
        return 1
    sys.stdout.write(text)
    print(f"  report written to {args.output}")
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    sys.exit(main())
