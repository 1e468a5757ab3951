#!/usr/bin/python3
"""robust.py - hostile --set values for every attribute of every example scenario.

For every attribute of every scenario in scenarios/*.xml and
scenarios/examples/*.xml (default.xml is the built-in scenario, run with no
file), each value of a table of hostile values (0, negative, NaN, inf, 1e308,
1e-308, 2^64 + 1, empty, a unit of the wrong dimension, an unknown unit,
10,000 characters, invalid UTF-8; the numbers bare and with the attribute's
own unit) is injected with --set PATH=VALUE into `dcsim validate`,
`dcsim run --quiet --json` and, on scenarios with a <fabric>, `dcsim step`.
Each run is bounded (5 s wall, or 5 times what the unmodified command takes
on this machine now if longer: the step tier takes seconds on a loaded
machine; 4 GiB of address space) and must end
  exit 0 with finite output (no nan/inf words on stdout; with --json every
  number finite) and nothing on stderr but "FILE:LINE: warning:" lines, or
  exit 2 with exactly one line on stderr (besides such warnings of a
  scenario that loaded before the error).
Anything else is a failure: crash (signal), hang (timeout), bad exit (1 or
other), bad error (exit 2 but not one line), bad output (non-finite).

  robust.py DCSIM [--full] [--sample N] [--seed S] [--jobs J] [--known FILE]
            [--timeout S] [--no-mem-cap] [--match PATTERN] [--list] [--report FILE]

Default: a fixed-seed sample of N inputs (CI); --full: every input.
Failures whose id matches a line of tests/robust/known.txt (fnmatch
pattern, then " | reason") are known: listed, not failing. Exit 1 when an
unknown failure remains, 2 on bad usage.
"""
import argparse
import fnmatch
import json
import math
import os
import random
import re
import resource
import shlex
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TIMEOUT_S = 5.0
MEM_BYTES = 4 << 30
STEP_READS = ('cluster/', 'job/', '@')

NUM_RE = re.compile(r'^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*)$')


def hostile_values(orig):
    """(key, value bytes) pairs for an attribute whose value is orig."""
    m = NUM_RE.match(orig)
    unit = m.group(2) if m else ''
    # a multiplier suffix (16K, 15.6T) is not a unit a number needs
    bare = [('zero', '0'), ('neg', '-1'), ('negzero', '-0'), ('nan', 'nan'),
            ('inf', 'inf'), ('neginf', '-inf'), ('big', '1e308'), ('tiny', '1e-308'),
            ('huge-int', '18446744073709551617'), ('empty', ''),
            ('space', ' '), ('frac', '0.5')]
    out = [(k, v.encode()) for k, v in bare]
    if unit:
        for k, v in bare[:9]:
            out.append((k + '+unit', (v + unit).encode()))
        out.append(('over-frac+unit', ('1e-30' + unit).encode()))
    out += [('time', b'10min'), ('bandwidth', b'400Gb/s'), ('power', b'700W'),
            ('bytes', b'80GB'), ('percent', b'150%'), ('unknown-unit', b'7furlong'),
            ('overlong-num', b'9' * 10000), ('overlong-text', b'x' * 10000),
            ('bad-utf8', b'1\xff\xfe'), ('bad-utf8-unit', b'1\xc3(' + unit.encode())]
    return out


def attributes(path):
    """(xpath for --set, attribute, value) of every attribute below <dcsim>."""
    root = ET.parse(path).getroot()
    out = []

    def walk(el, prefix):
        for a, v in el.attrib.items():
            if a.startswith('{'):
                continue
            out.append((prefix + '@' + a, v))
        counts = {}
        for c in el:
            if isinstance(c.tag, str):
                counts[c.tag] = counts.get(c.tag, 0) + 1
        seen = {}
        for c in el:
            if not isinstance(c.tag, str) or c.tag.startswith('{'):
                continue
            seen[c.tag] = seen.get(c.tag, 0) + 1
            name = c.tag + ('[%d]' % seen[c.tag] if counts[c.tag] > 1 else '')
            walk(c, prefix + name + '/')

    walk(root, '')
    return out


def has_fabric(path):
    return ET.parse(path).getroot().find('.//fabric') is not None


def scenarios():
    """(label, file or None for the built-in one, path) of every scenario."""
    out = []
    for d in ('scenarios', 'scenarios/examples'):
        full = os.path.join(ROOT, d)
        for f in sorted(os.listdir(full)):
            if not f.endswith('.xml'):
                continue
            p = os.path.join(full, f)
            if ET.parse(p).getroot().tag != 'dcsim':
                continue
            rel = os.path.join(d, f)
            out.append(('built-in' if f == 'default.xml' else rel,
                        None if f == 'default.xml' else rel, p))
    return out


def is_serving(path):
    with open(path, 'rb') as f:
        return b'<serving' in f.read()


def is_cluster(path):
    with open(path, 'rb') as f:
        return b'<cluster-jobs' in f.read()


