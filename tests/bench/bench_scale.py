"""bench_scale.py DCSIM SOURCE_DIR [--smoke] - the scale smoke: a 100,352-GPU
job on a fat-tree and on a Dragonfly (tests/scale/*.xml), the whole run
(`dcsim run`: the step tier on the analytic network path, then the campaign)
the step profile alone (`dcsim step --analytic`), the step profile on the
flow model (`dcsim step` with network=flow: every collective on the max-min
flow net), whose memory per GPU has a target of 1 kB (docs/scaling.md), and
the concurrent iteration (`dcsim step --concurrent`, target under 60 s). One
machine-readable line per metric: wall time, peak resident memory and memory
per GPU, and the resource guard's estimate beside what `run` and the
concurrent iteration really used
(the estimate must not be below it; with --sanitized, for an ASan build, it
is only reported).
--smoke runs the fat-tree `dcsim run` only. Run with Debian's
/usr/bin/python3."""
import os
import re
import resource
import subprocess
import sys
import time

DCSIM = sys.argv[1]
SOURCE = sys.argv[2]
SMOKE = "--smoke" in sys.argv[3:]
# a sanitizer build roughly doubles the memory (shadow memory, redzones): the
# guard's per-item costs are for optimised builds, so only report the ratio
CHECK_GUARD = "--sanitized" not in sys.argv[3:]
SCENARIOS = (("fat-tree", "tests/scale/fattree-100k.xml"),
             ("dragonfly", "tests/scale/dragonfly-100k.xml"))
GPUS = 100352
FLOW_TARGET_BYTES_PER_GPU = 1000
CONCURRENT_TARGET_S = 60  # issue 18: the 100K-GPU concurrent iteration, one core
UNITS = {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15, "EB": 1e18}


def measured(args):
    """Wall seconds and peak RSS in bytes of one dcsim command (a fresh child:
    RUSAGE_CHILDREN's maximum covers it alone when it is the largest so far,
    so each command runs in its own python child)."""
    code = ("import resource, subprocess, sys, time\n"
            "t = time.perf_counter()\n"
            "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
            "w = time.perf_counter() - t\n"
            "print(r.returncode, w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", code, DCSIM, *args], check=True,
                         capture_output=True, text=True).stdout.split()
    rc, wall, rss_kb = int(out[0]), float(out[1]), int(out[2])
    if rc != 0:
        raise SystemExit(f"bench_scale: dcsim {' '.join(args)} exited {rc}")
    return wall, rss_kb * 1024


def estimate(path, command=("run", "--quiet")):
    """The resource guard's estimate for `dcsim COMMAND path`, read from its
    refusal under a 1-byte limit."""
    r = subprocess.run([DCSIM, command[0], path, *command[1:]], capture_output=True, text=True,
                       env=dict(os.environ, DCSIM_MEMORY_LIMIT="1B"))
    m = re.search(r"needs an estimated ([0-9.e+]+) (\w+) of memory", r.stderr)
    if r.returncode != 2 or not m:
        raise SystemExit(f"bench_scale: no estimate from the resource guard: {r.stderr.strip()}")
    return float(m.group(1)) * UNITS[m.group(2)]


def main():
    failed = 0
    for topology, rel in SCENARIOS[:1] if SMOKE else SCENARIOS:
        path = os.path.join(SOURCE, rel)
        commands = [("run", ["run", path, "--quiet"])]
        if not SMOKE:
            commands.append(("step", ["step", path, "--analytic"]))
            commands.append(("step-flow", ["step", path, "--set", "job/step/@network=flow"]))
            commands.append(("step-concurrent", ["step", path, "--concurrent"]))
        for what, args in commands:
            wall, rss = measured(args)
            print(f"bench_scale topology={topology} gpus={GPUS} command={what} wall_s={wall:.2f} "
                  f"peak_rss_mb={rss / 1e6:.1f} bytes_per_gpu={rss / GPUS:.0f}")
            if what == "step-flow":
                per_gpu = rss / GPUS
                print(f"bench_scale flow_memory topology={topology} gpus={GPUS} "
                      f"bytes_per_gpu={per_gpu:.0f} "
                      f"target_bytes_per_gpu={FLOW_TARGET_BYTES_PER_GPU} "
                      f"meets_target={int(per_gpu <= FLOW_TARGET_BYTES_PER_GPU)}")
                guess = estimate(path)
                if guess < rss and CHECK_GUARD:
                    print(f"bench_scale: FAIL the guard's estimate {guess / 1e6:.1f} MB is below "
                          f"the flow step's peak {rss / 1e6:.1f} MB")
                    failed = 1
            if what == "step-concurrent":
                guess = estimate(path, ("step", "--concurrent"))
                print(f"bench_scale topology={topology} gpus={GPUS} command=step-concurrent "
                      f"guard_estimate_mb={guess / 1e6:.1f} measured_mb={rss / 1e6:.1f} "
                      f"ratio={guess / rss:.2f} wall_s={wall:.2f} "
                      f"target_s={CONCURRENT_TARGET_S} "
                      f"meets_target={int(wall < CONCURRENT_TARGET_S)}")
                if guess < rss and CHECK_GUARD:
                    print(f"bench_scale: FAIL the guard's estimate is below the concurrent "
                          f"iteration's peak")
                    failed = 1
            if what == "run":
                guess = estimate(path)
                print(f"bench_scale topology={topology} gpus={GPUS} guard_estimate_mb="
                      f"{guess / 1e6:.1f} measured_mb={rss / 1e6:.1f} "
                      f"ratio={guess / rss:.2f}")
                if guess < rss and CHECK_GUARD:
                    print(f"bench_scale: FAIL the guard's estimate is below the measured peak")
                    failed = 1
    return failed


if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    start = time.perf_counter()
    rc = main()
    print(f"bench_scale total_wall_s={time.perf_counter() - start:.2f}")
    sys.exit(rc)
