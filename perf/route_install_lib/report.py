"""The output of perf/route_install: text tables (the per-batch one and the layout of every
table) and the figures as JSON."""

import json
import math

from .common import NAN, fmt_int, log


def batch_table(phase):
    rows = [('batch', 'routes', 'latency ms', 'routes/s', 'IPv4 after', 'IPv6 after', 'RSS kB')]
    for r in phase['per_batch']:
        rows.append((str(r['batch']), str(r['routes']), '%.1f' % (r['latency_s'] * 1e3),
                     fmt_int(r['routes'] / r['latency_s'] if r['latency_s'] > 0 else NAN),
                     str(r.get('ipv4_after', '')), str(r.get('ipv6_after', '')), str(r.get('rss_kb', ''))))
    return render(rows, header=True)


def render(rows, header=False, left=False):
    """A text table: the first column left-aligned, the others right-aligned (or all left)."""
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        out.append('  '.join(v.rjust(w) if c and not left else v.ljust(w)
                             for c, (v, w) in enumerate(zip(r, widths))).rstrip())
        if header and n == 0:
            out.append('  '.join('-' * w for w in widths))
    return '\n'.join(out)


def emit_json(dest, doc):
    def clean(x):
        if isinstance(x, float):
            return None if math.isnan(x) else round(x, 6)
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x
    text = json.dumps(clean(doc), indent=2)
    if dest == '-':
        print(text, flush=True)
    else:
        with open(dest, 'w') as fh:
            fh.write(text + '\n')
        log('figures written to %s' % dest)