def inputs():
    """Every input: (id, argv after dcsim as bytes list)."""
    out = []
    for label, rel, path in scenarios():
        cmds = [('validate', ['validate']), ('run', ['run', '--quiet', '--json'])]
        if is_serving(path):  # an inference fleet: dcsim serve
            cmds = [('validate', ['validate']), ('serve', ['serve', '--quiet', '--json'])]
        elif is_cluster(path):  # a job stream: dcsim cluster
            cmds = [('validate', ['validate']), ('cluster', ['cluster', '--quiet', '--json'])]
        elif has_fabric(path):
            cmds.append(('step', ['step']))
        for xpath, value in attributes(path):
            for key, hv in hostile_values(value):
                for cname, cargs in cmds:
                    if cname == 'validate' and rel is None:
                        continue  # validate needs a file; run covers the built-in
                    if cname == 'step' and not xpath.startswith(STEP_READS):
                        continue  # step reads the cluster and the job only
                    argv = [a.encode() for a in cargs]
                    if rel:
                        argv.append(rel.encode())
                    argv += [b'--set', xpath.encode() + b'=' + hv]
                    out.append(('%s %s %s %s' % (cname, label, xpath, key), argv))
    return out


def shell_word(b):
    try:
        s = b.decode('utf-8')
    except UnicodeDecodeError:
        return "$'" + ''.join(chr(c) if 32 <= c < 127 and chr(c) not in "'\\" else '\\x%02x' % c
                              for c in b) + "'"
    if len(s) > 200:
        m = re.match(r'^(.*?=)(.)\2*(.*)$', s, re.S)
        if m and len(s) - len(m.group(1)) - len(m.group(3)) > 100:
            n = len(s) - len(m.group(1)) - len(m.group(3))
            return '"%s$(printf %%0%ds | tr 0 %s)%s"' % (m.group(1), n, m.group(2), m.group(3)) \
                if m.group(2) != '0' else '%s"$(printf %%0%dd 0)"%s' % (
                    shlex.quote(m.group(1)), n, shlex.quote(m.group(3)) if m.group(3) else '')
    return shlex.quote(s)


def command_line(dcsim, argv):
    return ' '.join([shell_word(dcsim.encode())] + [shell_word(a) for a in argv])


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEM_BYTES, MEM_BYTES))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


NONFINITE_RE = re.compile(rb'(?i)(?<![A-Za-z_])(nan|-?inf(inity)?)(?![A-Za-z_])')


def json_nonfinite(text):
    bad = []

    def const(name):
        bad.append(name)
        return 0.0

    def walk(x, where):
        if isinstance(x, float) and not math.isfinite(x):
            bad.append(where)
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(v, where + '.' + k)
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, '%s[%d]' % (where, i))
    try:
        walk(json.loads(text, parse_constant=const), '')
    except ValueError as e:
        return 'stdout is not JSON: %s' % e
    return ('non-finite numbers in JSON: ' + ', '.join(bad[:5])) if bad else None


def check(job):
    """Run one input; returns (id, kind, detail, seconds). kind: ok, error, or a failure."""
    ident, dcsim, argv, timeout_s, mem_cap = job
    env = dict(os.environ, OMP_NUM_THREADS='1', LC_ALL='C')
    t0 = time.monotonic()
    try:
        p = subprocess.run([dcsim.encode()] + argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=timeout_s,
                           preexec_fn=limit_memory if mem_cap else no_core)
    except subprocess.TimeoutExpired:
        return ident, 'hang', 'no exit within %g s' % timeout_s, time.monotonic() - t0
    took = time.monotonic() - t0
    err = p.stderr.decode('utf-8', 'replace')
    if p.returncode < 0:
        return ident, 'crash', 'signal %d; stderr: %s' % (-p.returncode, err.strip()[-300:]), took
    if p.returncode == 2:
        # a scenario that loaded may have warned first (a group across
        # scale-up domains); the error itself is one line
        lines = [l for l in p.stderr.splitlines() if b': warning: ' not in l]
        if len(lines) == 1 and p.stderr.endswith(b'\n'):
            # an error's numbers are computed too: never nan or inf (the
            # injected value, echoed, is not one of them)
            value = argv[-1].split(b'=', 1)[1] if b'=' in argv[-1] else b''
            line = lines[0].replace(value, b'') if value else lines[0]
            if NONFINITE_RE.search(line):
                return ident, 'bad-error', 'non-finite in the error: %s' % lines[0][:300].decode(
                    'utf-8', 'replace'), took
            return ident, 'error', lines[0][:200].decode('utf-8', 'replace'), took
        return ident, 'bad-error', 'exit 2 with %d stderr lines, %d stdout bytes: %s' % (
            len(lines), len(p.stdout), err.strip()[:300]), took
    if p.returncode != 0:
        return ident, 'bad-exit', 'exit %d; stderr: %s' % (p.returncode, err.strip()[:300]), took
    out = p.stdout
    # the injected value may be echoed (a name); it is not a computed number
    value = argv[-1].split(b'=', 1)[1]
    if value:
        out = out.replace(value, b'')
    if b'--json' in argv:
        problem = json_nonfinite(p.stdout.decode('utf-8', 'replace'))
        if problem:
            return ident, 'bad-output', problem, took
    m = NONFINITE_RE.search(out)
    if m:
        line = out[max(0, out.rfind(b'\n', 0, m.start()) + 1):out.find(b'\n', m.end())]
        return ident, 'bad-output', 'non-finite on stdout: %s' % line.decode(
            'utf-8', 'replace').strip()[:200], took
    # a success may warn (one "FILE:LINE: warning: ..." line each, e.g. an MFU
    # given with a fabric), but print nothing else on stderr
    other = [l for l in p.stderr.splitlines() if b': warning: ' not in l]
    if other:
        return ident, 'bad-output', 'exit 0 but stderr: %s' % err.strip()[:200], took
    return ident, 'ok', '', took


