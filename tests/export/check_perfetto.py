#!/usr/bin/env python3
"""check_perfetto.py - export --format perfetto decoded by protoc: the
wire format (--decode_raw) and perfcap's schema of Perfetto's fields
(analyze/export/perfetto_trace.proto, checked once by hand to decode
identically with Perfetto's own protos/perfetto/trace/trace.proto). Thread
tracks carry the database's threads and names; the slices of each
thread's state track add up to thread_states per thread and state; there
is one PerfSample per sample, every callstack and frame it names is
interned, and the innermost frames match report --folded."""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

from lib import fail, fixture, import_db, parse_text_format, query, run

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'analyze',
                      'export', 'perfetto_trace.proto')


def decode(path):
    data = open(path, 'rb').read()
    raw = subprocess.run(['protoc', '--decode_raw'], input=data, capture_output=True)
    if raw.returncode != 0:
        fail('protoc --decode_raw: %s' % raw.stderr.decode())
    p = subprocess.run(['protoc', '--decode=perfetto.protos.Trace',
                        '-I' + os.path.dirname(SCHEMA), SCHEMA], input=data,
                       capture_output=True)
    if p.returncode != 0:
        fail('protoc --decode: %s' % p.stderr.decode())
    return parse_text_format(p.stdout.decode()).get('packet', [])


def one(msg, key, default=None):
    return msg.get(key, [default])[0]


def check_tracks(name, db, packets):
    threads, state_tracks = {}, set()
    for pk in packets:
        for td in pk.get('track_descriptor', []):
            if 'thread' in td:
                t = td['thread'][0]
                threads[one(t, 'tid')] = one(t, 'thread_name', '')
            elif one(td, 'name') == 'state':
                state_tracks.add(one(td, 'uuid'))
    want = {tid for (tid,) in query(db, 'SELECT DISTINCT tid FROM thread_state_rows'
                                        ' UNION SELECT DISTINCT tid FROM samples'
                                        ' UNION SELECT DISTINCT tid FROM syscalls')}
    if not want <= set(threads):
        fail('%s: threads without a track: %s' % (name, sorted(want - set(threads))[:5]))
    # the latest name of each thread, as names.c takes it
    named = dict(query(db, "SELECT tid, comm FROM threads t WHERE comm <> '' AND rowid ="
                           " (SELECT rowid FROM threads WHERE tid = t.tid AND comm <> ''"
                           " ORDER BY ts DESC, rowid DESC LIMIT 1)"))
    for tid, comm in named.items():
        if tid in threads and threads[tid] != comm:
            fail('%s: thread %d named %r, database %r' % (name, tid, threads[tid], comm))
    return state_tracks


def state_totals(packets, state_tracks):
    open_slices, totals = {}, collections.Counter()
    events = [(one(pk, 'timestamp'), i, pk['track_event'][0])
              for i, pk in enumerate(packets) if 'track_event' in pk]
    for ts, _, ev in sorted(events):
        track = one(ev, 'track_uuid')
        if track not in state_tracks:
            continue
        if one(ev, 'type') == 'TYPE_SLICE_BEGIN':
            open_slices[track] = (ts, one(ev, 'name'))
        elif one(ev, 'type') == 'TYPE_SLICE_END':
            start, state = open_slices.pop(track)
            totals[(track & 0xfffffff, state)] += ts - start
    return totals


def check_samples(name, db, packets):
    frames, names, stacks, leaves, n = {}, {}, {}, collections.Counter(), 0
    for pk in packets:
        for data in pk.get('interned_data', []):
            for s in data.get('function_names', []):
                names[one(s, 'iid')] = one(s, 'str')
            for f in data.get('frames', []):
                frames[one(f, 'iid')] = one(f, 'function_name_id')
            for c in data.get('callstacks', []):
                stacks[one(c, 'iid')] = c.get('frame_ids', [])
        for ps in pk.get('perf_sample', []):
            n += 1
            cs = one(ps, 'callstack_iid')
            if cs not in stacks or any(f not in frames for f in stacks[cs]):
                fail('%s: a sample names an undefined callstack or frame' % name)
            if stacks[cs]:
                leaves[names[frames[stacks[cs][-1]]]] += 1
    if n != query(db, 'SELECT count(*) FROM samples')[0][0]:
        fail('%s: %d PerfSamples, database %d' % (name, n, query(db, 'SELECT count(*) FROM samples')[0][0]))
    folded = collections.Counter()
    for line in run(['report', '--folded', db]).stdout.decode().splitlines():
        stack, _, count = line.rpartition(' ')
        frames_ = stack.split(';')
        if len(frames_) > 1:
            leaf = frames_[-1]
            folded[leaf[:-4] if leaf.endswith('_[k]') else leaf] += int(count)
    if leaves != folded:
        fail('%s: innermost frames %s, report --folded %s'
             % (name, leaves.most_common(3), folded.most_common(3)))
    return n


def check(name, work):
    db = import_db(fixture(name), work)
    out = os.path.join(work, name + '.pftrace')
    run(['export', '--format', 'perfetto', '-o', out, db])
    packets = decode(out)
    state_tracks = check_tracks(name, db, packets)
    got = state_totals(packets, state_tracks)
    want = collections.Counter({(tid, state): d for tid, state, d in query(
        db, 'SELECT tid, state, sum(duration) FROM thread_states GROUP BY 1, 2')})
    if +got != +want:
        fail('%s: state totals differ: %s' % (name, sorted((+got - +want).items())[:5]))
    n = check_samples(name, db, packets)
    print('ok %s: %d packets, %d thread states, %d samples' % (name, len(packets), len(want), n))


def main():
    if not shutil.which('protoc'):
        print('skip: protoc (protobuf-compiler) is not installed')
        sys.exit(77)
    p = run(['export', '--format', 'perfetto', '-o', os.devnull, fixture('golden-v1.perfcap')],
            ok=False)
    if p.returncode != 0 and b'built without protobuf-c' in p.stderr:
        print('skip: ' + p.stderr.decode().strip())
        sys.exit(77)
    with tempfile.TemporaryDirectory() as work:
        for name in ('real-mix.perfcap', 'real-lock.perfcap', 'golden-v1.perfcap'):
            check(name, work)


if __name__ == '__main__':
    main()
