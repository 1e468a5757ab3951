"""dcsim_trace - read a dcsim HDF5 trace (layout: docs/trace-format.md).

Every table comes back as a numpy structured array (a `Table`) carrying its
columns' units; the reader refuses, with one line, a trace whose root
attribute `format_version` it does not know. Use Debian's interpreter, which
has h5py and numpy:

    /usr/bin/python3 analysis/dcsim_trace.py run.h5        # print the summary

    import sys; sys.path.insert(0, "analysis")
    from dcsim_trace import Trace
    with Trace("run.h5") as t:
        print(t.summary["time_to_train_s"])          # (value, unit)
        failures = t.events[t.events["kind"] == t.event_kinds["failure"]]
        print(t.events.units["lost_work_s"])         # 's'
        if t.has_step:
            print(t.step_stages["bubble_s"], t.step_stages.units["bubble_s"])
        if t.energy_hourly is not None:                # a run with a <site>
            print(t.energy_hourly["pue"], t.energy_hourly.units["it_power_w"])   # 'W'
"""
import sys

import h5py
import numpy as np

# format_version values this reader understands (root attribute, int32)
FORMAT_VERSIONS = (1, 2)   # 2: every table compound (1: some were 2-D float64 + `columns`)
# top-level objects of format version 1; the first three are always there
REQUIRED_OBJECTS = ("scenario", "summary", "campaign")
OPTIONAL_OBJECTS = ("step", "replicas", "replica_digests", "energy")


class TraceFormatError(ValueError):
    """The file is not a trace this reader can read; str() is one line."""


class Table(np.ndarray):
    """A numpy structured array with `units` ({column: unit}, docs/trace-format.md
    spellings: 's', 'B', '1', '-') and `description`. Row selections keep both;
    a single column (`table["time_s"]`) is a plain ndarray."""

    def __new__(cls, data, units, description=""):
        obj = np.asarray(data).view(cls)
        names = obj.dtype.names or ()
        missing = [n for n in names if n not in units]
        if missing:
            raise ValueError(f"no unit for column(s) {', '.join(missing)}")
        obj.units = {n: units[n] for n in names}
        obj.description = description
        obj.enums = {}
        return obj

    def __array_finalize__(self, obj):
        self.units = getattr(obj, "units", {})
        self.description = getattr(obj, "description", "")
        self.enums = getattr(obj, "enums", {})  # {column: {name: value}} of HDF5 enum columns

    def to_pandas(self):
        """This table as a pandas DataFrame: see to_pandas()."""
        return to_pandas(self)

    def __getitem__(self, key):
        item = super().__getitem__(key)
        if isinstance(key, str) and isinstance(item, np.ndarray):
            return item.view(np.ndarray)
        return item


def _enum_map(dataset, field):
    """{name: value} of an HDF5 enum column."""
    mapping = h5py.check_enum_dtype(dataset.dtype[field])
    return dict(mapping) if mapping else {}


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _texts(values):
    return [_text(v) for v in np.atleast_1d(values)]


def _attr(value):
    if isinstance(value, (bytes, str)):
        return _text(value)
    if isinstance(value, np.ndarray):
        return _texts(value) if value.dtype.kind in "OSU" else value.copy()
    return value.item() if hasattr(value, "item") else value


def _column_units(columns, units):
    """Per-column units of a 2-D float matrix. The writer stores either one unit
    per column or one string such as 's (fractions: 1)' or
    's (ettr_frac, counts: 1)': columns named *_s take the unit before the
    parenthesis, all others the one after the colon."""
    units = _texts(units)
    if len(units) == len(columns):
        return dict(zip(columns, units))
    text = units[0]
    if "(" not in text:
        return {c: text.strip() for c in columns}
    base, rest = text.split("(", 1)
    other = rest.rsplit(":", 1)[-1].rstrip(")").strip() if ":" in rest else "1"
    return {c: (base.strip() if c.endswith("_s") else other) for c in columns}


