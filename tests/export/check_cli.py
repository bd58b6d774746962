#!/usr/bin/env python3
"""check_cli.py - export's command line: one clear line and a non-zero
exit for a bad format, a missing --format or -o DIR, an unwritable
output, a directory output that is a symlink; a symlink planted at a
file output is replaced, its target untouched; outputs are mode 0600;
--help teaches with EXAMPLES."""
import os
import tempfile

from lib import fail, fixture, run


def refused(args, words, code=None):
    p = run(['export'] + args, ok=False)
    err = p.stderr.decode()
    if p.returncode == 0 or (code is not None and p.returncode != code):
        fail('%s: exit %d, wanted failure' % (' '.join(args), p.returncode))
    if not all(w in err for w in words):
        fail('%s: message %r lacks %s' % (' '.join(args), err, words))
    print('ok refused %s: %s' % (' '.join(args), err.strip().splitlines()[0]))


def main():
    cap = fixture('golden-v1.perfcap')
    with tempfile.TemporaryDirectory() as work:
        refused(['--format', 'svg', '-o', work + '/x', cap], ['unknown format', 'svg'], 2)
        refused([cap], ['--format is missing'], 2)
        refused(['--format', 'csv', cap], ['-o DIR'], 2)
        refused(['--format', 'speedscope', '-o', '/nonexistent/dir/x.json', cap],
                ['/nonexistent/dir/x.json'])
        refused(['--format', 'speedscope', cap + '.missing'], ['missing'])
        target = os.path.join(work, 'target')
        with open(target, 'w') as f:
            f.write('keep')
        os.symlink(target, os.path.join(work, 'tables'))
        refused(['--format', 'csv', '-o', os.path.join(work, 'tables'), cap],
                ['not a directory'])
        link = os.path.join(work, 'out.json')
        os.symlink(target, link)
        run(['export', '--format', 'speedscope', '-o', link, cap])
        if open(target).read() != 'keep' or os.path.islink(link):
            fail('the symlink at -o was followed')
        if os.stat(link).st_mode & 0o777 != 0o600:
            fail('output mode is not 0600')
        print('ok a symlink at -o is replaced, not followed; mode 0600')
        p = run(['export', '--format', 'pprof', '-o', os.path.join(work, 'p.pb.gz'), cap],
                ok=False)
        if b'built without protobuf-c' in p.stderr:
            if p.returncode != 1 or len(p.stderr.decode().strip().splitlines()) != 1:
                fail('pprof without protobuf-c: not one line and exit 1')
            print('ok this build refuses pprof in one line: ' + p.stderr.decode().strip())
        helptext = run(['export', '--help']).stdout.decode()
        if 'EXAMPLES' not in helptext or '--format' not in helptext:
            fail('--help has no EXAMPLES')
        print('ok --help')


if __name__ == '__main__':
    main()
