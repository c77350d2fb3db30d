"""--policies: its syntax (NAME:param=value,param=value, a list), the check of names and
parameters against the binary's registry, and the runs' file-name labels."""

import re

from .common import UsageError


# --------------------------------------------------------------------------------------
# --policies


def parse_policies(text):
    """'ecmp,flowlet_quality:idle_time_us=64,flow_table_size=1024' ->
    [{'name': 'ecmp', 'params': []}, {'name': 'flowlet_quality', 'params': [(k, v), ...]}]."""
    specs = []
    open_params = False
    for tok in text.split(','):
        tok = tok.strip()
        if not tok:
            raise UsageError("--policies %r: an empty entry (two commas, or a trailing one)" % text)
        if ':' in tok:
            name, _, rest = tok.partition(':')
            spec = {'name': name.strip(), 'params': []}
            specs.append(spec)
            open_params = True
            if rest.strip():
                spec['params'].append(parse_param(rest, text))
        elif '=' in tok:
            if not open_params:
                raise UsageError("--policies %r: %r has no policy before it (write "
                                 "NAME:param=value,param=value)" % (text, tok))
            specs[-1]['params'].append(parse_param(tok, text))
        else:
            specs.append({'name': tok, 'params': []})
            open_params = False
    for s in specs:
        if not re.match(r'^[A-Za-z0-9_]+$', s['name']):
            raise UsageError('--policies %r: %r is not a policy name' % (text, s['name']))
        keys = [k for k, _ in s['params']]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        if dup:
            raise UsageError('--policies %r: %s: parameter %s given twice' % (text, s['name'], dup[0]))
        s['text'] = s['name'] + (':' + ','.join('%s=%s' % kv for kv in s['params'])
                                 if s['params'] else '')
    return specs


def parse_param(tok, text):
    k, eq, v = tok.partition('=')
    k, v = k.strip(), v.strip()
    if not eq or not k or not v:
        raise UsageError('--policies %r: %r is not param=value' % (text, tok))
    if not re.match(r'^[A-Za-z0-9_]+$', k):
        raise UsageError('--policies %r: %r is not a parameter name' % (text, k))
    if not re.match(r'^[A-Za-z0-9_.+-]+$', v):
        raise UsageError('--policies %r: %s=%r: a value is a number, a word or true/false'
                         % (text, k, v))
    return k, v


def check_policies(specs, registry):
    for s in specs:
        if s['name'] not in registry:
            raise UsageError("unknown routing policy '%s' (registered: %s; roceswitch-lab list "
                             "describes them)" % (s['name'], ', '.join(sorted(registry))))
        known = registry[s['name']]
        for k, _ in s['params']:
            if k not in known:
                raise UsageError("policy '%s' has no parameter '%s' (its parameters: %s)"
                                 % (s['name'], k, ', '.join(known) or 'none'))


def run_labels(specs):
    """File-name-safe, unique labels: 01-ecmp, 02-flowlet_quality-idle_time_us-64, ..."""
    labels = []
    for i, s in enumerate(specs):
        base = re.sub(r'[^A-Za-z0-9_.-]+', '-', s['text'].replace(':', '-').replace('=', '-'))
        labels.append('%02d-%s' % (i + 1, base.strip('-')))
    return labels