def _matrix_table(ds):
    """A 2-D dataset with a `columns` attribute as a structured Table; units from
    `column_units` (one per column) when present, else from `units`."""
    columns = _texts(ds.attrs["columns"])
    raw = ds[()]
    if raw.ndim != 2 or raw.shape[1] != len(columns):
        raise TraceFormatError(f"/{ds.name.lstrip('/')}: shape {raw.shape} does not match "
                               f"its {len(columns)} columns")
    out = np.zeros(raw.shape[0], dtype=[(c, raw.dtype) for c in columns])
    for i, c in enumerate(columns):
        out[c] = raw[:, i]
    units = ds.attrs["column_units"] if "column_units" in ds.attrs else ds.attrs["units"]
    return Table(out, _column_units(columns, units), _text(ds.attrs.get("description", "")))


def _compound_table(ds):
    names = ds.dtype.names
    table = Table(ds[()], dict(zip(names, _texts(ds.attrs["units"]))),
                  _text(ds.attrs.get("description", "")))
    table.enums = {n: m for n in names if (m := _enum_map(ds, n))}
    return table


def _dataset_table(ds):
    """A table dataset as a Table: compound with a `units` attribute (every
    table since format_version 2), or 2-D float64 with a `columns` attribute
    (/replicas, /step/stages, /step/tasks, /step/flows, /energy/hourly and the
    compare tables of format_version 1 files)."""
    if ds.dtype.names and "units" in ds.attrs:
        return _compound_table(ds)
    return _matrix_table(ds)


def table_columns(ds):
    """The column names of a table dataset of either layout (compound fields,
    or the `columns` attribute of a 2-D one)."""
    return list(ds.dtype.names) if ds.dtype.names else _texts(ds.attrs.get("columns", []))


def variant_table(ds):
    """(Table, labels) of a `dcsim compare -o` / sweep table (/compare,
    /cluster_sweep, /serve_sweep): its numeric columns, and the variants'
    names from the leading `variant` field (layout 2) or the `rows` attribute
    (layout 1)."""
    if not ds.dtype.names:
        return _matrix_table(ds), _texts(ds.attrs.get("rows", []))
    whole = _compound_table(ds)
    numbers = [n for n in whole.dtype.names if n != "variant"]
    rows = np.zeros(len(whole), dtype=[(n, whole.dtype[n]) for n in numbers])
    for n in numbers:
        rows[n] = whole[n]
    labels = [_text(v) for v in whole["variant"]] if "variant" in whole.dtype.names else []
    return Table(rows, whole.units, whole.description), labels


def read_table(path, dataset):
    """Any table dcsim writes, by its path in the file ("/campaign/events",
    "/cluster/jobs", "/serve/requests", "/energy/hourly", "/compare", ...), as
    a Table: a compound dataset with a `units` attribute, or a 2-D float64
    dataset with a `columns` attribute. TraceFormatError (one line) for a
    path that is not there or not a table."""
    with h5py.File(path, "r") as f:
        ds = f.get(dataset)
        if not isinstance(ds, h5py.Dataset):
            raise TraceFormatError(f"{path}: no dataset {dataset}")
        if (ds.dtype.names and "units" in ds.attrs) or (ds.ndim == 2 and "columns" in ds.attrs):
            return _dataset_table(ds)
        raise TraceFormatError(f"{path}: {dataset} is not a table (neither a compound dataset "
                               "with units nor a 2-D dataset with columns)")


def to_pandas(table, dataset=None):
    """A table as a pandas DataFrame (pandas: Debian's python3-pandas):
    `to_pandas(trace.events)`, or straight from a file,
    `to_pandas("run.h5", "/campaign/events")`. HDF5 enum columns become
    pandas categoricals named as in the file (categories in value order);
    text columns become str; the units go to `df.attrs["units"]`
    ({column: unit}) and the description to `df.attrs["description"]`."""
    import pandas as pd
    if dataset is not None:
        table = read_table(table, dataset)
    elif not isinstance(table, Table):
        raise TypeError("to_pandas: give a Table, or a file path and a dataset path")
    data = {}
    for name in table.dtype.names:
        column = np.asarray(table[name])
        enum = table.enums.get(name)
        if enum:
            names = [k for k, _ in sorted(enum.items(), key=lambda kv: kv[1])]
            codes = {v: i for i, (_, v) in enumerate(sorted(enum.items(), key=lambda kv: kv[1]))}
            data[name] = pd.Categorical.from_codes([codes.get(int(v), -1) for v in column],
                                                   categories=names)
        elif column.dtype.kind in "OS":
            data[name] = [_text(v) for v in column]
        else:
            data[name] = column
    df = pd.DataFrame(data)
    df.attrs["units"] = dict(table.units)
    df.attrs["description"] = table.description
    return df


