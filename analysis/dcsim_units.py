"""dcsim_units - numbers in units people read: durations in days, h, min, s;
energy in kWh, MWh, GWh; money in CNY, k CNY, M CNY (the currency the data
carries); CO2 in kg, t, kt; rates in GB/s; fractions in %; and a 95 %
confidence interval as "82.73 ± 0.46 days".

Rules (tests/python/test_units.py holds them to exact strings):
  - a value takes the largest unit of its ladder that it reaches (90 s is
    "1.50 min", 1e12 J "278 MWh"), the smallest for values below it;
  - 3 significant digits; integers above 1,000 in the unit keep all digits,
    with thousands separators ("1,235 days"); a scaled value of 1e6 or more
    (or a non-zero one below 1e-3) is written in scientific notation
    in the base unit ("1.00e+300 s", "1.00e-300 s");
  - zero is "0" in the base unit; negative values take the sign and the
    ladder of their magnitude;
  - NaN and infinities print as "n/a" (a number is never made up);
  - mean ± CI: the CI to 2 significant digits, the mean rounded to the same
    decimal place, both in the unit the mean (or, if larger, the CI) picks.
Nothing here computes physics: each function changes only how a number is
written. Metric names in words come from the labels `dcsim run` prints
(sim/app/summary.c), with the raw key kept for a tooltip."""
import math
import re

NA = "n/a"
DAY_S = 86400.0

# ladders: (factor to the base unit, suffix), ascending
DURATION = ((1e-9, "ns"), (1e-6, "µs"), (1e-3, "ms"), (1.0, "s"), (60.0, "min"),
            (3600.0, "h"), (DAY_S, "days"))
ENERGY = ((1.0, "J"), (3.6e3, "Wh"), (3.6e6, "kWh"), (3.6e9, "MWh"), (3.6e12, "GWh"),
          (3.6e15, "TWh"))
POWER = ((1.0, "W"), (1e3, "kW"), (1e6, "MW"), (1e9, "GW"))
MASS = ((1e-3, "g"), (1.0, "kg"), (1e3, "t"), (1e6, "kt"), (1e9, "Mt"))
BYTES = ((1.0, "B"), (1e3, "kB"), (1e6, "MB"), (1e9, "GB"), (1e12, "TB"), (1e15, "PB"))
RATE = ((1.0, "B/s"), (1e3, "kB/s"), (1e6, "MB/s"), (1e9, "GB/s"), (1e12, "TB/s"))
FLOPS = ((1.0, "FLOP/s"), (1e12, "TFLOP/s"), (1e15, "PFLOP/s"), (1e18, "EFLOP/s"))
FLOP = ((1.0, "FLOP"), (1e18, "EFLOP"), (1e21, "ZFLOP"), (1e24, "YFLOP"))
VOLUME = ((1.0, "L"), (1e3, "m³"))
COUNT_LADDER = ((1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "bn"))


def money_ladder(currency):
    """CNY, k CNY, M CNY, bn CNY (any ISO code the data carries)."""
    return tuple((f, f"{p}{currency}") for f, p in ((1.0, ""), (1e3, "k "), (1e6, "M "),
                                                     (1e9, "bn ")))