def load_known(path):
    known = []
    if not os.path.exists(path):
        return known
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            pattern, _, reason = line.partition(' | ')
            known.append((pattern.strip(), reason.strip()))
    return known


KINDS = ('crash', 'hang', 'bad-exit', 'bad-error', 'bad-output')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('dcsim')
    ap.add_argument('--full', action='store_true', help='every input, not a sample')
    ap.add_argument('--sample', type=int, default=250, help='inputs in the sample (default 250)')
    ap.add_argument('--seed', type=int, default=20261201, help='sample seed')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--known', default=os.path.join(HERE, 'known.txt'))
    ap.add_argument('--list', action='store_true', help='print the input ids and exit')
    ap.add_argument('--match', help='only inputs whose id matches this fnmatch pattern')
    ap.add_argument('--report', help='write every failure as JSON lines to this file')
    ap.add_argument('--timeout', type=float, default=TIMEOUT_S,
                    help='least seconds per run (default %g)' % TIMEOUT_S)
    ap.add_argument('--no-mem-cap', action='store_true',
                    help='no address-space cap (a sanitizer build reserves terabytes)')
    a = ap.parse_args()
    dcsim = os.path.abspath(a.dcsim)
    if not os.access(dcsim, os.X_OK):
        print('robust.py: %s is not an executable' % a.dcsim, file=sys.stderr)
        return 2
    todo = inputs()
    if a.match:
        todo = [t for t in todo if fnmatch.fnmatchcase(t[0], a.match)]
    if not a.full and len(todo) > a.sample:
        todo = random.Random(a.seed).sample(todo, a.sample)
        todo.sort(key=lambda t: t[0])
    if a.list:
        for ident, argv in todo:
            print(ident)
        return 0
    known = load_known(a.known)
    argv_of = dict(todo)
    # the time limit of each (command, scenario): 5 times its unmodified run
    base = {}
    for ident, argv in todo:
        key = tuple(argv[:-2])
        if key not in base:
            t0 = time.monotonic()
            subprocess.run([dcsim.encode()] + list(key), cwd=ROOT, capture_output=True,
                           env=dict(os.environ, OMP_NUM_THREADS='1'), timeout=300)
            base[key] = max(a.timeout, 5.0 * (time.monotonic() - t0))
    t0 = time.monotonic()
    counts = dict.fromkeys(('error', 'ok') + KINDS, 0)
    failures = []
    with ProcessPoolExecutor(max_workers=a.jobs) as pool:
        for ident, kind, detail, took in pool.map(
                check, [(i, dcsim, v, base[tuple(v[:-2])], not a.no_mem_cap) for i, v in todo],
                chunksize=4):
            counts[kind] += 1
            if kind in KINDS:
                failures.append((ident, kind, detail))
    wall = time.monotonic() - t0
    new, old = [], []
    for ident, kind, detail in failures:
        reason = next((r for p, r in known if fnmatch.fnmatchcase(ident, p)), None)
        (new if reason is None else old).append((ident, kind, detail, reason))
    for title, group in (('known failures', old), ('FAILURES', new)):
        if group:
            print('robust: %s:' % title)
        for ident, kind, detail, reason in group:
            print('  %s [%s] %s%s' % (ident, kind, detail, ' (known: %s)' % reason if reason else ''))
            print('    %s' % command_line(a.dcsim, argv_of[ident]))
    if a.report:
        with open(a.report, 'w', encoding='utf-8') as f:
            for ident, kind, detail, reason in old + new:
                f.write(json.dumps({'id': ident, 'kind': kind, 'detail': detail,
                                    'known': reason,
                                    'command': command_line(a.dcsim, argv_of[ident])}) + '\n')
    print('robust: %d inputs, %d clean errors, %d ok, %d crashes, %d hangs, %d bad outputs '
          '(%d bad exits, %d bad errors), %d known, %d new failures, %.0f s%s' % (
              len(todo), counts['error'], counts['ok'], counts['crash'], counts['hang'],
              counts['bad-output'], counts['bad-exit'], counts['bad-error'], len(old), len(new),
              wall, '' if a.full else ' (sample, seed %d)' % a.seed))
    return 1 if new else 0


if __name__ == '__main__':
    sys.exit(main())