def check_layout(f, path):
    """Raise TraceFormatError unless the open h5py file `f` is a trace of a
    known format version with the required top-level objects; return the
    names of top-level objects this reader does not know (read nothing of them)."""
    if "format_version" not in f.attrs:
        raise TraceFormatError(f"{path}: not a dcsim trace: no root attribute format_version "
                               "(docs/trace-format.md)")
    version = f.attrs["format_version"]
    try:
        version = int(version)
    except (TypeError, ValueError):
        raise TraceFormatError(f"{path}: format_version {version!r} is not an integer") from None
    if version not in FORMAT_VERSIONS:
        known = ", ".join(str(v) for v in FORMAT_VERSIONS)
        raise TraceFormatError(f"{path}: trace format version {version} is not supported "
                               f"(this reader knows {known}); read it with the dcsim that wrote it")
    missing = [n for n in REQUIRED_OBJECTS if n not in f]
    if missing:
        raise TraceFormatError(f"{path}: format version {version} trace lacks "
                               f"{', '.join('/' + n for n in missing)}")
    known = set(REQUIRED_OBJECTS) | set(OPTIONAL_OBJECTS)
    return sorted(n for n in f if n not in known)


class Trace:
    """One trace file, read eagerly (campaign tables are small: a few rows per
    checkpoint and per failure; /step/link_bytes is one float per link).

    Tables (all `Table`, i.e. structured arrays with `.units`):
      events, timeline    /campaign/events, /campaign/timeline
      summary_table       name, value, unit of every /summary metric
      step_stages         /step/stages, one row per pipeline stage (None without /step)
      step_tiers          tier, bytes (B), peak_utilisation (1) (None without /step)
      link_bytes          link, bytes (B) per directed link (None without /step)
      link_utilisation    link, tier (index into step_attrs["tiers"]), utilisation (1) per
                          directed link (None without /step or in older traces)
      step_tasks          stage, chunk, microbatch, backward (1), start_s, end_s (s): the
                          pipeline schedule (None without /step or in older traces)
      replicas            /replicas, one row per replica (None without it)
      energy_hourly       /energy/hourly, one row per hour of the run (None without
                          a <site>): hour_start_s, it_power_w, outdoor_temp_c, pue,
                          facility_power_w
    `tables` maps those present to their Table. Raises TraceFormatError (one
    line) for an unknown format version or a missing required group, and
    whatever h5py raises for a file that is not HDF5."""

    def __init__(self, path):
        self.path = path
        try:
            f = h5py.File(path, "r")
        except OSError as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise TraceFormatError(f"{path}: not an HDF5 file ({e})") from None
        with f:
            self.unknown_objects = check_layout(f, path)
            self.attrs = {k: _attr(v) for k, v in f.attrs.items()}
            self.format_version = int(self.attrs["format_version"])
            self.scenario_xml = _text(f["scenario"][()])
            self.summary = {}
            self.summary_descriptions = {}
            for name, ds in f["summary"].items():
                self.summary[name] = (ds[()].item(), _text(ds.attrs["units"]))
                self.summary_descriptions[name] = _text(ds.attrs["description"])
            ev = f["campaign/events"]
            tl = f["campaign/timeline"]
            self.events = _compound_table(ev)
            self.timeline = _compound_table(tl)
            self.event_kinds = _enum_map(ev, "kind")
            self.states = _enum_map(tl, "state")
            self.event_units = dict(self.events.units)
            self.timeline_units = dict(self.timeline.units)
            self.event_causes = _texts(ev.attrs["causes"]) if "causes" in ev.attrs else []
            self._read_step(f)
            self._read_replicas(f)
            self.energy_hourly = (_dataset_table(f["energy/hourly"])
                                  if "energy/hourly" in f else None)
        self.summary_table = self._summary_table()
        self.tables = {name: getattr(self, name)
                       for name in ("events", "timeline", "summary_table", "step_stages",
                                    "step_tiers", "step_tasks", "link_bytes",
                                    "link_utilisation", "replicas",
                                    "energy_hourly")
                       if getattr(self, name) is not None}

    def _read_step(self, f):
        self.step_attrs = self.step_stages = self.step_tiers = self.link_bytes = None
        self.step_tasks = self.link_utilisation = None
        if "step" not in f:
            return
        g = f["step"]
        self.step_attrs = {k: _attr(v) for k, v in g.attrs.items()}
        self.step_stages = _dataset_table(g["stages"])
        if "tasks" in g:                     # traces of dcsim 0.1.0 after 2026-11-30
            self.step_tasks = _dataset_table(g["tasks"])
        tiers = self.step_attrs.get("tiers") or [f"tier {i}" for i in range(len(g["tier_bytes"]))]
        width = max(len(t) for t in tiers)
        rows = np.zeros(len(tiers), dtype=[("tier", f"U{width}"), ("bytes", "f8"),
                                           ("peak_utilisation", "f8")])
        rows["tier"] = tiers
        rows["bytes"] = g["tier_bytes"][()]
        rows["peak_utilisation"] = g["tier_peak_utilisation"][()]
        self.step_tiers = Table(rows, {"tier": "-",
                                       "bytes": _text(g["tier_bytes"].attrs["units"]),
                                       "peak_utilisation":
                                           _text(g["tier_peak_utilisation"].attrs["units"])},
                                "per fabric tier: bytes per iteration and the busiest link's "
                                "utilisation")
        self.link_utilisation = None
        if "link_utilisation" in g and "link_tier" in g:   # traces after 2026-11-30
            lu = g["link_utilisation"][()]
            rows = np.zeros(len(lu), dtype=[("link", "i8"), ("tier", "i8"),
                                            ("utilisation", "f8")])
            rows["link"] = np.arange(len(lu))
            rows["tier"] = g["link_tier"][()]
            rows["utilisation"] = lu
            self.link_utilisation = Table(rows, {"link": "-", "tier": "-",
                                                 "utilisation":
                                                     _text(g["link_utilisation"].attrs["units"])},
                                          "per directed link: its tier (an index into "
                                          "/step's tiers) and mean utilisation")
        lb = g["link_bytes"][()]
        links = np.zeros(len(lb), dtype=[("link", "i8"), ("bytes", "f8")])
        links["link"] = np.arange(len(lb))
        links["bytes"] = lb
        self.link_bytes = Table(links, {"link": "-",
                                        "bytes": _text(g["link_bytes"].attrs["units"])},
                                _text(g["link_bytes"].attrs.get("description", "")))

    def _read_replicas(self, f):
        self.replicas = self.replica_digests = None
        if "replicas" in f:
            self.replicas = _dataset_table(f["replicas"])
        if "replica_digests" in f:
            self.replica_digests = f["replica_digests"][()]

    def _summary_table(self):
        names = list(self.summary)
        width = max([len(n) for n in names] + [1])
        uwidth = max([len(u) for _, u in self.summary.values()] + [1])
        rows = np.zeros(len(names), dtype=[("name", f"U{width}"), ("value", "f8"),
                                           ("unit", f"U{uwidth}")])
        for i, n in enumerate(names):
            rows[i] = (n, float(self.summary[n][0]), self.summary[n][1])
        return Table(rows, {"name": "-", "value": "(column unit)", "unit": "-"},
                     "every /summary metric; each value's unit is in its row")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    @property
    def has_step(self):
        return self.step_stages is not None

    def value(self, name):
        """A summary value without its unit."""
        return self.summary[name][0]

    def unit(self, name):
        """A summary value's unit."""
        return self.summary[name][1]

    def events_of(self, kind):
        """The event rows of one kind ('failure', 'checkpoint_done', ...)."""
        return self.events[self.events["kind"] == self.event_kinds[kind]]

    def time_in_state(self):
        """{state name: seconds} summed over the timeline."""
        spent = {}
        for name, code in self.states.items():
            rows = self.timeline[self.timeline["state"] == code]
            spent[name] = float(np.sum(rows["end_s"] - rows["start_s"]))
        return spent


