"""dcsim_trace - read a dcsim HDF5 trace (layout: docs/trace-format.md).

Use Debian's interpreter, which has h5py and numpy:

    /usr/bin/python3 analysis/dcsim_trace.py run.h5        # print the summary

    import sys; sys.path.insert(0, "analysis")
    from dcsim_trace import Trace
    with Trace("run.h5") as t:
        print(t.summary["time_to_train_s"])          # (value, unit)
        failures = t.events[t.events["kind"] == t.event_kinds["failure"]]
"""
import sys

import h5py
import numpy as np


def _enum_map(dataset, field):
    """{name: value} of an HDF5 enum column."""
    mapping = h5py.check_enum_dtype(dataset.dtype[field])
    return dict(mapping) if mapping else {}


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class Trace:
    """One trace file, read eagerly (campaign tables are small: a few rows per
    checkpoint and per failure)."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            self.attrs = {k: (_text(v) if isinstance(v, (bytes, str)) else v.item())
                          for k, v in f.attrs.items()}
            self.scenario_xml = _text(f["scenario"][()])
            self.summary = {}
            self.summary_descriptions = {}
            for name, ds in f["summary"].items():
                self.summary[name] = (ds[()].item(), _text(ds.attrs["units"]))
                self.summary_descriptions[name] = _text(ds.attrs["description"])
            ev = f["campaign/events"]
            tl = f["campaign/timeline"]
            self.events = ev[()]
            self.timeline = tl[()]
            self.event_kinds = _enum_map(ev, "kind")
            self.states = _enum_map(tl, "state")
            self.event_units = dict(zip(ev.dtype.names, (_text(u) for u in ev.attrs["units"])))
            self.timeline_units = dict(zip(tl.dtype.names, (_text(u) for u in tl.attrs["units"])))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def value(self, name):
        """A summary value without its unit."""
        return self.summary[name][0]

    def time_in_state(self):
        """{state name: seconds} summed over the timeline."""
        spent = {}
        for name, code in self.states.items():
            rows = self.timeline[self.timeline["state"] == code]
            spent[name] = float(np.sum(rows["end_s"] - rows["start_s"]))
        return spent


def main(argv):
    if len(argv) != 2:
        print("usage: dcsim_trace.py TRACE.h5", file=sys.stderr)
        return 2
    t = Trace(argv[1])
    print(f"{t.path}: dcsim {t.attrs['dcsim_version']}, seed {t.attrs['seed']}, "
          f"digest {t.attrs['event_digest']}")
    for name, (value, unit) in t.summary.items():
        print(f"  {name:32s} {value:>16.6g} {unit}")
    print(f"  {len(t.events)} events, {len(t.timeline)} timeline segments")
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    sys.exit(main(sys.argv))
