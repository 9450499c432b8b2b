#!/usr/bin/env python3
"""Narrows every `pub` item under a crate's source folder to `pub(crate)`, then gives `pub` back
to exactly the items the compiler says another crate, a test or a benchmark uses (checking
every target of the workspace until it builds). Run from the project's root:

    python3 scripts/narrow_visibility.py engine/src engine/src/lib.rs
    python3 scripts/narrow_visibility.py src src/lib.rs src/main.rs

The files after the folder are left alone (a crate root's `pub mod` lines). Afterwards
`cargo clippy --all-targets` names what no one used at all: delete it, or keep it for the
tests alone under `#[cfg(test)]`."""
import json, os, re, subprocess, sys
root = os.path.abspath(sys.argv[1]); skip = {os.path.abspath(p) for p in sys.argv[2:]}
decl = re.compile(r'^(\s*)pub (?=(fn|struct|enum|const|static|type|trait|mod|use|async|unsafe|extern)\b)')
files = []
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.join(d, f)
            if p in skip: continue
            files.append(p)
changed = 0
for p in files:
    lines = open(p).read().split('\n'); n = 0
    for i, l in enumerate(lines):
        if decl.match(l):
            lines[i] = decl.sub(r'\1pub(crate) ', l); n += 1
    if n:
        open(p, 'w').write('\n'.join(lines)); changed += n
print('narrowed', changed)
def spans(msg):
    for s in msg.get('spans', []): yield s
    for c in msg.get('children', []): yield from spans(c)
for round_ in range(40):
    out = subprocess.run(['cargo', 'check', '--all-targets', '--message-format=json'], capture_output=True, text=True, cwd=os.getcwd()).stdout
    fixes = set(); errors = 0; other = []
    for line in out.splitlines():
        try: m = json.loads(line)
        except: continue
        if m.get('reason') != 'compiler-message': continue
        msg = m['message']
        code = (msg.get('code') or {}).get('code')
        lint = code or ''
        if msg['level'] == 'error' or lint in ('private_interfaces', 'private_bounds'):
            errors += 1; hit = False
            for s in spans(msg):
                fn = os.path.abspath(os.path.join(os.getcwd(), s['file_name']))
                if fn.startswith(root):
                    fixes.add((fn, s['line_start'])); hit = True
            if code in ('E0364', 'E0365'):
                name = re.search(r'`([A-Za-z0-9_]+)`', msg['message']).group(1)
                defn = re.compile(r'^(\s*)pub\(crate\) (?=((async |unsafe |const )*fn|struct|enum|const|static|type|trait|mod) ' + name + r'\b)')
                for p in files:
                    lines = open(p).read().split('\n'); hit2 = False
                    for i, l in enumerate(lines):
                        if defn.match(l):
                            fixes.add((p, i + 1)); hit = True
            if not hit: other.append(msg['rendered'][:400])
    restored = 0
    for fn, ln in fixes:
        lines = open(fn).read().split('\n')
        for k in range(ln - 1, min(ln + 3, len(lines))):  # attributes can put the span a line early
            if 'pub(crate) ' in lines[k]:
                lines[k] = lines[k].replace('pub(crate) ', 'pub ', 1); restored += 1; break
        open(fn, 'w').write('\n'.join(lines))
    print('round', round_, 'errors', errors, 'restored', restored, flush=True)
    if errors == 0: break
    if restored == 0:
        print('\n'.join(other[:20])); break
