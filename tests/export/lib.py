"""lib.py - helpers of the export tests: running perfcap-analyze, reading
an imported database with sqlite3, and parsing the text format protoc
--decode prints (protoc does the decoding; this only reads its text)."""
import fcntl
import os
import sqlite3
import subprocess
import sys

ANALYZE = os.environ.get('PERFCAP_ANALYZE', 'perfcap-analyze')
FIXTURES = os.environ.get('PERFCAP_FIXTURES', 'fixtures')


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def run(args, ok=True, **kw):
    p = subprocess.run([ANALYZE] + args, capture_output=True, **kw)
    if ok and p.returncode != 0:
        fail('%s: exit %d: %s' % (' '.join(args), p.returncode, p.stderr.decode()))
    return p


def import_db(capture, workdir):
    """The capture imported with perfcap-analyze import, opened read-only."""
    db = os.path.join(workdir, os.path.basename(capture) + '.db')
    if not os.path.exists(db):
        run(['import', capture, '-o', db])
    return db


def query(db, sql, params=()):
    con = sqlite3.connect('file:%s?mode=ro' % db, uri=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def fixture(name):
    return os.path.join(FIXTURES, name)


def parse_text_format(text):
    """protoc's text format as nested dicts of lists: {'field': [values]}."""
    root = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == '}':
            stack.pop()
        elif line.endswith('{'):
            child = {}
            stack[-1].setdefault(line[:-1].strip(), []).append(child)
            stack.append(child)
        else:
            key, _, value = line.partition(': ')
            if value.startswith('"'):
                value = bytes(value[1:-1], 'utf-8').decode('unicode_escape')
            elif value in ('true', 'false'):
                value = value == 'true'
            elif value.lstrip('-').isdigit():
                value = int(value)
            # else an enum name (TYPE_SLICE_BEGIN) or a float, kept as text
            stack[-1].setdefault(key, []).append(value)
    return root


def npm_modules():
    """node_modules with the pinned readers (package-lock.json here), made
    by npm ci in EXPORT_NPM_DIR (the build tree) once per lock file; None
    with a note when npm is missing or cannot install them."""
    here = os.path.dirname(os.path.abspath(__file__))
    target = os.environ.get('EXPORT_NPM_DIR')
    if not target:
        print('note: EXPORT_NPM_DIR not set: npm readers skipped')
        return None
    os.makedirs(target, exist_ok=True)
    # the export tests run in parallel: one installs, the others wait for
    # it (two npm ci in one directory fail each other: CI once skipped
    # export-speedscope so)
    with open(os.path.join(target, 'install.flock'), 'w') as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        return _installed(here, target)


def _installed(here, target):
    lock = open(os.path.join(here, 'package-lock.json'), 'rb').read()
    stamp = os.path.join(target, 'installed.lock')
    modules = os.path.join(target, 'node_modules')
    if os.path.exists(stamp) and open(stamp, 'rb').read() == lock:
        return modules
    for f in ('package.json', 'package-lock.json'):
        with open(os.path.join(target, f), 'wb') as out:
            out.write(open(os.path.join(here, f), 'rb').read())
    try:
        p = subprocess.run(['npm', 'ci', '--ignore-scripts', '--no-audit', '--no-fund'],
                           cwd=target, capture_output=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        print('note: npm ci failed (%s): npm readers skipped' % e)
        return None
    if p.returncode != 0:
        print('note: npm ci failed: npm readers skipped: ' + p.stderr.decode()[-300:])
        return None
    with open(stamp, 'wb') as out:
        out.write(lock)
    return modules
