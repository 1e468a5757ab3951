#!/bin/sh
# outputs.sh DCSIM SOURCE_DIR - every writer of an output file (run -o,
# sweep -o, compare -o, report -o) through sim/app/outpath.c: a full disk
# (ulimit -f; a real full tmpfs when this machine lets us mount one) is one
# error line and exit 2 with the previous file intact byte for byte and no
# temporary left; a target that is not a regular file or is an input of the
# run (same inode, whatever the name) is refused; paths of 1,200 bytes work
# (no cut temporary name); temporaries of killed runs are removed by the
# next write; SIGHUP stops a run like SIGTERM; a second sweep on a file that
# a sweep is writing is refused.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
dir=$(mktemp -d /tmp/dcsim-outputs-XXXXXX)
mnt=
cleanup() {
    [ -n "$mnt" ] && umount "$mnt" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT
long=$src/tests/scenarios/long.xml
grid="--grid checkpoint/@interval=10min,20min"

# exactly one stderr line, equal to $2; status $3; $1 describes it
one_line() { # what want status file-of-stderr got-status
    n=$(wc -l <"$4")
    [ "$n" -eq 1 ] || { echo "FAIL: $1: $n lines on stderr, expected 1:"; cat "$4"; fail=1; }
    [ "$(cat "$4")" = "$2" ] || { echo "FAIL: $1:"; echo "  expected: $2"; echo "  got:      $(head -n 3 "$4")"; fail=1; }
    [ "$5" -eq "$3" ] || { echo "FAIL: $1: exit status $5, expected $3"; fail=1; }
}
no_temp() { # what path
    if ls "$2".tmp.* "$2".lock >/dev/null 2>&1; then
        echo "FAIL: $1: left behind: $(ls "$2".tmp.* "$2".lock 2>/dev/null)"; fail=1
    fi
}

# ---- a full disk: ulimit -f (SIGXFSZ ignored by dcsim: the write fails with EFBIG)
# the previous trace: the old default without a fabric (no 3 MB /step group,
# so it fits the small tmpfs below)
"$dcsim" run --quiet "$src/tests/scenarios/no-fabric.xml" -o "$dir/t.h5" >/dev/null ||
    { echo "FAIL: run -o"; fail=1; }
cp "$dir/t.h5" "$dir/t.orig"
(ulimit -f 40; exec "$dcsim" run --quiet "$long" -o "$dir/t.h5") >/dev/null 2>"$dir/err"
st=$?
one_line "run -o over ulimit -f" \
    "$dir/t.h5: error: cannot write the trace: writing /campaign/events failed: File too large" 2 \
    "$dir/err" "$st"
cmp -s "$dir/t.h5" "$dir/t.orig" || { echo "FAIL: run -o over ulimit -f changed the previous trace"; fail=1; }
no_temp "run -o over ulimit -f" "$dir/t.h5"

"$dcsim" sweep --quiet $grid -o "$dir/s.h5" >/dev/null || { echo "FAIL: sweep -o"; fail=1; }
cp "$dir/s.h5" "$dir/s.orig"
(ulimit -f 8; exec "$dcsim" sweep --quiet --force $grid --replicas 3 -o "$dir/s.h5") >/dev/null 2>"$dir/err"
st=$?
one_line "sweep -o over ulimit -f" "$dir/s.h5: error: cannot write the sweep file: File too large" 2 \
    "$dir/err" "$st"
cmp -s "$dir/s.h5" "$dir/s.orig" || { echo "FAIL: sweep over ulimit -f changed the previous file"; fail=1; }
no_temp "sweep -o over ulimit -f" "$dir/s.h5"

# ---- a really full disk, where we may mount a small tmpfs (root, not every sandbox)
if [ "$(id -u)" -eq 0 ] && mkdir "$dir/mnt" && mount -t tmpfs -o size=256k tmpfs "$dir/mnt" 2>/dev/null; then
    mnt=$dir/mnt
    cp "$dir/t.orig" "$mnt/t.h5"
    cp "$dir/s.orig" "$mnt/s.h5"
    # 40 KiB left: the trace fails part-way (a full disk at any later write)
    avail=$(df -k "$mnt" | awk 'NR == 2 { print $4 }')
    dd if=/dev/zero of="$mnt/fill" bs=1k count=$((avail - 40)) 2>/dev/null
    "$dcsim" run --quiet "$long" -o "$mnt/t.h5" >/dev/null 2>"$dir/err"
    st=$?
    grep -q "^$mnt/t.h5: error: cannot write the trace: writing /campaign/[a-z]* failed: No space left on device\$" "$dir/err" ||
        { echo "FAIL: run -o on a full disk:"; cat "$dir/err"; fail=1; }
    one_line "run -o on a full disk" "$(cat "$dir/err")" 2 "$dir/err" "$st"
    cmp -s "$mnt/t.h5" "$dir/t.orig" || { echo "FAIL: run -o on a full disk changed the previous trace"; fail=1; }
    no_temp "run -o on a full disk" "$mnt/t.h5"
    # nothing left; the resume path, from 2 threads (HDF5's error printing is per thread)
    dd if=/dev/zero of="$mnt/fill2" bs=1k count=512 2>/dev/null # fills it: dd fails at the end
    OMP_NUM_THREADS=2 "$dcsim" sweep --quiet $grid -o "$mnt/s.h5" >/dev/null 2>"$dir/err"
    st=$?
    one_line "sweep resumed on a full disk" \
        "$mnt/s.h5: error: cannot write the sweep file: No space left on device" 2 "$dir/err" "$st"
    cmp -s "$mnt/s.h5" "$dir/s.orig" || { echo "FAIL: sweep on a full disk changed the previous file"; fail=1; }
    no_temp "sweep on a full disk" "$mnt/s.h5"
    umount "$mnt" && mnt=
else
    echo "note: no tmpfs mount here; the full disk is tested with ulimit -f only"
fi

# ---- targets that are not regular files, and inputs of the run
mkfifo "$dir/fifo"
notreg="cannot write the trace: it exists and is not a regular file (a device, pipe or socket); dcsim replaces only regular files"
"$dcsim" run --quiet -o "$dir/fifo" >/dev/null 2>"$dir/err"
one_line "run -o FIFO" "$dir/fifo: error: $notreg" 2 "$dir/err" $?
"$dcsim" sweep --quiet $grid -o "$dir/fifo" >/dev/null 2>"$dir/err"
one_line "sweep -o FIFO" "$dir/fifo: error: cannot write the sweep file: it exists and is not a regular file (a device, pipe or socket); dcsim replaces only regular files" 2 "$dir/err" $?
"$dcsim" compare "$src/tests/scenarios/site.xml" -o "$dir/fifo" >/dev/null 2>"$dir/err.all"
status=$?
# site.xml gives an MFU and a fabric (for its capital cost): the run layer's
# one warning about that is expected and not the line under test
grep -v ': warning: <training mfu=' "$dir/err.all" >"$dir/err"
(exit $status)
one_line "compare -o FIFO" "$dir/fifo: error: cannot write the table: it exists and is not a regular file (a device, pipe or socket); dcsim replaces only regular files" 2 "$dir/err" $?
[ -p "$dir/fifo" ] || { echo "FAIL: the FIFO was replaced"; fail=1; }
if [ "$(id -u)" -eq 0 ] && mknod "$dir/null" c 1 3 2>/dev/null; then
    "$dcsim" run --quiet -o "$dir/null" >/dev/null 2>"$dir/err"
    one_line "run -o a character device" "$dir/null: error: $notreg" 2 "$dir/err" $?
    [ -c "$dir/null" ] || { echo "FAIL: the device was replaced by a file"; fail=1; }
fi
if [ -f "$src/analysis/dcsim_report.py" ] && /usr/bin/python3 -c "import h5py, matplotlib" 2>/dev/null; then
    "$dcsim" report "$dir/t.orig" -o "$dir/fifo" >/dev/null 2>"$dir/err"
    one_line "report -o FIFO" "dcsim report: error: $dir/fifo: cannot write the report: it exists and is not a regular file (a device, pipe or socket); dcsim replaces only regular files" 2 "$dir/err" $?
    cp "$dir/t.orig" "$dir/r.h5"
    "$dcsim" report "$dir/r.h5" -o "$dir/r.h5" >/dev/null 2>"$dir/err"
    one_line "report -o its input" "dcsim report: error: $dir/r.h5: cannot write the report: it is $dir/r.h5, an input of this report; choose another name" 2 "$dir/err" $?
    cmp -s "$dir/r.h5" "$dir/t.orig" || { echo "FAIL: report -o its input changed it"; fail=1; }
fi
cp "$long" "$dir/s.xml"
ln -s s.xml "$dir/link.xml"
"$dcsim" run --quiet "$dir/s.xml" -o "$dir/s.xml" >/dev/null 2>"$dir/err"
one_line "run -o the scenario" "$dir/s.xml: error: cannot write the trace: it is $dir/s.xml, an input of this run; choose another name" 2 "$dir/err" $?
"$dcsim" run --quiet "$dir/link.xml" -o "$dir/s.xml" >/dev/null 2>"$dir/err"
one_line "run -o the scenario under another name" "$dir/s.xml: error: cannot write the trace: it is $dir/link.xml, an input of this run; choose another name" 2 "$dir/err" $?
cmp -s "$dir/s.xml" "$long" || { echo "FAIL: the scenario was changed"; fail=1; }
mkdir "$dir/xi"
cp "$src"/tests/scenarios/xinclude/main.xml "$src"/tests/scenarios/xinclude/lab-gpus.xml "$dir/xi/"
"$dcsim" run --quiet "$dir/xi/main.xml" -o "$dir/xi/lab-gpus.xml" >/dev/null 2>"$dir/err"
one_line "run -o an XInclude'd file" "$dir/xi/lab-gpus.xml: error: cannot write the trace: it is $dir/xi/lab-gpus.xml, an input of this run; choose another name" 2 "$dir/err" $?
"$dcsim" sweep --quiet "$dir/xi/main.xml" $grid -o "$dir/xi/lab-gpus.xml" >/dev/null 2>"$dir/err"
one_line "sweep -o an XInclude'd file" "$dir/xi/lab-gpus.xml: error: cannot write the sweep file: it is $dir/xi/lab-gpus.xml, an input of this run; choose another name" 2 "$dir/err" $?
cmp -s "$dir/xi/lab-gpus.xml" "$src/tests/scenarios/xinclude/lab-gpus.xml" || { echo "FAIL: the XInclude'd file was changed"; fail=1; }
printf 'checkpoint/@interval=10min\n' >"$dir/p.txt"
cp "$dir/p.txt" "$dir/p.orig"
"$dcsim" sweep --quiet --points "$dir/p.txt" -o "$dir/p.txt" >/dev/null 2>"$dir/err"
one_line "sweep -o its points file" "$dir/p.txt: error: cannot write the sweep file: it is $dir/p.txt, an input of this run; choose another name" 2 "$dir/err" $?
cmp -s "$dir/p.txt" "$dir/p.orig" || { echo "FAIL: the points file was changed"; fail=1; }

# ---- a 1,200-byte path: the temporary name is not cut to NAME (it emptied the file)
deep=$dir
for c in a b c d e f; do
    deep=$deep/$(printf "%0200d" 0 | tr 0 "$c")
done
mkdir -p "$deep"
"$dcsim" sweep --quiet $grid -o "$deep/s.h5" >/dev/null 2>"$dir/err" || { echo "FAIL: sweep to a long path:"; cat "$dir/err"; fail=1; }
expect "sweep to a long path resumed from its file" 0 "^# 2 points (0 run now, 2 from the file)" \
    "$dcsim" sweep $grid -o "$deep/s.h5"
"$dcsim" run --quiet "$src/tests/scenarios/no-fabric.xml" -o "$deep/t.h5" >/dev/null 2>"$dir/err" || { echo "FAIL: run to a long path:"; cat "$dir/err"; fail=1; }
cmp -s "$deep/t.h5" "$dir/t.orig" || { echo "FAIL: the trace at a long path differs"; fail=1; }
no_temp "long path" "$deep/s.h5"

# ---- a run killed by SIGKILL leaves NAME.tmp.<pid>; the next write of NAME removes it
"$dcsim" run --quiet "$long" -o "$dir/k.h5" >/dev/null 2>&1 &
pid=$!
# wait for its temporary (seconds under a sanitizer on a busy machine), then kill
for _ in $(seq 1 300); do
    [ -e "$dir/k.h5.tmp.$pid" ] && break
    sleep 0.1
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
[ -e "$dir/k.h5.tmp.$pid" ] || { echo "FAIL: no temporary of the killed run to clean (test broken)"; fail=1; }
"$dcsim" run --quiet -o "$dir/k.h5" >/dev/null || { echo "FAIL: run after a killed run"; fail=1; }
no_temp "run -o after a killed run" "$dir/k.h5"

# ---- SIGHUP: like SIGTERM, status 130, nothing left
"$dcsim" run "$long" -o "$dir/h.h5" >/dev/null 2>"$dir/err" &
pid=$!
sleep 1.5
kill -HUP "$pid"
wait "$pid"
one_line "run -o hung up" "dcsim: interrupted; no trace written" 130 "$dir/err" $?
[ -e "$dir/h.h5" ] && { echo "FAIL: a hung-up run wrote its trace"; fail=1; }
no_temp "run -o hung up" "$dir/h.h5"

# ---- two sweeps on one file: the second is refused while the first runs
OMP_NUM_THREADS=1 "$dcsim" sweep --quiet "$long" $grid -o "$dir/l.h5" >/dev/null 2>"$dir/err1" &
pid=$!
i=0
while [ ! -e "$dir/l.h5" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$dcsim" sweep --quiet --grid checkpoint/@interval=30min -o "$dir/l.h5" >/dev/null 2>"$dir/err"
one_line "a second sweep on the same file" "$dir/l.h5: error: cannot write the sweep file: another dcsim (process $pid) is writing it and holds its lock file $dir/l.h5.lock; wait for it to finish, or choose another -o" 2 "$dir/err" $?
kill -INT "$pid"
wait "$pid"
st=$?
[ "$st" -eq 130 ] || { echo "FAIL: the first sweep: exit status $st, expected 130"; cat "$dir/err1"; fail=1; }
no_temp "interrupted sweep" "$dir/l.h5"
expect "the sweep file is free again" 2 "different sweep" \
    "$dcsim" sweep --quiet --grid checkpoint/@interval=30min -o "$dir/l.h5"

[ "$fail" -eq 0 ] && echo "ok: outputs"
exit "$fail"
