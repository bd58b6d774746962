#!/usr/bin/env python3
"""check_openmetrics.py - export --format openmetrics / prometheus checked
with Prometheus' own tools (Debian prometheus): promtool check metrics
lints the Prometheus text format output, promtool tsdb create-blocks-from
openmetrics backfills the OpenMetrics output with every sample line
accepted, and a Prometheus server started on 127.0.0.1 over those blocks
answers queries with the database's numbers (per-thread running time,
request count, losses)."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from lib import fail, fixture, import_db, query, run

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} (\S+) (\S+)$')


def parse(path):
    points = []
    for line in open(path):
        if line.startswith('#'):
            continue
        m = LINE.match(line.rstrip('\n'))
        if not m:
            fail('%s: unparsable line %r' % (path, line))
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        points.append((m.group(1), labels, float(m.group(3)), float(m.group(4))))
    return points


def last_values(points, name):
    """The latest value of each series of a metric."""
    out = {}
    for n, labels, value, ts in points:
        if n == name:
            out[tuple(sorted(labels.items()))] = value
    return out


def check_values(name, db, points):
    running = last_values(points, 'perfcap_thread_state_seconds_total')
    got = {}
    for key, v in running.items():
        labels = dict(key)
        if labels['state'] == 'running':
            got[int(labels['tid'])] = round(v * 1e9)
    want = dict(query(db, 'SELECT tid, sum(running_ns) FROM thread_time_shares GROUP BY tid'))
    if got != want:
        fail('%s: running time per thread %s, database %s' % (name, got, want))
    counts = last_values(points, 'perfcap_request_service_seconds_count')
    want_req = query(db, 'SELECT count(*) FROM requests')[0][0]
    if int(sum(counts.values())) != want_req:
        fail('%s: %d requests in the histogram, database %d' % (name, sum(counts.values()),
                                                               want_req))
    lost = sum(last_values(points, 'perfcap_events_lost_total').values())
    want_lost = query(db, 'SELECT COALESCE(sum(COALESCE(lost_kernel, 0)'
                          ' + COALESCE(lost_user, 0)), 0) FROM data_quality')[0][0]
    if lost != want_lost:
        fail('%s: %d events lost, database %d' % (name, lost, want_lost))
    return sum(want.values()) / 1e9, want_req


def promtool(args, stdin=None):
    p = subprocess.run(['promtool'] + args, stdin=stdin, capture_output=True)
    if p.returncode != 0:
        fail('promtool %s: %s%s' % (' '.join(args), p.stdout.decode(), p.stderr.decode()))
    return p.stdout.decode()


def backfill(om, tsdb, nlines):
    out = promtool(['tsdb', 'create-blocks-from', 'openmetrics', om, tsdb])
    rows = [l.split() for l in out.splitlines()[1:] if l.strip()]
    samples = sum(int(r[-4]) for r in rows)
    if samples != nlines:
        fail('backfill took %d samples of %d lines' % (samples, nlines))


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


def prom_query(port, expr, at):
    url = 'http://127.0.0.1:%d/api/v1/query?%s' % (port, urllib.parse.urlencode(
        {'query': expr, 'time': '%.3f' % at}))
    with urllib.request.urlopen(url, timeout=5) as r:
        result = json.load(r)['data']['result']
    return float(result[0]['value'][1]) if result else None


def serve_and_query(work, tsdb, at, running_s, requests):
    """Prometheus on loopback over the backfilled blocks."""
    config = os.path.join(work, 'prometheus.yml')
    open(config, 'w').write('global: {}\n')
    port = free_port()
    proc = subprocess.Popen(['prometheus', '--config.file=' + config,
                             '--storage.tsdb.path=' + tsdb,
                             '--storage.tsdb.retention.time=100y',
                             '--web.listen-address=127.0.0.1:%d' % port],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        running = None
        for _ in range(100):
            try:
                running = prom_query(port, 'sum(perfcap_thread_state_seconds_total'
                                           '{state="running"})', at)
                if running is not None:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        req = prom_query(port, 'sum(perfcap_request_service_seconds_count)', at)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    if running is None or abs(running - running_s) > 1e-6 or req != requests:
        fail('prometheus answers running %s s, requests %s; database %s s, %d'
             % (running, req, running_s, requests))
    print('ok prometheus on 127.0.0.1:%d: running %.6f s, %d requests' % (port, running, req))


def check(name, work, serve):
    db = import_db(fixture(name), work)
    om = os.path.join(work, name + '.om')
    prom = os.path.join(work, name + '.prom')
    run(['export', '--format', 'openmetrics', '-o', om, db])
    run(['export', '--format', 'prometheus', '-o', prom, db])
    if not open(om).read().endswith('# EOF\n'):
        fail('%s: no # EOF' % name)
    with open(prom) as f:
        promtool(['check', 'metrics'], stdin=f)
    points = parse(om)
    if len(points) != len(parse(prom)):
        fail('%s: openmetrics and prometheus outputs differ' % name)
    running_s, requests = check_values(name, db, points)
    tsdb = os.path.join(work, name + '.tsdb')
    backfill(om, tsdb, len(points))
    print('ok %s: %d points, promtool check metrics clean, backfilled' % (name, len(points)))
    if serve:
        serve_and_query(work, tsdb, max(p[3] for p in points), running_s, requests)


def main():
    if not shutil.which('promtool'):
        print('skip: promtool (Debian prometheus) is not installed')
        sys.exit(77)
    with tempfile.TemporaryDirectory() as work:
        check('real-lock.perfcap', work, False)
        check('synthetic-events.perfcap', work, False)
        check('real-mix.perfcap', work, shutil.which('prometheus') is not None)


if __name__ == '__main__':
    main()