COMPARE_LAYOUT_VERSIONS = ("1", "2")   # 2: compound, a leading `variant` text field


def file_kind(path):
    """What dcsim wrote at path, from one look inside: "compare" (dcsim compare
    -o: a /compare dataset), "sweep" (dcsim sweep -o: a /sweep group) or
    "trace" (anything else, for Trace to accept or refuse); "packet" for a
    `dcsim netbench --tier packet -o` file (a /packet group, no /summary);
    "cluster" for a `dcsim cluster -o` file (a /cluster group, no /summary).
    OSError for a file that is not HDF5."""
    with h5py.File(path, "r") as f:
        if isinstance(f.get("compare"), h5py.Dataset):
            return "compare"
        if isinstance(f.get("sweep"), h5py.Group):
            return "sweep"
        if isinstance(f.get("packet"), h5py.Group) and "summary" not in f:
            return "packet"
        if isinstance(f.get("cluster"), h5py.Group) and "summary" not in f:
            return "cluster"
    return "trace"


PACKET_LAYOUT_VERSIONS = ("1", "2")  # 2: only the links that carried traffic
PACKET_SERIES = ("sent_bytes", "packets", "pauses", "ecn_marks", "queue_end_bytes",
                 "queue_max_bytes", "held_end_bytes", "held_max_bytes")


