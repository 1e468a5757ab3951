#!/bin/sh
# sizing.sh DCSIM - `dcsim fit` and `dcsim size` end to end: exit statuses
# and the figures they print (the arithmetic itself is tested in
# tests/models/test_workload.c).
set -u
dcsim=$1
. "$(dirname "$0")/expect.sh"
expect "fit default" 0 "^fits: the fullest GPU (stage 1) uses 75.0 of 80.0 GB" "$dcsim" fit
expect "fit table" 0 "^ *0 *7 *16 " "$dcsim" fit
# ZeRO 1 leaves the fp32 main-gradient buffer (4 B per parameter) unsharded
expect "fit too big" 1 "^DOES NOT FIT: 14 of 16 pipeline stages exceed 80.0 GB; stage 1 needs 87.7 GB" \
    "$dcsim" fit --set job/parallelism/@zero=1
expect "fit recompute" 0 "recompute full" \
    "$dcsim" fit --set job/parallelism/@zero=1 --set job/parallelism/@recompute=full
expect "run refuses" 2 "does not fit: pipeline stage 1 needs" \
    "$dcsim" run --quiet --set job/parallelism/@zero=1
expect "size 70B int8" 0 "weights (int8): 70.0 GB = 65.2 GiB" \
    "$dcsim" size llama2-70b H100-SXM --weights int8 --kv fp16 --batch 8 --context 4096 --params 70B
expect "size KV" 0 "P50 *4096 *10.00 *75.19 *2 " \
    "$dcsim" size llama2-70b H100-SXM --weights int8 --kv fp16 --batch 8 --context 4096 --params 70B
expect "size verdict" 0 "does not fit on one H100-SXM: weights + KV = 80.7 GB > 80.0 GB" \
    "$dcsim" size llama2-70b H100-SXM --weights int8 --kv fp16 --batch 8 --context 4096 --params 70B
expect "size percentiles" 0 "P99 *32768" "$dcsim" size llama3-8b H100-SXM --context 2048,8192,32768 --batch 4
expect "size unknown model" 2 "unknown model 'llama9'; known models: megatron-gpt-1.7b" \
    "$dcsim" size llama9 H100-SXM
expect "size unknown gpu" 2 "unknown GPU type 'H900'; known types: A100-SXM-40GB" \
    "$dcsim" size llama2-7b H900
expect "size bad precision" 2 "unknown precision 'int3'" "$dcsim" size llama2-7b H100-SXM --weights int3
[ "$fail" -eq 0 ] && echo "ok: fit and size"
exit "$fail"
