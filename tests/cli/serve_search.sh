#!/bin/sh
# serve_search.sh DCSIM SRC - `dcsim serve --size --search tp=LIST`
# (docs/serving.md "A sizing search over configurations"): on the example
# with bf16 weights (Llama 3 70B does not fit one H100 then), tp=1 is
# refused in its row, naming the model, its GPUs and the memory; every
# other row equals `dcsim serve --size --json --set serving/replica/@tp=T`
# (replicas, GPUs, the P99s: the same numbers); the first row has the fewest
# GPUs of the table and the rows are ranked by GPUs; the answer is the
# first row; --search without --size and a bad list are refused. With
# --search gpu=LIST each GPU type's rows equal --size with that type and tp,
# are ranked on their own, and give one answer per type.
set -u
dcsim=$1
src=$2
. "$(dirname "$0")/expect.sh"
ex=$src/scenarios/examples/serving-llama3-70b-h100.xml
py=/usr/bin/python3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
set -- --set serving/replica/@weights=bf16 --set serving/replica/@kv=bf16 \
    --set serving/replica/@precision=bf16 --set serving/arrivals/@duration=120s
"$dcsim" serve --quiet --json --size --search tp=1,2,4,8 "$ex" "$@" > "$tmp/search.json" ||
    { echo "FAIL: --search"; fail=1; }
for tp in 2 4 8; do
    "$dcsim" serve --quiet --json --size "$ex" "$@" --set serving/replica/@tp=$tp \
        > "$tmp/size$tp.json" || { echo "FAIL: --size tp $tp"; fail=1; }
done
$py - "$tmp" <<'PY' || fail=1
import json, os, sys
t = sys.argv[1]
doc = json.load(open(os.path.join(t, "search.json")))
rows, ans = doc["search"]["rows"], doc["search"]["answer"]
bad = []
refused = [r for r in rows if "refused" in r]
ok = [r for r in rows if "refused" not in r]
if [r["tp"] for r in refused] != [1] or "leaves no memory" not in refused[0]["refused"] \
        or "llama3-70b on 1 GPU" not in refused[0]["refused"]:
    bad.append("refusal: %r" % refused)
if sorted(r["tp"] for r in ok) != [2, 4, 8]:
    bad.append("rows: %r" % rows)
if rows[:len(ok)] != ok:
    bad.append("a refused row ranked before a sized one")
if [r["gpus"] for r in ok] != sorted(r["gpus"] for r in ok) or \
        ok[0]["gpus"] != min(r["gpus"] for r in ok):
    bad.append("not ranked by GPUs: %r" % ok)
if (ans["tp"], ans["replicas"], ans["gpus"]) != (ok[0]["tp"], ok[0]["replicas"], ok[0]["gpus"]):
    bad.append("answer %r is not the first row" % ans)
for r in ok:
    size = json.load(open(os.path.join(t, "size%d.json" % r["tp"])))
    want = (size["size"]["replicas"], size["size"]["gpus"], size["ttft"]["p99_s"], size["tpot"]["p99_s"])
    got = (r["replicas"], r["gpus"], r["ttft_p99_s"], r["tpot_p99_s"])
    if got != want:
        bad.append("tp %d: search %r, --size %r" % (r["tp"], got, want))
    if r["steps"] != len(size["size"]["steps"]):
        bad.append("tp %d: %d steps, --size ran %d" % (r["tp"], r["steps"], len(size["size"]["steps"])))
    if not r["gpu_hours_per_mtok"] > 0:
        bad.append("tp %d: GPU-hours per Mtok %r" % (r["tp"], r["gpu_hours_per_mtok"]))
print("\n".join(bad) if bad else "ok: %s" % ", ".join("tp %d: %d GPUs" % (r["tp"], r["gpus"]) for r in ok))
sys.exit(1 if bad else 0)
PY
expect "text answer" 0 "^answer     tp [0-9]*: [0-9]* replicas" "$dcsim" serve --quiet --size \
    --search tp=4,8 "$ex" "$@"
bad "search without size" "--search goes with --size" "$dcsim" serve --quiet --search tp=4 "$ex"
bad "bad list" "each tp must be a whole number" "$dcsim" serve --quiet --size --search tp=4,x "$ex"
bad "not tp or gpu" "expected tp=LIST (e.g. tp=1,2,4,8) or gpu=LIST" "$dcsim" serve --quiet \
    --size --search pp=2 "$ex"
bad "tp twice" "tp= given twice" "$dcsim" serve --quiet --size --search tp=4 --search tp=8 "$ex"
bad "gpu twice" "gpu H200-SXM given twice" "$dcsim" serve --quiet --size \
    --search gpu=H200-SXM,H200-SXM "$ex"
bad "empty gpu" "each gpu must be a catalog GPU type name" "$dcsim" serve --quiet --size \
    --search gpu=H100-SXM, "$ex"
# GPU types: every row equals --size with that type and tp; each type ranked
# on its own (its rows together, in the order given, ranks from 1), one
# answer per type (its first row); an unknown type is refused in its rows
"$dcsim" serve --quiet --json --size --search gpu=H200-SXM,H100-SXM,NoSuchGPU \
    --search tp=4,8 "$ex" "$@" > "$tmp/gpus.json" || { echo "FAIL: --search gpu"; fail=1; }
for g in H100-SXM H200-SXM; do
    for tp in 4 8; do
        "$dcsim" serve --quiet --json --size "$ex" "$@" --set serving/replica/@tp=$tp \
            --set cluster/gpu/@type=$g > "$tmp/size-$g-$tp.json" || { echo "FAIL: $g $tp"; fail=1; }
    done
