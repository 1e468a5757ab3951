#!/bin/sh
# sweep_resume.sh DCSIM SRC - `dcsim sweep` killed with SIGKILL (and, again,
# interrupted with SIGINT) once the file shows some finished points: the
# file is a complete, readable sweep file right after the kill, its finished
# points equal an uninterrupted run's, and the same command run again does
# only the unfinished points and ends with tables equal to the
# uninterrupted run's; no temporary file is left behind.
set -u
dcsim=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$dcsim" "$tmp" "$2/tests/scenarios/no-fabric.xml" <<'EOF'
import os, signal, subprocess, sys, time
import h5py, numpy as np; same = lambda a, b: a.dtype == b.dtype and a.shape == b.shape and all(np.array_equal(a[n], b[n], equal_nan=a.dtype[n].kind == 'f') for n in a.dtype.names)

dcsim, tmp, scenario = sys.argv[1:4]  # the MFU path: points cost no step tier
N, R = 24, 16
args = ["--grid", "checkpoint/@interval=10min,15min,20min,30min,40min,60min",
        "--grid", "reliability/@scale=0.5,1,1.5,2", "--replicas", str(R),
        "--write-every", "0s"]  # a write after every point: the kill lands early on any machine
one = dict(os.environ, OMP_NUM_THREADS="1")
two = dict(os.environ, OMP_NUM_THREADS="2")


def sweep(out, *extra):
    return [dcsim, "sweep", scenario, "--quiet", *args, "-o", out, *extra]


def tables(path):
    with h5py.File(path, "r") as f:
        g = f["sweep"]
        return g["points"][:], g["replicas"][:], int(g.attrs["points_finished"])


def finished(path):
    try:
        return tables(path)[2]
    except (OSError, KeyError):
        return -1


ref = os.path.join(tmp, "ref.h5")
subprocess.run(sweep(ref), env=two, check=True, stdout=subprocess.DEVNULL)
ref_points, ref_reps, _ = tables(ref)
fail = 0
for sig, want in ((signal.SIGKILL, -signal.SIGKILL), (signal.SIGINT, 130)):
    out = os.path.join(tmp, "cut.h5")
    for attempt in range(3):
        if os.path.exists(out):
            os.unlink(out)
        p = subprocess.Popen(sweep(out), env=one, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
        while p.poll() is None:
            if 0 < finished(out) < N:
                p.send_signal(sig)
                break
            time.sleep(0.02)
        err = p.communicate()[1]
        if p.returncode == want:
            break
    else:
        print(f"FAIL {sig.name}: the sweep could not be cut short (status {p.returncode})")
        sys.exit(1)
    if sig == signal.SIGINT and "run the same command again" not in err:
        print(f"FAIL SIGINT message: {err}")
        fail = 1
    # right after the kill: a complete file, finished points equal the reference's
    points, reps, n = tables(out)
    done = points["status"] == 1
    assert 0 < n < N and done.sum() == n, (n, points["status"])
    assert all(points["status"][~done] == 0), points["status"]
    assert len(reps) == n * R
    assert same(points[done], ref_points[done]), "finished points differ"
    assert same(reps, ref_reps[np.isin(ref_reps["point"], points["point"][done])])
    # the same command again: only the unfinished points, the reference's tables
    r = subprocess.run(sweep(out), env=two, capture_output=True, text=True)
    if r.returncode != 0 or f"({N - n} run now, {n} from the file)" not in r.stdout:
        print(f"FAIL {sig.name} rerun: status {r.returncode}\n{r.stdout[-300:]}{r.stderr}")
        fail = 1
    points, reps, n = tables(out)
    if not (n == N and same(points, ref_points) and same(reps, ref_reps)):
        print(f"FAIL {sig.name}: the resumed tables differ from the uninterrupted run's")
        fail = 1
    left = [f for f in os.listdir(tmp) if ".tmp." in f]
    if left:
        print(f"FAIL {sig.name}: temporary files left: {left}")
        fail = 1
    print(f"{sig.name}: cut after {int(done.sum())} of {N} points, resumed")
if not fail:
    print("ok: sweep_resume")
sys.exit(fail)
EOF
