#!/usr/bin/env python3
"""check_speedscope.py - export --format speedscope validated against
speedscope's own file-format-schema.json (npm speedscope, pinned in
package-lock.json) with python3-jsonschema; each thread's weights add up
to its samples in the database times the sampling period, and the
request events nest and never go back in time (what speedscope's evented
importer requires)."""
import json
import os
import sys
import tempfile

from lib import fail, fixture, import_db, npm_modules, query, run


def schema():
    modules = npm_modules()
    path = modules and os.path.join(modules, 'speedscope', 'dist', 'release',
                                    'file-format-schema.json')
    if not path or not os.path.exists(path):
        print('skip: speedscope\'s file-format-schema.json is not installed')
        sys.exit(77)
    return json.load(open(path))


def check_events(prof):
    open_frames, last = [], 0
    for e in prof['events']:
        if e['at'] < last:
            fail('%s: event at %d goes back in time' % (prof['name'], e['at']))
        last = e['at']
        if e['type'] == 'O':
            open_frames.append(e['frame'])
        elif not open_frames or open_frames.pop() != e['frame']:
            fail('%s: close of a frame that is not the innermost open' % prof['name'])
    if open_frames or last > prof['endValue']:
        fail('%s: frames left open or events past endValue' % prof['name'])
    return sum(1 for e in prof['events'] if e['type'] == 'O')


def check_capture(name, work, validator):
    db = import_db(fixture(name), work)
    out = os.path.join(work, name + '.speedscope.json')
    run(['export', '--format', 'speedscope', '-o', out, db])
    doc = json.load(open(out))
    errors = sorted(validator.iter_errors(doc), key=str)
    if errors:
        fail('%s: not valid for speedscope\'s schema: %s' % (name, errors[0].message))
    freq = int(query(db, "SELECT value FROM meta WHERE key = 'sampling.cpu.freq_hz'")[0][0])
    period = 1000000000 // freq
    want = dict(((p, t), n * period) for p, t, n in
                query(db, 'SELECT pid, tid, sum(count) FROM sample_counts GROUP BY 1, 2'))
    got, requests, nframes = {}, 0, len(doc['shared']['frames'])
    for prof in doc['profiles']:
        if prof['type'] == 'sampled':
            tid, pid = [int(x) for x in
                        prof['name'].rsplit('(tid ', 1)[1].rstrip(')').split(', pid ')]
            got[(pid, tid)] = sum(prof['weights'])
            if len(prof['weights']) != len(prof['samples']) or \
                    prof['endValue'] != got[(pid, tid)]:
                fail('%s: %s: weights and samples differ' % (name, prof['name']))
            if any(f >= nframes for s in prof['samples'] for f in s):
                fail('%s: a sample refers to a frame not in shared.frames' % name)
        else:
            requests += check_events(prof)
    if got != want:
        fail('%s: per-thread weights %s, database %s' % (name, got, want))
    db_requests = query(db, 'SELECT count(*) FROM requests')[0][0] \
        if query(db, "SELECT 1 FROM sqlite_master WHERE name = 'requests'") else 0
    if requests > db_requests or (db_requests and not requests):
        fail('%s: %d request events, database %d requests' % (name, requests, db_requests))
    print('ok %s: %d profiles, %d threads, %d of %d requests'
          % (name, len(doc['profiles']), len(got), requests, db_requests))


def main():
    import jsonschema
    validator = jsonschema.Draft7Validator(schema())
    with tempfile.TemporaryDirectory() as work:
        for name in ('real-mix.perfcap', 'real-lock.perfcap', 'synthetic-samples.perfcap',
                     'golden-v1.perfcap'):
            check_capture(name, work, validator)


if __name__ == '__main__':
    main()
