#!/usr/bin/python3
"""test_json_schema.py DCSIM SRC - every command's --json against the dcsim/1
schema (docs/json.md, docs/json/dcsim-1.schema.json).

Runs every command that prints results with --json on small inputs, parses
stdout with the json module (NaN and Infinity refused: JSON has neither),
checks the envelope (the first three members "schema", "command",
"dcsim_version", in that order, the command the one run and the version
`dcsim version`'s) and validates the document against the schema with the
small validator below: type, enum, minimum, required, properties,
additionalProperties (false everywhere but the few maps with free keys),
items, $ref and oneOf - the draft 2020-12 subset the schema uses. A key
the schema does not list fails the test: add it to the schema and
docs/json.md (and removing or renaming one bumps the schema to dcsim/2).
The validator is tested first on documents it must refuse. Every kind of
document the schema defines must be seen at least once, so that the schema
lists nothing dcsim no longer prints. About 30 s.
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

DCSIM = os.path.abspath(sys.argv[1])
SRC = os.path.abspath(sys.argv[2])
EX = os.path.join(SRC, "scenarios", "examples")
SCHEMA_PATH = os.path.join(SRC, "docs", "json", "dcsim-1.schema.json")

def ex(name):
    return os.path.join(EX, name)

LS = ex("concurrency-leafspine.xml")
SMALL = ["--set", "cluster/gpu/@count=64", "--set", "job/parallelism/@pp=2",
         "--set", "job/parallelism/@global-batch=16", "--set", "job/model/@ref=megatron-gpt-1.7b"]
SP = ex("superpod-h100.xml")

# (command as dcsim names it, arguments, accepted exit statuses); small inputs
CASES = [
    ("run", ["run", "--quiet", "--json"], {0}),
    ("run", ["run", "--quiet", "--json", "--replicas", "2", ex("llama3-failures.xml")], {0}),
    ("run", ["run", "--quiet", "--json", ex("superpod-guian.xml")], {0}),
    ("validate", ["validate", "--json", ex("default.xml")], {0}),
    ("validate", ["validate", "--json", os.path.join(SRC, "tests", "bad", "no_unit.xml")], {2}),
    ("fit", ["fit", "--json"], {0, 1}),
    ("fit", ["fit", "--json", SP], {0, 1}),
    ("size", ["size", "--json", "llama3-405b", "H100-SXM", "--context", "8192,32768,131072"],
     {0}),
    ("serve", ["serve", "--quiet", "--json", ex("serving-llama3-70b-h100.xml")], {0}),
    ("serve", ["serve", "--quiet", "--json", "--size", ex("serving-llama3-70b-h100.xml")], {0}),
    ("serve", ["serve", "--quiet", "--json", os.path.join(SRC, "tests", "scenarios",
                                                          "serving-prefix.xml")], {0}),
    ("serve", ["serve", "--quiet", "--json", os.path.join(SRC, "tests", "scenarios",
                                                          "serving-disagg.xml")], {0}),
    ("serve", ["serve", "--quiet", "--json", os.path.join(SRC, "tests", "scenarios",
                                                          "serving-disagg-fabric.xml")], {0}),
    ("serve", ["serve", "--quiet", "--json", os.path.join(SRC, "tests", "scenarios",
                                                          "serving-radix.xml"), "--set",
               "serving/router/@policy=prefix-affinity"], {0}),
    ("serve", ["serve", "--quiet", "--json", "--size", os.path.join(SRC, "tests", "scenarios",
                                                                    "serving-disagg.xml")], {0}),
    ("serve", ["serve", "--quiet", "--json", os.path.join(SRC, "tests", "scenarios",
                                                          "serving-swap.xml")], {0}),
    ("serve", ["serve", "--quiet", "--json", ex("serving-chat-sessions.xml")], {0}),
    ("serve", ["serve", "--quiet", "--json", ex("serving-chat-sessions.xml"), "--set",
               "serving/sessions/@truncate=oldest"], {0}),
    ("serve", ["serve", "--quiet", "--json", os.path.join(SRC, "tests", "scenarios",
                                                          "serving-fetch.xml")], {0}),
    ("serve_search", ["serve", "--quiet", "--json", "--size", "--search", "tp=1,4,8",
                      ex("serving-llama3-70b-h100.xml"), "--set", "serving/replica/@weights=bf16",
                      "--set", "serving/arrivals/@duration=60s"], {0}),
    ("serve_search", ["serve", "--quiet", "--json", "--size", "--search",  # ranked by rent
                      "gpu=H100-SXM,H200-SXM", "--search", "tp=2,4",
                      os.path.join(SRC, "tests", "scenarios", "serving-rent.xml")], {0}),
    ("run", ["run", "--quiet", "--json", os.path.join(SRC, "tests", "scenarios",
                                                      "nic-failures.xml")], {0}),
    ("run", ["run", "--quiet", "--json", "--replicas", "3", os.path.join(SRC, "tests",
             "scenarios", "shrink-two-leaves.xml"), "--set", "@seed=1"], {0}),
    ("run", ["run", "--quiet", "--json", "--replicas", "2", os.path.join(SRC, "tests",
             "scenarios", "flapping-cable.xml")], {0}),
    ("run", ["run", "--quiet", "--json", "--replicas", "2", os.path.join(SRC, "tests",
             "scenarios", "throttle-small.xml")], {0}),
    ("step", ["step", "--quiet", "--json", "--fail", "transceiver=96", os.path.join(
              SRC, "tests", "scenarios", "flapping-cable.xml")], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-synthetic-h100.xml")], {0}),
    ("cluster", ["cluster", "--quiet", "--json",
                 os.path.join(SRC, "tests", "scenarios", "cluster-training-trace.xml")], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-two-sites-month.xml")], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-interference-leafspine.xml")], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-interference-leafspine.xml"),
                 "--set", "cluster-jobs/traffic/@phase=uniform"], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-interference-layout.xml")], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-interference-model.xml")], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-preempt-h100.xml")], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-preempt-h100.xml"), "--set",
                 "cluster-jobs/failures/@swap-down=true"], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-synthetic-h100.xml"), "--set",
                 "cluster-jobs/sizes/@elastic-share=50%", "--set",
                 "cluster-jobs/sizes/@elastic-min=25%"], {0}),
    ("cluster", ["cluster", "--quiet", "--json", ex("cluster-synthetic-h100.xml"), "--set",
                 "cluster-jobs/sizes/@elastic-share=50%", "--set",
                 "cluster-jobs/sizes/@elastic-min=25%", "--set",
                 "cluster-jobs/scheduler/@elastic-exponent=0.7"], {0}),
    ("hubs", ["hubs", "--quiet", "--json", ex("hubs-east-west-year.xml")], {0}),
    ("hubs", ["hubs", "--quiet", "--json", ex("hubs-east-west-year.xml"), "--set",
              "hubs/@policy=follow-the-renewables"], {0}),
    ("hubs", ["hubs", "--quiet", "--json", ex("hubs-east-west-year.xml"), "--set",
              "hubs/@backlog=gang", "--set", "hubs/hub[5]/@water-limit=2000m3", "--set",
              "hubs/hub[8]/@gpu=A100-SXM-80GB"], {0}),
    ("hubs", ["hubs", "--quiet", "--json",  # a fabric at the hub: the interference keys
              os.path.join(SRC, "tests", "scenarios", "hubs-one-fabric.xml")], {0}),
    ("hubs", ["hubs", "--quiet", "--json", ex("hubs-east-west-backbone.xml")], {0}),  # backbone
    ("hubs", ["hubs", "--quiet", "--json",  # own fabrics, interfered keys: fabric, key scales
              os.path.join(SRC, "tests", "scenarios", "hubs-two-fabric-kinds.xml"), "--set",
              "hubs/@keys=interfered"], {0}),
    ("hubs", ["hubs", "--quiet", "--json",  # the slowdown by size and load: the tables
              os.path.join(SRC, "tests", "scenarios", "hubs-two-fabric.xml"), "--set",
              "hubs/@keys=interfered-size-load"], {0}),
    ("hubs", ["hubs", "--quiet", "--json",  # moving running jobs: the moves' members
              os.path.join(SRC, "tests", "scenarios", "hubs-move-stream.xml")], {0}),
    ("calibrate", ["calibrate", "--quick", "--threads", "2", "--json"], {0}),
    ("goodput", ["goodput", "--json", "--steps", "3", "--replicas", "2"], {0}),
    ("step", ["step", "--json", SP], {0}),
    ("step", ["step", "--json", "--concurrent", "--flow-log", "5", LS], {0}),
    ("step", ["step", "--json", "--fail", "switch=2107", LS], {0}),
    ("step", ["step", "--json", "-q", "--network", "packet", "-o", "p.h5", LS] + SMALL, {0}),
    ("step", ["step", "--json", "--fail-classes", LS], {0}),
    ("topo", ["topo", "--json", SP], {0}),
    ("netbench", ["netbench", "--json", "--quiet", SP, "--ranks", "16", "--max", "1M",
                  "--factor", "64"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "send"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "incast", "--loss",
                  "selective", "--rto", "100us", "--bytes", "256K", "-o", "i.h5"], {0}),
    ("netbench", ["netbench", "--json", SP, "--tier", "packet", "--op", "incast", "--ranks", "9",
                  "--bytes", "1M", "--buffer", "1MB", "--ibcc",
                  "threshold=100KB,marking-rate=0,increase=1,limit=127,timer=10us,step=20ns"],
     {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "incast", "--dcqcn",
                  "--bytes", "256K"], {0, 2}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "send", "--reorder",
                  "in-order", "--rto", "100us"], {0}),
    ("netbench", ["netbench", "--json", ex("dragonfly-16k.xml"), "--tier", "packet", "--op",
                  "alltoall", "--ranks", "20", "--bytes", "8K", "--buffer", "1MB", "--adaptive"],
     {0}),
    ("netbench", ["netbench", "--json", ex("dragonfly-16k.xml"), "--tier", "packet", "--op",
                  "allreduce", "--ranks", "20", "--bytes", "64K", "--buffer", "1MB",
                  "--adaptive"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "allreduce",
                  "--ranks", "4", "--bytes", "256K"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "incast-sweep",
                  "--ranks", "5", "--bytes", "64K"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "victim",
                  "--bytes", "1M"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "stall",
                  "--bytes", "1M"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "collision",
                  "--bytes", "2M"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "lossy", "--ranks", "5",
                  "--bytes", "64K", "--rto", "20us"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "reorder",
                  "--bytes", "1M", "--rto", "20us"], {0}),
    ("netbench", ["netbench", "--json", LS, "--tier", "packet", "--op", "fidelity",
                  "--bytes", "256K"], {0}),
    ("compare", ["compare", "--json", "--vary", "site=guian,qingyang"], {0}),
    ("compare", ["compare", "--json", "--vary", "site=guian", "--replicas", "3"], {0}),
    ("compare", ["compare", "--json", "--vary", "site=guian", SP, ex("dragonfly-16k.xml")], {0}),
    ("compare", ["compare", "--json", ex("cluster-two-sites-month.xml"), "--vary",
                 "cluster-jobs/scheduler/@policy=fifo,easy-backfill"], {0}),
    ("compare", ["compare", "--json", ex("cluster-interference-leafspine.xml"), "--vary",
                 "cluster-jobs/placement/@policy=first-fit,topology"], {0}),
    ("sweep", ["sweep", "--quiet", "--json", "--grid", "checkpoint/@interval=10min,20min",
               "-o", "s.h5"], {0}),
    ("sweep", ["sweep", "--quiet", "--json", ex("cluster-two-sites-month.xml"), "--grid",
               "cluster-jobs/scheduler/@policy=fifo,easy-backfill", "-o", "cs.h5"], {0}),
    ("compare", ["compare", "--json", ex("serving-llama3-70b-h100.xml"), "--set",
                 "serving/arrivals/@duration=60s", "--vary", "serving/arrivals/@rate=10/s,20/s",
                 "--vary", "site=horinger"], {0}),
    ("sweep", ["sweep", "--quiet", "--json", ex("serving-llama3-70b-h100.xml"), "--set",
               "serving/arrivals/@duration=60s", "--grid",
               "serving/arrivals/@rate=10/s,20/s", "-o", "ss.h5"], {0}),
    ("compare", ["compare", "--json", os.path.join(SRC, "tests", "scenarios", "serving-swap.xml"),
                 "--set", "serving/arrivals/@duration=30s", "--vary",
                 "serving/kv/@preemption=recompute,swap"], {0}),
    ("compare", ["compare", "--json",  # sessions: the sessions_* columns
                 os.path.join(SRC, "tests", "scenarios", "serving-sessions.xml"), "--vary",
                 "serving/sessions/@truncate=refuse,oldest", "--vary",
                 "serving/sessions/@turns=1,8"], {0}),
    ("sweep", ["sweep", "--quiet", "--json",
               os.path.join(SRC, "tests", "scenarios", "serving-sessions.xml"), "--grid",
               "serving/sessions/@truncate=refuse,oldest", "-o", "sss.h5"], {0}),
    ("compare", ["compare", "--json", os.path.join(SRC, "tests", "scenarios", "hubs-trace.xml"),
                 "--vary", "hubs/@policy=cheapest,latency-bounded"], {0}),
    ("compare", ["compare", "--json",  # fabrics at the hubs: the interference columns
                 os.path.join(SRC, "tests", "scenarios", "hubs-one-fabric.xml"),
                 "--vary", "@seed=7,8"], {0}),
    ("sweep", ["sweep", "--quiet", "--json",
               os.path.join(SRC, "tests", "scenarios", "hubs-trace.xml"), "--grid",
               "hubs/@policy=cheapest,nearest", "-o", "hs.h5"], {0}),
    ("compare", ["compare", "--json",  # a backbone and none: the backbone columns in one
                 os.path.join(SRC, "tests", "scenarios", "hubs-backbone-private.xml"),
                 os.path.join(SRC, "tests", "scenarios", "hubs-trace.xml"),
                 "--set", "hubs/@bandwidth=10Gbps"], {0}),
]


# ------------------------------------------------------------ the validator

def resolve(root, ref):
    if not ref.startswith("#/"):
        raise ValueError("only local references: %r" % ref)
    node = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def type_ok(x, t):
    if isinstance(t, list):
        return any(type_ok(x, u) for u in t)
    if t == "object":
        return isinstance(x, dict)
    if t == "array":
        return isinstance(x, list)
    if t == "string":
        return isinstance(x, str)
    if t == "boolean":
        return isinstance(x, bool)
    if t == "null":
        return x is None
    if t == "number":
        return isinstance(x, (int, float)) and not isinstance(x, bool)
    if t == "integer":
        return type_ok(x, "number") and float(x).is_integer()
    raise ValueError("unknown type %r" % t)


def validate(x, schema, root, path="$"):
    """The list of problems of x against schema (empty: valid)."""
    errs = []
    if "$ref" in schema:
        errs += validate(x, resolve(root, schema["$ref"]), root, path)
    if "oneOf" in schema:
        results = [validate(x, s, root, path) for s in schema["oneOf"]]
        ok = [r for r in results if not r]
        if len(ok) != 1:
            best = min(results, key=len) if results else []
            errs.append("%s: matches %d of the oneOf alternatives, not 1 (closest: %s)"
                        % (path, len(ok), "; ".join(best[:3])))
    if "type" in schema and not type_ok(x, schema["type"]):
        return errs + ["%s: %r is not of type %s" % (path, x, schema["type"])]
    if "enum" in schema and x not in schema["enum"]:
        errs.append("%s: %r is not one of %r" % (path, x, schema["enum"]))
    if "minimum" in schema and type_ok(x, "number") and x < schema["minimum"]:
        errs.append("%s: %r is below the minimum %r" % (path, x, schema["minimum"]))
    if isinstance(x, dict):
        props = schema.get("properties", {})
        for k in schema.get("required", []):
            if k not in x:
                errs.append("%s: required key %r missing" % (path, k))
        extra = schema.get("additionalProperties", True)
        for k, v in x.items():
            if k in props:
                errs += validate(v, props[k], root, "%s.%s" % (path, k))
            elif extra is False:
                errs.append("%s: key %r is not in the schema (add it to %s and docs/json.md)"
                            % (path, k, os.path.basename(SCHEMA_PATH)))
            elif isinstance(extra, dict):
                errs += validate(v, extra, root, "%s.%s" % (path, k))
    if isinstance(x, list) and "items" in schema:
        for i, v in enumerate(x):
            errs += validate(v, schema["items"], root, "%s[%d]" % (path, i))
    return errs


def closed_objects(schema, path="$schema"):
    """Object schemas that neither close nor type their extra keys."""
    bad = []
    if isinstance(schema, dict):
        if schema.get("type") == "object" and "additionalProperties" not in schema:
            bad.append(path)
        for k, v in schema.items():
            bad += closed_objects(v, path + "." + k)
    elif isinstance(schema, list):
        for i, v in enumerate(schema):
            bad += closed_objects(v, "%s[%d]" % (path, i))
    return bad


def self_test(root):
    """The validator refuses what it must (else the test could not fail)."""
    s = {"type": "object", "required": ["a"], "additionalProperties": False,
         "properties": {"a": {"type": "number", "minimum": 0},
                        "b": {"enum": ["x", "y"]},
                        "c": {"type": "array", "items": {"type": "integer"}},
                        "d": {"oneOf": [{"type": "string"}, {"type": "null"}]}}}
    good = {"a": 1.5, "b": "x", "c": [1, 2], "d": None}
    assert validate(good, s, s) == [], validate(good, s, s)
    for bad in ({"a": 1, "e": 0}, {"b": "x"}, {"a": "1"}, {"a": -1}, {"a": 1, "b": "z"},
                {"a": 1, "c": [1.5]}, {"a": True}, {"a": 1, "d": 3}):
        assert validate(bad, s, s), bad
    # and on the real schema: a dcsim/1 document with one key more is refused
    doc = collections.OrderedDict([("schema", "dcsim/1"), ("command", "topo"),
                                   ("dcsim_version", "0")])
    assert validate(doc, root, root), "an incomplete topo document passes"


def no_constants(name):
    raise ValueError("%s in JSON output" % name)


def main():
    with open(SCHEMA_PATH) as f:
        root = json.load(f)
    failures = []
    open_objects = closed_objects(root)
    if open_objects:
        failures.append("object schemas without additionalProperties: %s"
                        % ", ".join(open_objects[:5]))
    self_test(root)
    version = subprocess.run([DCSIM, "version"], capture_output=True, text=True,
                             check=True).stdout.split()[1]
    seen = collections.Counter()
    dump = os.environ.get("DCSIM_JSON_DUMP")
    env = dict(os.environ, OMP_NUM_THREADS="2")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (command, args, statuses) in enumerate(CASES):
            what = "dcsim " + " ".join(os.path.relpath(a, SRC) if a.startswith(SRC) else a
                                       for a in args)
            for attempt in range(3):  # calibrate times this machine: a busy one can fail a fit
                p = subprocess.run([DCSIM] + args, capture_output=True, text=True, cwd=tmp,
                                   env=env, timeout=600)
                if p.returncode in statuses or command != "calibrate":
                    break
            if p.returncode not in statuses:
                failures.append("%s: exit %d: %s" % (what, p.returncode, p.stderr.strip()))
                continue
            try:
                doc = json.loads(p.stdout, object_pairs_hook=collections.OrderedDict,
                                 parse_constant=no_constants)
            except ValueError as e:
                failures.append("%s: not one JSON document: %s" % (what, e))
                continue
            if dump:
                with open(os.path.join(dump, "%02d-%s.json" % (i, command)), "w") as f:
                    f.write(p.stdout)
            head = list(doc.items())[:3]
            if head != [("schema", "dcsim/1"), ("command", command),
                        ("dcsim_version", version)]:
                failures.append("%s: the envelope is %r" % (what, head))
            alternatives = [a["$ref"] for a in root["oneOf"]
                            if command in resolve(root, a["$ref"])["properties"]["command"]["enum"]]
            errs = validate(doc, root, root)
            if errs:  # say why against the command's own alternatives
                for ref in alternatives:
                    e = validate(doc, resolve(root, ref), root)
                    failures += ["%s: %s: %s" % (what, ref, x) for x in e[:8]]
                if not alternatives:
                    failures += ["%s: %s" % (what, x) for x in errs[:8]]
                continue
            for ref in alternatives:
                if not validate(doc, resolve(root, ref), root):
                    seen[ref] += 1
    unseen = [a["$ref"] for a in root["oneOf"] if not seen[a["$ref"]]]
    if unseen:
        failures.append("schema alternatives no case produced: %s" % ", ".join(unseen))
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("ok: json schema, %d documents of %d kinds valid" % (sum(seen.values()), len(seen)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
