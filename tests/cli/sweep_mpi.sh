#!/bin/sh
# sweep_mpi.sh DCSIM SRC HAVE_MPI MPIEXEC - `dcsim sweep` under MPI: the
# same tables from one process on one thread, `mpirun -n 2` and `-n 3`
# (--oversubscribe: CI machines have few cores), and a sweep cut short under
# mpirun (SIGKILL to mpirun) finished by one process. Without MPI in the
# build (or no mpirun) it checks that a launched sweep is refused and prints
# SKIP. Open MPI's own allocations are not freed at exit, so the sanitizer
# build runs this test with ASAN_OPTIONS=detect_leaks=0 (tests/CMakeLists.txt);
# sweep.sh keeps the leak check for the single-process sweep.
set -u
dcsim=$1
have_mpi=$3
mpiexec=${4:-}
. "$(dirname "$0")/expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the MFU path: the points cost no step tier (fast under the sanitizers)
scenario=$2/tests/scenarios/no-fabric.xml
grid="--grid checkpoint/@interval=10min,20min,40min --grid reliability/@scale=0.5,1,2 --replicas 5"
if [ "$have_mpi" != "ON" ]; then
    expect "launched sweep without MPI refused" 2 "built without MPI" \
        env OMPI_COMM_WORLD_SIZE=2 "$dcsim" sweep "$scenario" --quiet $grid -o "$tmp/x.h5"
    [ -e "$tmp/x.h5" ] && { echo "FAIL a refused sweep wrote a file"; fail=1; }
    [ "$fail" -eq 0 ] && echo "SKIP: sweep_mpi: this dcsim is built without MPI (refusal checked)"
    exit "$fail"
fi
if [ -z "$mpiexec" ] || ! command -v "$mpiexec" >/dev/null 2>&1; then
    echo "SKIP: sweep_mpi: no mpirun"
    exit 0
fi
# Open MPI refuses root unless told (CI containers run as root)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
OMP_NUM_THREADS=1 "$dcsim" sweep "$scenario" --quiet $grid -o "$tmp/one.h5" >"$tmp/out" 2>&1 ||
    { echo "FAIL single process"; cat "$tmp/out"; fail=1; }
for n in 2 3; do
    "$mpiexec" --oversubscribe -n $n -x OMP_NUM_THREADS=1 "$dcsim" sweep "$scenario" --quiet $grid \
        -o "$tmp/mpi$n.h5" >"$tmp/out$n" 2>&1 || { echo "FAIL mpirun -n $n"; cat "$tmp/out$n"; fail=1; }
    [ "$(grep -c '^# 9 points (9 run now' "$tmp/out$n")" -eq 1 ] ||
        { echo "FAIL mpirun -n $n: not one table from rank 0"; cat "$tmp/out$n"; fail=1; }
done
/usr/bin/python3 - "$tmp" <<'PY' || { echo "FAIL MPI tables differ from the single process"; fail=1; }
import sys, h5py, numpy as np; same = lambda a, b: a.dtype == b.dtype and a.shape == b.shape and all(np.array_equal(a[n], b[n], equal_nan=a.dtype[n].kind == 'f') for n in a.dtype.names)
t = sys.argv[1]
a = h5py.File(f"{t}/one.h5")["sweep"]
for n in (2, 3):
    b = h5py.File(f"{t}/mpi{n}.h5")["sweep"]
    assert same(a["points"][:], b["points"][:]), n
    assert same(a["replicas"][:], b["replicas"][:]), n
    assert a.attrs["sweep_id"] == b.attrs["sweep_id"]
PY
# cut short under mpirun, finished by one process with two threads
/usr/bin/python3 - "$dcsim" "$mpiexec" "$tmp" "$scenario" <<'PY' || { echo "FAIL mpirun kill and resume"; fail=1; }
import os, signal, subprocess, sys, time
import h5py, numpy as np; same = lambda a, b: a.dtype == b.dtype and a.shape == b.shape and all(np.array_equal(a[n], b[n], equal_nan=a.dtype[n].kind == 'f') for n in a.dtype.names)
dcsim, mpiexec, t, scenario = sys.argv[1:5]
args = ["sweep", scenario, "--quiet", "--grid", "checkpoint/@interval=10min,15min,20min,30min,40min,60min",
        "--grid", "reliability/@scale=0.5,1,1.5,2", "--replicas", "16", "--write-every", "0s"]
out, ref = f"{t}/cut.h5", f"{t}/ref.h5"
env = dict(os.environ, OMP_NUM_THREADS="1")
subprocess.run([dcsim, *args, "-o", ref], env=dict(os.environ, OMP_NUM_THREADS="2"), check=True,
               stdout=subprocess.DEVNULL)
def finished(path):
    try:
        with h5py.File(path, "r") as f:
            return int(f["sweep"].attrs["points_finished"])
    except (OSError, KeyError):
        return -1
# Kill mpirun once some but not all points are stored. On a busy machine the
# poll may miss that window (the sweep ends first, or the file is being
# written each time we look): start over, at most three times, and say what
# happened if it never opened.
for attempt in range(3):
    if os.path.exists(out):
        os.unlink(out)
    with open(f"{t}/cut.err", "w") as err:
        p = subprocess.Popen([mpiexec, "--oversubscribe", "-n", "2", "-x", "OMP_NUM_THREADS=1",
                              dcsim, *args, "-o", out], env=env, stdout=subprocess.DEVNULL,
                             stderr=err, start_new_session=True)
    while p.poll() is None and not 0 < finished(out) < 24:
        time.sleep(0.02)
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)  # mpirun and both ranks at once
        p.wait()
        break
    print(f"attempt {attempt + 1}: mpirun ended by itself (status {p.returncode}, "
          f"{finished(out)} points stored) before it could be cut:", open(f"{t}/cut.err").read())
else:
    sys.exit("mpirun was never caught with some but not all points stored")
import fcntl
deadline = time.time() + 30  # a rank may outlive mpirun a moment: wait for rank 0's lock
while time.time() < deadline:
    try:
        fd = os.open(out + ".lock", os.O_RDWR)
    except FileNotFoundError:
        break
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        break
    except OSError:
        time.sleep(0.05)
    finally:
        os.close(fd)
n = finished(out)
assert 0 < n <= 24, n
r = subprocess.run([dcsim, *args, "-o", out], env=dict(os.environ, OMP_NUM_THREADS="2"),
                   capture_output=True, text=True)
assert r.returncode == 0 and f"({24 - n} run now, {n} from the file)" in r.stdout, r.stdout
with h5py.File(out) as a, h5py.File(ref) as b:
    assert same(a["sweep/points"][:], b["sweep/points"][:])
    assert same(a["sweep/replicas"][:], b["sweep/replicas"][:])
print(f"mpirun killed after {n} of 24 points, resumed by one process")
PY
[ "$fail" -eq 0 ] && echo "ok: sweep_mpi"
exit "$fail"
