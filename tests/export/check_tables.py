#!/usr/bin/env python3
"""check_tables.py - export --format csv and ndjson loaded into a real
database, Debian's sqlite3 shell (its .import --csv for CSV, its JSON
functions for NDJSON), with row counts equal to the capture's tables and
run_id and host on every row; a --pid scope keeps only that process."""
import os
import shutil
import subprocess
import sys
import tempfile

from lib import fail, fixture, import_db, query, run

COUNTS = {
    'samples': 'SELECT count(*) FROM samples',
    'stacks': 'SELECT count(*) FROM stack_frames',
    'thread_states': 'SELECT count(*) FROM thread_states',
    'offcpu': 'SELECT count(*) FROM offcpu',
    'syscalls': 'SELECT count(*) FROM syscalls',
    'requests': 'SELECT count(*) FROM requests',
    'block_io': 'SELECT count(*) FROM block_io',
    'locks': "SELECT (SELECT count(*) FROM futex_calls WHERE kind = 'wait')"
             " + (SELECT count(*) FROM user_mutexes) + (SELECT count(*) FROM kernel_locks)",
    'probes': 'SELECT count(*) FROM probe_hits',
}


def sqlite3_shell(db, script):
    p = subprocess.run(['sqlite3', '-batch', '-bail', db], input=script.encode(),
                       capture_output=True)
    if p.returncode != 0:
        fail('sqlite3: %s' % p.stderr.decode())
    return p.stdout.decode().split()


def load_csv(directory, target):
    script = ''.join(".import --csv '%s/%s.csv' %s\n" % (directory, t, t) for t in COUNTS)
    script += ''.join("SELECT count(*), sum(run_id = '' OR run_id IS NULL), count(DISTINCT host)"
                      " FROM %s;\n" % t for t in COUNTS)
    return sqlite3_shell(target, script)


def load_ndjson(directory, target):
    script = ''
    for t in COUNTS:
        path = '%s/%s.ndjson' % (directory, t)
        # every line must be a JSON object; sqlite3 parses them
        script += ("CREATE TABLE %s AS SELECT value AS line FROM json_each("
                   "'[' || replace(rtrim(CAST(readfile('%s') AS TEXT), char(10)), char(10), ',')"
                   " || ']');\n" % (t, path))
    script += ''.join("SELECT count(*), sum(json_extract(line, '$.run_id') = ''),"
                      " count(DISTINCT json_extract(line, '$.host')) FROM %s;\n" % t
                      for t in COUNTS)
    return sqlite3_shell(target, script)


def check(name, work, fmt, extra=(), where=''):
    db = import_db(fixture(name), work)
    out = os.path.join(work, '%s-%s%s' % (name, fmt, len(extra)))
    run(['export', '--format', fmt, '-o', out] + list(extra) + [db])
    loaded = (load_csv if fmt == 'csv' else load_ndjson)(out, os.path.join(out, 'load.db'))
    for i, t in enumerate(COUNTS):
        n, empty_run, hosts = loaded[i].split('|')
        sql = COUNTS[t]
        if where and t == 'samples':
            sql += ' WHERE ' + where
        want = query(db, sql)[0][0]
        if int(n) != want:
            fail('%s %s %s: %s rows, database %d' % (name, fmt, ' '.join(extra), n, want))
        if int(n) and (empty_run not in ('0', '') or hosts != '1'):
            fail('%s %s: %s: run_id or host missing' % (name, fmt, t))
    print('ok %s %s %s: %s' % (name, fmt, ' '.join(extra),
                               ', '.join('%s %s' % (t, loaded[i].split('|')[0])
                                         for i, t in enumerate(COUNTS))))


def main():
    if not shutil.which('sqlite3'):
        print('skip: the sqlite3 shell is not installed')
        sys.exit(77)
    with tempfile.TemporaryDirectory() as work:
        for name in ('real-mix.perfcap', 'real-lock.perfcap', 'synthetic-samples.perfcap'):
            check(name, work, 'csv')
            check(name, work, 'ndjson')
        check('synthetic-events.perfcap', work, 'ndjson')
        check('synthetic-samples.perfcap', work, 'csv', ['--pid', '1001'], 'pid = 1001')


if __name__ == '__main__':
    main()