# the labels `dcsim run` prints (sim/app/summary.c), for /summary and table keys
LABELS = {
    "time_to_train_s": "time to train", "ettr_frac": "ETTR (productive / elapsed)",
    "ettr_first_order_frac": "ETTR, first-order model", "iteration_time_s": "iteration time",
    "iterations": "iterations", "total_flops": "training compute (6ND)",
    "compute_time_s": "productive compute", "rework_s": "lost to rework",
    "rework_gpu_hours": "lost to rework, GPU-hours", "checkpoint_time_s": "checkpoint writes",
    "checkpoint_aborted_s": "aborted checkpoint writes", "restart_time_s": "restarts",
    "checkpoint_write_s": "checkpoint write time", "checkpoint_size_bytes": "checkpoint size",
    "silent_failures": "silent corruptions", "maintenance_time_s": "planned maintenance",
    "maintenance_windows": "maintenance windows", "persist_slowdown_s": "slowed by async persists",
    "spare_wait_s": "waiting for spares", "repairs": "nodes repaired",
    "spares_lowest": "fewest spares", "straggler_slowdown_s": "slowed by stragglers",
    "straggler_speed_frac": "job speed with a slow node", "stragglers": "nodes turned slow",
    "drains": "nodes drained", "degraded_slowdown_s": "slowed by the degraded fabric",
    "fabric_wait_s": "waiting for network repairs", "parts_down": "network parts down",
    "parts_slow": "network parts slow", "parts_repaired": "network parts repaired",
    "fabric_unrunnable": "restarts on an unusable fabric",
    "fabric_faster": "faster states taken as built",
    "flap_episodes": "flapping episodes", "flaps": "flaps", "flap_down_s": "degraded by flaps",
    "flap_interruptions": "flaps that interrupted",
    "throttle_slowdown_s": "slowed by thermal throttling", "throttle_hot_hours": "hot hours a year",
    "throttle_hot_s": "time in hot hours", "throttle_changes": "throttling changes",
    "throttle_speed_frac": "job speed in a hot hour",
    "elastic_slowdown_s": "slowed by missing replicas", "elastic_restarts": "elastic restarts",
    "failures": "failures", "restarts": "restarts completed", "checkpoints": "checkpoints written",
    "checkpoints_aborted": "checkpoints aborted",
    "checkpoint_interval_s": "checkpoint interval (effective)",
    "checkpoint_every_iterations": "checkpoint every", "cluster_mtbf_s": "cluster MTBF",
    "young_interval_s": "Young's optimal interval", "daly_interval_s": "Daly's optimal interval",
    "gpu_count": "GPUs", "gpu_peak_flops_per_s": "GPU peak", "step_mfu_frac": "MFU (step tier)",
    "step_exposed_comm_s": "exposed communication / iteration",
    "step_bubble_s": "pipeline bubble / iteration", "mfu_frac": "MFU",
    "events_fired": "simulation events", "it_energy_j": "IT energy",
    "facility_energy_j": "facility energy", "pue_frac": "PUE (energy-weighted)",
    "pue_annual_frac": "PUE over the site's year", "pue_min_frac": "PUE, best hour",
    "pue_max_frac": "PUE, worst hour", "it_power_compute_w": "IT power computing",
    "it_power_idle_w": "IT power idle", "network_power_w": "network power",
    "peak_facility_power_w": "peak facility power", "power_swing_w": "power swing per iteration",
    "water_l": "water", "energy_cost_cny": "energy cost",
    "energy_cost_per_mtok_cny": "energy cost per million tokens", "co2_kg": "CO2",
    "co2_per_mtok_kg": "CO2 per million tokens", "capex_cny": "capital cost",
    "capex_amortised_cny": "capital cost of the run", "build_cost_cny": "built: cost of the run",
    "build_cost_per_mtok_cny": "built: per million tokens",
    "rent_cost_cny": "rented: cost of the run", "rent_cost_per_mtok_cny": "rented: per million tokens",
    # dcsim compare's and dcsim sweep's own columns
    "price_cny_per_kwh": "energy price", "emission_kg_per_kwh": "grid emission factor",
}
SUFFIXES = ("_frac", "_s", "_j", "_w", "_cny", "_kg", "_bytes_per_s", "_bytes", "_l",
            "_per_s", "_hours")


def label(key):
    """A metric's name in words: the CLI's label, else the key without its unit
    suffix and underscores ('spare_wait_s' -> 'spare wait')."""
    if key in LABELS:
        return LABELS[key]
    base = key
    for suffix in SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[:-len(suffix)]
            break
    return base.replace("_", " ")


def _finite(value):
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _digits(m, sig):
    """m (finite, any sign) to sig significant digits as text."""
    a = abs(m)
    if a == 0:
        return "0"
    if a >= 1e6 or a < 1e-3:
        return f"{m:.{sig - 1}e}"
    exp = math.floor(math.log10(a))
    decimals = max(0, sig - 1 - exp)
    text = f"{m:,.{decimals}f}"
    # rounding can carry into a new digit (9.996 -> 10.00): one decimal fewer then
    if decimals and abs(float(text.replace(",", ""))) >= 10 ** (exp + 1):
        text = f"{m:,.{decimals - 1}f}"
    return text


def _pick(value, ladder):
    """(factor, suffix) of the largest rung |value| reaches (the smallest below)."""
    a = abs(value)
    chosen = ladder[0]
    for rung in ladder:
        if a >= rung[0] * (1 - 1e-12):
            chosen = rung
    return chosen


def scaled(value, ladder, sig=3, zero=None):
    """value (in the ladder's base unit) in the rung it reaches, sig digits."""
    v = _finite(value)
    if v is None:
        return NA
    if v == 0:
        base = zero or next((s for f, s in ladder if f == 1.0), ladder[0][1])
        return f"0 {base}".rstrip()
    factor, suffix = _pick(v, ladder)
    if not 1e-3 <= abs(v / factor) < 1e6:    # off the ladder: scientific, base unit
        factor, suffix = next((r for r in ladder if r[0] == 1.0), (factor, suffix))
    return f"{_digits(v / factor, sig)} {suffix}".rstrip()


def duration(seconds, sig=3):
    return scaled(seconds, DURATION, sig)


def energy(joules, sig=3):
    return scaled(joules, ENERGY, sig, zero="kWh")


def money(amount, currency="CNY", sig=3):
    return scaled(amount, money_ladder(currency), sig)


def co2(kg, sig=3):
    text = scaled(kg, MASS, sig)
    return text if text == NA else text + " CO2"


def rate(bytes_per_s, sig=3):
    return scaled(bytes_per_s, RATE, sig, zero="GB/s")


def percent(frac, sig=3):
    v = _finite(frac)
    if v is None:
        return NA
    return "0 %" if v == 0 else f"{_digits(100 * v, sig)} %"


def count(value):
    """An integer count with thousands separators; n/a when not finite."""
    v = _finite(value)
    if v is None:
        return NA
    if v != int(v) or abs(v) >= 1e15:
        return _digits(v, 3)
    return f"{int(v):,}"


