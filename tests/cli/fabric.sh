#!/bin/sh
# fabric.sh DCSIM SRC - `dcsim topo` and `dcsim netbench` end to end: the
# figures they print for the example SuperPOD fabric, the export, JSON and
# determinism (the models are tested in tests/models and tests/app).
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
sp=$src/scenarios/examples/superpod-h100.xml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# B200 RA 64-SU row: 512 leaf / 512 spine / 256 core (hardware.md 6.2)
expect "topo tiers" 0 "^switches *1280: tier 1 512, tier 2 512, tier 3 256" "$dcsim" topo "$sp"
expect "topo domains" 0 "^scale-up *2048 domains of 8 GPUs, nvlink4" "$dcsim" topo "$sp"
expect "topo bisection" 0 "^bisection *385.024 TB/s one way (100% of" "$dcsim" topo "$sp"
expect "topo diameter" 0 "^diameter *6 links" "$dcsim" topo "$sp"
expect "topo 3:1" 0 "(33.33[0-9]*% of the GPUs' injection)" "$dcsim" topo "$sp" \
    --set cluster/fabric/@topology=leaf-spine --set cluster/fabric/@oversubscription=3:1 \
    --set cluster/fabric/@tiers=3
expect "topo json" 0 '"transceivers":[[:space:]]*98304' "$dcsim" topo "$sp" --json
expect "topo export" 0 "^fabric" "$dcsim" topo "$sp" --export "$tmp/g.graphml"
nodes=$(grep -c '<node ' "$tmp/g.graphml")
edges=$(grep -c '<edge ' "$tmp/g.graphml")
# 16,384 GPUs + 1,280 switches + 2,048 crossbars; 49,152 fabric + 16,384 NVLink cables
if [ "$nodes" -ne 19712 ] || [ "$edges" -ne 65536 ]; then
    echo "FAIL topo export: $nodes nodes, $edges edges; expected 19712 and 65536"
    fail=$((fail + 1))
fi
ls "$tmp" | grep -q tmp && { echo "FAIL topo export left a temporary file"; fail=$((fail + 1)); }
# the torus (tests/scenarios/torus.xml, 8x8x4 routers of 4 GPUs): N = 256 routers,
# 3N router cables, diameter 4 + 4 + 2 router hops + 2, bisection 2N/8 = 64
# cables x 47 GB/s effective, radix 4 + 2 x 3; its routers are the switches
# that fail (MTBF 50,000 h / 256)
torus=$src/tests/scenarios/torus.xml
expect "torus switches" 0 "^switches *256: tier 1 256$" "$dcsim" topo "$torus"
expect "torus cables" 0 "^cables *1792 fabric (host 1024, from tier 1 768), 1024 scale-up" \
    "$dcsim" topo "$torus"
expect "torus bisection" 0 "^bisection *3.008 TB/s one way" "$dcsim" topo "$torus"
expect "torus diameter" 0 "^diameter *12 links" "$dcsim" topo "$torus"
expect "torus radix" 0 "^max radix *10 ports" "$dcsim" topo "$torus"
expect "torus switch failures" 0 "cluster MTBF *703125 *s" "$dcsim" run --quiet "$torus"
expect "netbench header" 0 "^# dcsim netbench: allreduce, algorithm auto (NCCL's tuning model picks per size), 8 ranks" \
    "$dcsim" netbench "$sp" --ranks 8 --min 1M --max 1M
expect "netbench nvls 8G" 0 "^ *8589934592 *2147483648 *float .* 470\.[0-9][0-9] *-  in-network nvls/Simple$" \
    "$dcsim" netbench "$sp" --ranks 8 --min 8G --max 8G
expect "netbench per NIC" 0 " 46\.[0-9][0-9]  ring ring/Simple$" \
    "$dcsim" netbench "$sp" --ranks 16 --min 8G --max 8G
expect "netbench json" 0 '"nccl_algorithm":[[:space:]]*"tree"' "$dcsim" netbench "$sp" --ranks 64 --max 64K --json
a=$("$dcsim" netbench "$sp" --ranks 128 --op alltoall --min 1K --max 1M --factor 32)
b=$("$dcsim" netbench "$sp" --ranks 128 --op alltoall --min 1K --max 1M --factor 32)
[ "$a" = "$b" ] || { echo "FAIL netbench is not deterministic"; fail=$((fail + 1)); }
# a factor that rounds back to the same whole size (1 x 1.5 = 1) once
# looped for ever: sizes advance by at least a byte, 1 2 3 4 6 9 13 19 28 42 63
sizes=$(timeout 60 "$dcsim" netbench "$sp" --ranks 8 --min 1 --max 64 --factor 1.5 | awk '!/^#/ {printf "%s ", $1}')
[ "$sizes" = "1 2 3 4 6 9 13 19 28 42 63 " ] || { echo "FAIL netbench --factor 1.5 sizes: $sizes"; fail=$((fail + 1)); }
[ "$fail" -eq 0 ] && echo "ok: topo and netbench"
exit "$fail"