done
$py - "$tmp" <<'PY' || fail=1
import json, os, sys
t = sys.argv[1]
doc = json.load(open(os.path.join(t, "gpus.json")))["search"]
rows, bad = doc["rows"], []
if [r["gpu"] for r in rows] != ["H200-SXM"] * 2 + ["H100-SXM"] * 2 + ["NoSuchGPU"] * 2:
    bad.append("rows not grouped by type in the order given: %r" % [r["gpu"] for r in rows])
if "answer" in doc or [a["gpu"] for a in doc["answers"]] != ["H200-SXM", "H100-SXM"]:
    bad.append("answers %r" % doc.get("answers"))
for g in ("H200-SXM", "H100-SXM"):
    mine = [r for r in rows if r["gpu"] == g]
    if [r["rank"] for r in mine] != [1, 2] or mine[0]["gpus"] > mine[1]["gpus"]:
        bad.append("%s: ranks %r" % (g, mine))
    ans = [a for a in doc["answers"] if a["gpu"] == g][0]
    if (ans["tp"], ans["replicas"], ans["gpus"]) != (mine[0]["tp"], mine[0]["replicas"], mine[0]["gpus"]):
        bad.append("%s: answer %r is not its first row" % (g, ans))
    for r in mine:
        size = json.load(open(os.path.join(t, "size-%s-%d.json" % (g, r["tp"]))))
        want = (size["size"]["replicas"], size["size"]["gpus"], size["ttft"]["p99_s"])
        if (r["replicas"], r["gpus"], r["ttft_p99_s"]) != want:
            bad.append("%s tp %d: search %r, --size %r" % (g, r["tp"], r, want))
for r in rows[4:]:
    why = r.get("refused", "")
    if '<gpu type="NoSuchGPU">: unknown GPU type' not in why:
        bad.append("NoSuchGPU row not refused by the catalog: %r" % r)
print("\n".join(bad) if bad else "ok: GPU types searched, each ranked on its own")
sys.exit(1 if bad else 0)
PY
expect "text answers" 0 "^answer     H200-SXM: tp [0-9]*, [0-9]* replicas" "$dcsim" serve \
    --quiet --size --search gpu=H200-SXM,H100-SXM --search tp=4 "$ex" "$@"
# a rent for every GPU type (<costs><rent>, tests/scenarios/serving-rent.xml):
# all rows ranked together by the fleet's rent per hour (GPUs x the type's
# rent), one answer (the cheapest); the same rows as without the rents; with
# one type's rent moved to a type not searched, each type on its own again
rent=$src/tests/scenarios/serving-rent.xml
"$dcsim" serve --quiet --json --size --search gpu=H100-SXM,H200-SXM --search tp=1,2,4 \
    "$rent" > "$tmp/rent.json" || { echo "FAIL: rent search"; fail=1; }
"$dcsim" serve --quiet --json --size --search gpu=H100-SXM,H200-SXM --search tp=1,2,4 \
    "$rent" --set 'costs/rent[2]/@gpu=A100-SXM-80GB' > "$tmp/norent.json" ||
    { echo "FAIL: search with one rent"; fail=1; }
$py - "$tmp" <<'PY' || fail=1
import json, os, sys
t = sys.argv[1]
doc = json.load(open(os.path.join(t, "rent.json")))["search"]
one = json.load(open(os.path.join(t, "norent.json")))["search"]
price = {"H100-SXM": 15.0, "H200-SXM": 20.0}
rows, bad = doc["rows"], []
sized = [r for r in rows if "refused" not in r]
if not doc.get("ranked_across_gpu_types") or "answers" in doc or len(sized) < 4:
    bad.append("not ranked across types: %r" % sorted(doc))
if len({r["gpu"] for r in sized}) != 2:
    bad.append("both types should have sized rows: %r" % sized)
for r in sized:
    if r["rent_per_hour_cny"] != r["gpus"] * price[r["gpu"]]:
        bad.append("rent %r, GPUs %r x %r" % (r["rent_per_hour_cny"], r["gpus"], price[r["gpu"]]))
rents = [r["rent_per_hour_cny"] for r in sized]
if rents != sorted(rents) or [r["rank"] for r in sized] != list(range(1, len(sized) + 1)):
    bad.append("not ranked by rent: %r" % [(r["gpu"], r["tp"], r["rank"], r["rent_per_hour_cny"])
                                           for r in sized])
a, first = doc.get("answer", {}), sized[0]
if (a.get("gpu"), a.get("tp"), a.get("gpus")) != (first["gpu"], first["tp"], first["gpus"]):
    bad.append("answer %r is not the first row %r" % (a, first))
key = lambda r: (r["gpu"], r["tp"], r.get("replicas"), r.get("ttft_p99_s"))
if sorted(map(key, rows)) != sorted(map(key, one["rows"])):
    bad.append("the rents changed the rows themselves")
if one.get("ranked_across_gpu_types") or "answer" in one or len(one["answers"]) != 2:
    bad.append("one type without a rent: not each type on its own: %r" % sorted(one))
if any("rent_per_hour_cny" in r for r in one["rows"] if r["gpu"] == "H200-SXM"):
    bad.append("H200-SXM has a rent it was not given")
print("\n".join(bad) if bad else "ok: a rent per GPU type ranks the types together")
sys.exit(1 if bad else 0)
PY
[ "$fail" -eq 0 ] && echo "ok: serve_search"
exit "$fail"
