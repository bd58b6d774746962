#!/bin/bash
# layers.sh - checks the include rules that analyze/README.md and
# record/README.md state, against the sources: the "may include" column of
# each README's folder table is the truth. For every .c and .h file of a
# folder: each #include "other/x.h" names a folder in its row; nothing
# includes cmd/ but main.c; a private header (*_internal.h, *_state.h) is included
# only from its own folder; analyze/ and record/ never include each other.
set -u
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
python3 - "$root" <<'PY'
import os, re, sys
root = sys.argv[1]
bad = []
row = re.compile(r'^\|\s*`([a-z_]+)/`\s*\|[^|]*\|\s*([^|]*)\|\s*$')
inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
checked = 0
for prog, other in (('analyze', 'record'), ('record', 'analyze')):
    allowed = {}
    for line in open(os.path.join(root, prog, 'README.md')):
        m = row.match(line)
        if m:
            col = m.group(2).strip()
            allowed[m.group(1)] = None if col.startswith('every') else \
                {w.strip() for w in col.split(',') if w.strip() not in ('', '—', '-')}
    folders = set(allowed)
    other_folders = {d for d in os.listdir(os.path.join(root, other))
                     if os.path.isdir(os.path.join(root, other, d))}
    for dp, dn, fn in os.walk(os.path.join(root, prog)):
        rel = os.path.relpath(dp, os.path.join(root, prog))
        for f in fn:
            if not f.endswith(('.c', '.h')):
                continue
            path = os.path.join(prog, rel, f) if rel != '.' else os.path.join(prog, f)
            own = None if rel == '.' else rel.split(os.sep)[0]
            if own is not None and own not in allowed:
                bad.append(f'{path}: folder {own}/ is not in {prog}/README.md')
                continue
            checked += 1
            for h in inc.findall(open(os.path.join(root, path)).read()):
                if '..' in h.split('/'):
                    bad.append(f'{path}: includes "{h}" by a relative path')
                    continue
                if '/' not in h:
                    continue
                target = h.split('/')[0]
                if target not in folders:
                    if target in other_folders:
                        bad.append(f'{path}: includes {other}/ header "{h}"')
                    continue
                if target == own:
                    bad.append(f'{path}: includes its own folder as "{h}" (use the bare name)')
                elif target == 'cmd' and own is not None:
                    bad.append(f'{path}: includes "{h}": nothing includes cmd/')
                elif re.search(r'_(internal|state)\.h$', h):
                    bad.append(f'{path}: includes private header "{h}" of {target}/')
                elif own is not None and allowed[own] is not None and target not in allowed[own]:
                    bad.append(f'{path}: {own}/ may not include {target}/ ("{h}")')
for b in bad:
    print('FAIL:', b)
print(f'layers.sh: {checked} files checked, {len(bad)} violations')
sys.exit(1 if bad else 0)
PY
