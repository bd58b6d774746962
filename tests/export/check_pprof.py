#!/usr/bin/env python3
"""check_pprof.py - export --format pprof checked with decoders perfcap did
not write: protoc --decode=perftools.profiles.Profile with pprof's own
profile.proto (Debian golang-github-google-pprof-dev). The values must
add up to the database's counts, every id referenced must be defined,
and each leaf function's samples must equal report --folded's."""
import collections
import gzip
import os
import subprocess
import sys
import tempfile

import json

from lib import fail, fixture, import_db, npm_modules, parse_text_format, query, run

PROTO = os.environ.get('PPROF_PROTO',
                       '/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto')


def decode(path):
    data = gzip.open(path).read()
    p = subprocess.run(['protoc', '--decode=perftools.profiles.Profile',
                        '-I' + os.path.dirname(PROTO), PROTO],
                       input=data, capture_output=True)
    if p.returncode != 0:
        fail('protoc could not decode %s: %s' % (path, p.stderr.decode()))
    return parse_text_format(p.stdout.decode())


def ids_defined(prof):
    """Every location, function and mapping referenced exists, ids nonzero."""
    locs = {l['id'][0]: l for l in prof.get('location', [])}
    funcs = {f['id'][0] for f in prof.get('function', [])}
    maps = {m['id'][0] for m in prof.get('mapping', [])}
    if 0 in locs or 0 in funcs or 0 in maps:
        fail('an id is 0')
    strings = prof['string_table']
    if strings[0] != '':
        fail('string_table[0] is not empty')
    for s in prof.get('sample', []):
        for lid in s.get('location_id', []):
            if lid not in locs:
                fail('sample refers to undefined location %d' % lid)
    for l in locs.values():
        if l.get('mapping_id', [0])[0] not in maps:
            fail('location %d has no mapping' % l['id'][0])
        for line in l.get('line', []):
            if line['function_id'][0] not in funcs:
                fail('location %d refers to undefined function' % l['id'][0])
    return locs


def types(prof):
    s = prof['string_table']
    return [(s[t.get('type', [0])[0]], s[t.get('unit', [0])[0]]) for t in prof['sample_type']]


def leaf_counts(prof, locs):
    s = prof['string_table']
    funcs = {f['id'][0]: s[f.get('name', [0])[0]] for f in prof['function']}
    out = collections.Counter()
    for smp in prof.get('sample', []):
        v = smp['value'][0] if smp.get('value') else 0
        if v and smp.get('location_id'):
            leaf = locs[smp['location_id'][0]]['line'][0]['function_id'][0]
            out[funcs[leaf]] += v
    return out


def folded_leaf_counts(capture):
    out = collections.Counter()
    for line in run(['report', '--folded', capture]).stdout.decode().splitlines():
        stack, _, count = line.rpartition(' ')
        frames = stack.split(';')
        if len(frames) > 1:
            leaf = frames[-1]  # folded marks kernel functions with _[k]
            out[leaf[:-4] if leaf.endswith('_[k]') else leaf] += int(count)
    return out


def value_sums(prof):
    sums = [0] * len(prof['sample_type'])
    for smp in prof.get('sample', []):
        for i, v in enumerate(smp.get('value', [])):
            sums[i] += v
    return sums