class PacketTrace:
    """`dcsim netbench --tier packet -o FILE.h5`, `dcsim step --network packet -o
    FILE.h5`, or the /packet group of a `dcsim run -o` trace whose step ran on
    the packet network (docs/trace-format.md "/packet"):
      attrs      the root attributes (command, event_digest, seed, ...)
      packet     /packet's attributes (op, flow_control, mtu_bytes, dt_s, bins, ...)
      links      /packet/links as a Table, one row per directed link stored
                 (layout 2: those that carried traffic; column j of the
                 series is row j, its id in links["link"])
      t_edges_s  bin edges (bins + 1)
      series     {name: [bins x links] ndarray} for PACKET_SERIES; series_units
    Raises TraceFormatError (one line) for an unknown format or layout."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            self.attrs = {k: _attr(v) for k, v in f.attrs.items()}
            version = self.attrs.get("format_version")
            if version is None or int(version) not in FORMAT_VERSIONS:
                raise TraceFormatError(f"{path}: packet trace format version {version!r} is "
                                       "not supported")
            g = f["packet"]
            self.packet = {k: _attr(v) for k, v in g.attrs.items()}
            layout = self.packet.get("layout_version")
            if layout not in PACKET_LAYOUT_VERSIONS:
                raise TraceFormatError(f"{path}: /packet layout_version {layout!r} is not "
                                       "supported")
            self.links = _compound_table(g["links"])
            s = g["series"]
            self.t_edges_s = s["t_edges_s"][()]
            self.series = {n: s[n][()] for n in PACKET_SERIES}
            self.series_units = {n: _text(s[n].attrs["units"]) for n in PACKET_SERIES}
        shape = (len(self.t_edges_s) - 1, len(self.links))
        bad = [n for n, v in self.series.items() if v.shape != shape]
        if bad:
            raise TraceFormatError(f"{path}: /packet/series/{bad[0]} has shape "
                                   f"{self.series[bad[0]].shape}, expected {shape}")

    def top_links(self, n):
        """Ids of the n links with the most bytes queued at once (ties: lower
        id first), busiest first; links that never queued are left out."""
        peak = np.asarray(self.links["max_queued_bytes"], dtype=float)
        order = np.lexsort((np.arange(len(peak)), -peak))
        return [int(i) for i in order[:n] if peak[i] > 0]


def read_packet(path):
    return PacketTrace(path)


class CompareTable(Table):
    """`dcsim compare -o FILE.h5`: /compare, one row per variant (site, network,
    scenario), its 14 columns with units (docs/trace-format.md); `labels` are
    the variants' names ('site=tianfu'), `path` the file."""

    def __array_finalize__(self, obj):
        super().__array_finalize__(obj)
        self.labels = getattr(obj, "labels", [])
        self.path = getattr(obj, "path", "")


def read_compare(path):
    """The /compare table of a `dcsim compare -o` file as a CompareTable.
    Raises TraceFormatError (one line) for a file without /compare or with an
    unknown layout_version."""
    with h5py.File(path, "r") as f:
        if "compare" not in f or not isinstance(f["compare"], h5py.Dataset):
            raise TraceFormatError(f"{path}: no /compare table (not written by dcsim compare -o)")
        ds = f["compare"]
        version = _text(ds.attrs.get("layout_version", ""))
        if version not in COMPARE_LAYOUT_VERSIONS:
            raise TraceFormatError(
                f"{path}: /compare layout_version {version or '(none)'} is not one this "
                f"reader knows ({', '.join(COMPARE_LAYOUT_VERSIONS)}); use the analysis/ "
                "scripts of the dcsim that wrote it")
        table, labels = variant_table(ds)
        table = table.view(CompareTable)
        table.labels = labels
    table.path = path
    if len(table.labels) != len(table):
        raise TraceFormatError(f"{path}: /compare has {len(table)} rows but "
                               f"{len(table.labels)} labels")
    return table


