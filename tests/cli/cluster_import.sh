#!/bin/sh
# cluster_import.sh DCSIM SRC - published trace layouts in `dcsim cluster`
# (docs/cluster.md "Importing published traces"): a Helios cluster log, PAI
# 2020 task rows, Philly's JSON job log and a layout of named columns each
# give exactly the simulation of the same jobs written in the dcsim layout
# by hand (same digest, same busy GPU-seconds), and the output names what
# was skipped and the time shift. (Field rules: tests/models/
# test_cluster_import.c; refusals: tests/bad/cluster_trace_*.case.)
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
py=/usr/bin/python3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
scenario() { # NAME FILE ATTRS
    cat > "$dir/$1.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<dcsim version="1" seed="1" name="import-$1">
  <cluster><gpu type="H100-SXM" count="64"/></cluster>
  <cluster-jobs>
    <trace file="$2" $3/>
    <scheduler policy="fifo"/>
    <placement policy="first-fit" gpus-per-leaf="32"/>
  </cluster-jobs>
</dcsim>
EOF
}
cat > "$dir/helios.csv" <<'EOF'
job_id,user,vc,jobname,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue
j1,u1,vc1,"train, big",8,64,1,COMPLETED,2020-04-01 00:00:10,2020-04-01 00:00:20,2020-04-01 02:00:20,7200,10
j2,u2,vc1,cpu,0,8,1,COMPLETED,2020-04-01 00:01:00,2020-04-01 00:01:00,2020-04-01 00:02:00,60,0
j4,u3,vc2,y,4,16,1,RUNNING,2020-04-01 00:03:00,2020-04-01 00:04:00,,,60
j5,u3,vc2,z,128,16,16,COMPLETED,2020-04-01 00:03:00,2020-04-01 00:04:00,2020-04-01 01:04:00,3600,60
j6,u3,vc2,w,60,16,1,COMPLETED,2020-04-01 00:02:00,2020-04-01 00:04:00,2020-04-01 01:04:00,3600,120
EOF
printf 'submit_s,gpus,duration_s\n0,8,7200\n110,60,3600\n' > "$dir/helios-as-dcsim.csv"
printf 'jA,worker,2,Terminated,1000,4600,600,29.3,100,V100\njB,worker,1,Terminated,2000,2500,600,29.3,50,T4\njA,ps,1,Terminated,990,4700,600,29.3,,\njC,worker,1,Running,3000,,600,29.3,100,P100\n' > "$dir/pai.csv"
printf 'submit_s,gpus,duration_s\n0,2,3710\n1010,1,500\n' > "$dir/pai-as-dcsim.csv"
cat > "$dir/philly.json" <<'EOF'
[{"status":"Pass","jobid":"application_1","attempts":[{"start_time":"2017-10-03 02:50:08","end_time":"2017-10-03 03:50:08","detail":[{"ip":"m1","gpus":["gpu0","gpu1"]},{"ip":"m2","gpus":["gpu0"]}]}],"submitted_time":"2017-10-03 02:49:59","user":"x"},
 {"status":"Failed","jobid":"application_2","attempts":[{"start_time":"2017-10-03 02:40:00","end_time":"2017-10-03 02:50:00","detail":[{"ip":"m1","gpus":["gpu0"]}]},{"start_time":"2017-10-03 03:00:00","end_time":"2017-10-03 03:20:00","detail":[{"ip":"m3","gpus":["gpu0","gpu1","gpu2","gpu3"]}]}],"submitted_time":"2017-10-03 02:39:00","user":"y"},
 {"status":"Killed","jobid":"application_3","attempts":[],"submitted_time":"2017-10-03 02:30:00","user":"y"}]
EOF
printf 'submit_s,gpus,duration_s\n0,4,1800\n659,3,3600\n' > "$dir/philly-as-dcsim.csv"
printf 'nodes,ended,began,queued\n2,700,100,50\n1,400,300,20\n' > "$dir/site.csv"
printf 'submit_s,gpus,duration_s\n0,8,100\n30,16,600\n' > "$dir/site-as-dcsim.csv"
scenario helios helios.csv 'format="helios"'
scenario helios-as-dcsim helios-as-dcsim.csv ''
scenario pai pai.csv 'format="pai-2020"'
scenario pai-as-dcsim pai-as-dcsim.csv ''
scenario philly philly.json 'format="philly"'
scenario philly-as-dcsim philly-as-dcsim.csv ''
scenario site site.csv 'format="columns" gpus-column="nodes" gpu-scale="8" start-column="began" end-column="ended" submit-column="queued"'
scenario site-as-dcsim site-as-dcsim.csv ''
same() { # NAME JOBS SKIPPED-TEXT
    a=$("$dcsim" cluster --quiet --json "$dir/$1.xml") || { echo "FAIL: $1 runs"; fail=1; return; }
    b=$("$dcsim" cluster --quiet --json "$dir/$1-as-dcsim.xml") || { echo "FAIL: $1-as-dcsim runs"; fail=1; return; }
    printf '%s\n%s\n' "$a" "$b" | $py -c '
import json, sys
a, b = (json.loads(l) for l in sys.stdin.read().strip().split("\n"))
name, jobs, note = sys.argv[1], int(sys.argv[2]), sys.argv[3]
bad = []
for k in ("jobs", "digest", "busy_gpu_s", "end_s", "events"):
    if a[k] != b[k]:
        bad.append("%s: %r imported, %r by hand" % (k, a[k], b[k]))
if a["jobs"] != jobs:
    bad.append("jobs %r, expected %d" % (a["jobs"], jobs))
if note not in a["defaults_used"]:
    bad.append("defaults_used lacks %r: %r" % (note, a["defaults_used"]))
if bad:
    print("FAIL: %s: %s" % (name, "; ".join(bad)))
    sys.exit(1)
' "$1" "$2" "$3" || fail=1
}
same helios 2 "trace (helios): 2 of 5 jobs kept (skipped: 1 without GPUs, 1 unfinished, 0 under 1 s or over ten years, 1 larger than the cluster); times shifted by -1585699210 s"
same pai 2 "trace (pai-2020): 2 of 3 jobs kept (skipped: 0 without GPUs, 1 unfinished"
same philly 2 "trace (philly): 2 of 3 jobs kept (skipped: 0 without GPUs, 1 unfinished"
same site 2 "trace (columns): 2 of 2 jobs kept"
expect "import text" 0 "trace .*helios.csv, 2 jobs" "$dcsim" cluster --quiet "$dir/helios.xml"
exit $fail