def check_capture(name, work):
    capture = fixture(name)
    db = import_db(capture, work)
    out = os.path.join(work, name + '.pb.gz')
    run(['export', '--format', 'pprof', '-o', out, db])
    if os.stat(out).st_mode & 0o777 != 0o600:
        fail('%s: mode is not 0600' % out)
    prof = decode(out)
    locs = ids_defined(prof)
    want = [('samples', 'count'), ('cpu', 'nanoseconds'), ('off_cpu', 'nanoseconds'),
            ('lock_wait', 'nanoseconds'), ('io_wait', 'nanoseconds')]
    if types(prof) != want:
        fail('%s: sample types %s' % (name, types(prof)))
    sums = value_sums(prof)
    samples = query(db, 'SELECT COALESCE(sum(count), 0) FROM sample_counts')[0][0]
    offcpu = query(db, 'SELECT COALESCE(sum(duration), 0) FROM offcpu')[0][0]
    futex = query(db, "SELECT COALESCE(sum(duration), 0) FROM offcpu"
                      " WHERE wait_class = 'futex'")[0][0]
    klock = query(db, 'SELECT COALESCE(sum(duration), 0) FROM kernel_locks')[0][0]
    io = query(db, "SELECT COALESCE(sum(duration), 0) FROM offcpu"
                   " WHERE wait_class = 'block_io'")[0][0]
    if sums[0] != samples:
        fail('%s: samples %d, database %d' % (name, sums[0], samples))
    if sums[2] != offcpu or sums[3] != futex + klock or sums[4] != io:
        fail('%s: wait sums %s, database off-CPU %d lock %d io %d'
             % (name, sums, offcpu, futex + klock, io))
    if samples and leaf_counts(prof, locs) != folded_leaf_counts(db):
        fail('%s: leaf functions differ from report --folded:\n%s\n%s'
             % (name, leaf_counts(prof, locs).most_common(5),
                folded_leaf_counts(db).most_common(5)))
    print('ok %s: %d samples, %d locations, off-CPU %d ns' % (name, samples, len(locs), offcpu))
    return prof, db


def check_labels_and_window(prof, db, work):
    s = prof['string_table']
    keys = {s[l['key'][0]] for smp in prof['sample'] for l in smp.get('label', [])}
    for k in ('pid', 'tid', 'comm', 'thread_state'):
        if k not in keys:
            fail('label %s missing (have %s)' % (k, sorted(keys)))
    builds = [s[m['build_id'][0]] for m in prof['mapping'] if m.get('build_id')]
    if query(db, 'SELECT count(*) FROM maps WHERE build_id IS NOT NULL')[0][0] and not builds:
        fail('no mapping carries a build-id')
    out = os.path.join(work, 'window.pb.gz')
    run(['export', '--format', 'pprof', '--from', '100ms', '--to', '400ms', '-o', out, db])
    start = int(query(db, "SELECT value FROM meta WHERE key = 'record.start_ns'")[0][0])
    n = query(db, 'SELECT count(*) FROM samples WHERE ts >= ? AND ts < ?',
              (start + 100000000, start + 400000000))[0][0]
    if value_sums(decode(out))[0] != n:
        fail('window: samples differ from the database (%d)' % n)
    print('ok labels %s, %d build-ids, window %d samples' % (sorted(keys), len(builds), n))


def check_node(path, prof):
    """The npm package pprof-format reads the file back to the same sums."""
    modules = npm_modules()
    if not modules:
        return
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.run(['node', os.path.join(here, 'read_pprof.js'), path],
                       capture_output=True, env=dict(os.environ, NODE_PATH=modules))
    if p.returncode != 0:
        fail('pprof-format could not read %s: %s' % (path, p.stderr.decode()))
    got = json.loads(p.stdout)
    if got['sums'] != value_sums(prof) or got['locations'] != len(prof['location']):
        fail('pprof-format reads sums %s, protoc %s' % (got['sums'], value_sums(prof)))
    print('ok pprof-format: %d functions, sums %s' % (len(got['functions']), got['sums']))


def main():
    import shutil
    if not shutil.which('protoc') or not os.path.exists(PROTO):
        print('skip: protoc or pprof\'s profile.proto (golang-github-google-pprof-dev) missing')
        sys.exit(77)
    p = run(['export', '--format', 'pprof', '-o', os.devnull, fixture('golden-v1.perfcap')],
            ok=False)
    if p.returncode != 0 and b'built without protobuf-c' in p.stderr:
        print('skip: ' + p.stderr.decode().strip())
        sys.exit(77)
    with tempfile.TemporaryDirectory() as work:
        for name in ('synthetic-samples.perfcap', 'golden-v1.perfcap', 'real-lock.perfcap'):
            check_capture(name, work)
        prof, db = check_capture('real-mix.perfcap', work)
        check_labels_and_window(prof, db, work)
        check_node(os.path.join(work, 'real-mix.perfcap.pb.gz'), prof)


if __name__ == '__main__':
    main()