SWEEP_FORMAT_VERSIONS = (1,)


class SweepTable(Table):
    """`dcsim sweep -o FILE.h5`: /sweep/points, one row per point (its values
    as text, status, replicas, the point's constants, and the mean and 95 %
    half-width of every replica metric), with units (docs/trace-format.md);
    `parameters` are the grid's paths, `attrs` the group's attributes,
    `path` the file."""

    def __array_finalize__(self, obj):
        super().__array_finalize__(obj)
        self.parameters = getattr(obj, "parameters", [])
        self.attrs = getattr(obj, "attrs", {})
        self.path = getattr(obj, "path", "")
        self.status_done = getattr(obj, "status_done", 1)

    def done(self):
        """The finished points (status 'done')."""
        return self[self["status"] == self.status_done]


def read_sweep(path):
    """/sweep/points of a `dcsim sweep -o` file as a SweepTable (parameter
    columns decoded to str). Raises TraceFormatError (one line) for a file
    without /sweep or of an unknown format version."""
    with h5py.File(path, "r") as f:
        if "sweep" not in f or "points" not in f["sweep"]:
            raise TraceFormatError(f"{path}: no /sweep/points (not written by dcsim sweep -o)")
        g = f["sweep"]
        version = _attr(g.attrs.get("format_version", -1))
        if version not in SWEEP_FORMAT_VERSIONS:
            raise TraceFormatError(
                f"{path}: sweep format version {version} is not supported (this reader knows "
                f"{', '.join(map(str, SWEEP_FORMAT_VERSIONS))}); use the analysis/ scripts of "
                "the dcsim that wrote it")
        ds = g["points"]
        raw = ds[()]
        units = _texts(ds.attrs["units"])
        names = list(raw.dtype.names)
        status_map = _enum_map(ds, "status")
        dtype = [(n, f"U{max(1, max((len(_text(v)) for v in raw[n]), default=1))}")
                 if raw.dtype[n].kind in "OS" else (n, raw.dtype[n]) for n in names]
        out = np.zeros(len(raw), dtype=dtype)
        for n in names:
            out[n] = [_text(v) for v in raw[n]] if raw.dtype[n].kind in "OS" else raw[n]
        table = Table(out, dict(zip(names, units)), _text(ds.attrs.get("description", "")))
        table = table.view(SweepTable)
        table.parameters = _texts(g.attrs["parameters"]) if "parameters" in g.attrs else []
        table.attrs = {k: _attr(v) for k, v in g.attrs.items()}
    table.path = path
    table.status_done = status_map.get("done", 1)
    return table


def main(argv):
    if len(argv) != 2:
        print("usage: dcsim_trace.py TRACE.h5", file=sys.stderr)
        return 2
    try:
        t = Trace(argv[1])
    except (TraceFormatError, OSError) as e:
        print(f"dcsim_trace.py: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # h5py on a damaged file: TypeError, AttributeError, ...
        print(f"dcsim_trace.py: error: {argv[1]}: not a readable dcsim trace "
              f"({type(e).__name__}: {' '.join(str(e).split())})", file=sys.stderr)
        return 1
    print(f"{t.path}: dcsim {t.attrs['dcsim_version']}, seed {t.attrs['seed']}, "
          f"digest {t.attrs['event_digest']}")
    for name, (value, unit) in t.summary.items():
        print(f"  {name:32s} {value:>16.6g} {unit}")
    print(f"  {len(t.events)} events, {len(t.timeline)} timeline segments")
    for name, table in t.tables.items():
        if name in ("events", "timeline", "summary_table"):
            continue
        print(f"  {name}: {len(table)} rows, columns "
              + ", ".join(f"{c} [{u}]" for c, u in table.units.items()))
    if t.unknown_objects:
        print("  not read: " + ", ".join("/" + n for n in t.unknown_objects))
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    sys.exit(main(sys.argv))