def _kind(key, unit):
    """(ladder or formatter name) for a metric from its unit and key."""
    key = key or ""
    if unit == "1":
        if "pue" in key:
            return "ratio"
        if key.endswith("_frac"):
            return "percent"
        return "count"
    return {"s": "duration", "J": "energy", "W": "power", "B": "bytes", "B/s": "rate",
            "FLOP/s": "flops", "FLOP": "flop", "L": "volume", "l": "volume",
            "GPU h": "gpu_hours"}.get(unit, "money" if unit in ("CNY", "USD", "EUR")
                                      else "mass" if unit == "kg" else "other")


def human(value, unit, key=None, sig=3):
    """value (in the trace's unit) as people read it, chosen by unit and key:
    human(7.1e6, 's') -> '82.2 days'; human(0.9, '1', 'ettr_frac') -> '90.0 %'."""
    kind = _kind(key, unit)
    if kind == "count":
        return count(value)
    if kind == "percent":
        return percent(value, sig)
    if kind == "ratio":
        v = _finite(value)
        return NA if v is None else _digits(v, sig)
    if kind == "mass":
        return co2(value, sig) if "co2" in (key or "") else scaled(value, MASS, sig)
    if kind == "money":
        return money(value, unit, sig)
    if kind == "gpu_hours":
        return scaled(value, COUNT_LADDER, sig).rstrip() + " GPU-hours" \
            if _finite(value) is not None else NA
    ladders = {"duration": DURATION, "energy": ENERGY, "power": POWER, "bytes": BYTES,
               "rate": RATE, "flops": FLOPS, "flop": FLOP, "volume": VOLUME}
    if kind in ladders:
        return {"energy": energy, "rate": rate}.get(kind, lambda v, s: scaled(v, ladders[kind],
                                                                             s))(value, sig)
    v = _finite(value)
    return NA if v is None else f"{_digits(v, sig)} {unit}".rstrip()


def plus_minus(mean, ci, unit, key=None):
    """'mean ± ci unit' with the CI to 2 significant digits and the mean to the
    same decimal place, in the unit the larger of |mean| and ci picks:
    plus_minus(7148160, 39744, 's') -> '82.73 ± 0.46 days'. A CI that is 0 or
    not finite (one replica) gives the mean alone, as human() writes it."""
    m, c = _finite(mean), _finite(ci)
    if m is None:
        return NA
    if c is None or c == 0:
        return human(m, unit, key)
    c = abs(c)
    kind = _kind(key, unit)
    scale, suffix = 1.0, unit
    if kind == "percent":
        scale, suffix = 0.01, "%"
    elif kind == "ratio" or kind == "count":
        suffix = ""
    else:
        ladder = {"duration": DURATION, "energy": ENERGY, "power": POWER, "bytes": BYTES,
                  "rate": RATE, "mass": MASS, "volume": VOLUME,
                  "money": money_ladder(unit)}.get(kind)
        if ladder:
            scale, suffix = _pick(max(abs(m), c), ladder)
    ms, cs = m / scale, c / scale
    if not (1e-3 <= cs < 1e6 and abs(ms) < 1e9):     # off the ladder: base unit
        if kind not in ("percent", "ratio", "count"):
            scale, suffix = 1.0, unit
        return f"{m / scale:.2e} ± {c / scale:.1e} {suffix}".rstrip()
    decimals = 1 - math.floor(math.log10(cs))
    if round(cs, decimals) >= 10 ** (2 - decimals):   # 9.96 -> 10: one digit fewer
        decimals -= 1
    if decimals > 0:
        text = f"{ms:,.{decimals}f} ± {cs:,.{decimals}f}"
    else:
        q = 10 ** (-decimals)
        text = f"{int(round(ms / q) * q):,} ± {int(round(cs / q) * q):,}"
    if kind == "co2" or (kind == "mass" and "co2" in (key or "")):
        suffix += " CO2"
    return f"{text} {suffix}".rstrip()


# --- labels in words ---------------------------------------------------------------------

def setting_words(path, value):
    """One grid setting in words: reliability/@scale=2 -> '2x failure rate'."""
    leaf = path.rsplit("/", 1)[-1].lstrip("@")
    if path == "site":
        return f"at {value}"
    if path in ("network", "fabric"):
        return f"on {value}"
    if path == "scenario":
        return value
    if path.startswith("reliability") and leaf == "scale":
        return f"{value}x failure rate"
    if path.startswith("checkpoint") and leaf == "interval":
        return f"checkpoint every {value}"
    if leaf == "count" and "gpu" in path:
        return f"{value} GPUs"
    return f"{leaf.replace('-', ' ')} {value}"


def variant_words(label):
    """'site=wuhu,reliability/@scale=2' -> 'at wuhu, 2x failure rate'; a label
    without '=' is kept."""
    parts = [p for p in re.split(r",(?=[^,=]+=)", label) if p]
    if not parts or not all("=" in p for p in parts):
        return label
    return ", ".join(setting_words(*p.split("=", 1)) for p in parts)
