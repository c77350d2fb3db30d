"""Message completion times and their slowdown by message size in a fabric run (stats
fct_by_size, as the HPCC paper plots them): each size class (a power of two) merged over the NIC
hosts and, with seeds, over the seeds; fct_by_size.csv (every run with completed messages) and,
when some run has messages of several size classes, the table (a row per size class, p50 and p99
per run) and fct_slowdown.png (slowdown against size, log-log, p50 and p99 per run).

A run's classes are merged as roceswitch merges its hosts' (app/fabric_fct.cc): the steps of
every host's histograms (switches[].ports[].host.nic.totals.fct_by_size[].fct_us.cdf and
.slowdown.cdf, [[upper edge, messages], ...]) are summed per class and edge, over the hosts and
then over the seeds, and a percentile is the upper edge of the first bucket where the messages
counted reach p x all of them (so within 25 %, as the histograms are). With one seed the figures
are the stats' own top-level fct_by_size."""

import os

from .console import fmt_num
from .outfiles import write_rows_csv
from .tables import text_table

FCT_FIELDS = ['run', 'seed', 'size_class', 'bytes_min', 'bytes_max', 'bytes_mid', 'messages',
              'fct_p50_us', 'fct_p99_us', 'slowdown_p50', 'slowdown_p99', 'slowdown_mean']
FEW = 10   # fct_slowdown.png draws a class of fewer messages hollow (its p99 is its maximum)


def size_text(n):
    """1023 -> '1023', 1048576 -> '1M', 65536 -> '64K' (exact powers of two of K, M, G)."""
    for unit, k in (('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
        if n >= k and n % k == 0:
            return '%d%s' % (n // k, unit)
    return str(n)


def class_text(lo, hi):
    """A class [lo, hi] as 'lo-hi+1' in K/M (the classes are [2^k, 2^(k+1) - 1]): '64K-128K'."""
    return '%s-%s' % (size_text(lo), size_text(hi + 1))


def bytes_mid(lo, hi):
    """The class's geometric middle, where the plot puts it."""
    return (max(lo, 1) * (hi + 1)) ** 0.5


def percentile(steps, total, p):
    """The upper edge of the first bucket (in edge order) where the messages reach p x total."""
    seen = 0
    for edge in sorted(steps):
        seen += steps[edge]
        if seen >= p * total:
            return edge
    return max(steps) if steps else 0.0


def merge_steps(into, cdf):
    for edge, n in cdf or []:
        into[float(edge)] = into.get(float(edge), 0) + int(n)


def class_rows(classes):
    """The rows of merged classes {bytes_min: {'hi', 'fct', 'slowdown', 'sum'}}: messages, the
    p50 and p99 of the completion time (us) and of the slowdown, the slowdown's mean."""
    rows = []
    for lo in sorted(classes):
        c = classes[lo]
        total = sum(c['fct'].values())
        if not total:
            continue
        rows.append({'bytes_min': lo, 'bytes_max': c['hi'], 'size_class': class_text(lo, c['hi']),
                     'bytes_mid': bytes_mid(lo, c['hi']), 'messages': total,
                     'fct_p50_us': percentile(c['fct'], total, 0.5),
                     'fct_p99_us': percentile(c['fct'], total, 0.99),
                     'slowdown_p50': percentile(c['slowdown'], total, 0.5),
                     'slowdown_p99': percentile(c['slowdown'], total, 0.99),
                     'slowdown_mean': c['sum'] / total if c.get('sum') is not None else None})
    return rows


def fct_figures(stats):
    """One run's (seed's) figures: fct_by_size (the rows; [] when the stats have none),
    fct_not_done (messages posted by the NICs' requester QPs and not completed by the end: in no
    class; a run's: summed over its seeds, as its classes' messages are) and _fct_classes (its hosts' histograms merged per class, for merging
    seeds; not in the JSON)."""
    if not stats.get('fct_by_size'):
        return {'fct_by_size': [], '_fct_classes': {}}
    classes, not_done = {}, 0
    for sw in stats.get('switches') or []:
        for p in sw.get('ports') or []:
            nic = (p.get('host') or {}).get('nic') or {}
            not_done += sum((q.get('messages_posted') or 0) - (q.get('messages_done') or 0)
                            for q in nic.get('qps') or [] if q.get('role') == 'requester')
            for r in (nic.get('totals') or {}).get('fct_by_size') or []:
                c = classes.setdefault(int(r.get('bytes_min', 0)),
                                       {'hi': int(r.get('bytes_max', 0)), 'fct': {}, 'slowdown': {}, 'sum': 0.0})
                merge_steps(c['fct'], (r.get('fct_us') or {}).get('cdf'))
                merge_steps(c['slowdown'], (r.get('slowdown') or {}).get('cdf'))
                sd = r.get('slowdown') or {}
                n = sum(int(k) for _, k in sd.get('cdf') or [])
                if c['sum'] is not None and sd.get('mean') is not None:
                    c['sum'] += float(sd['mean']) * n
                elif n:
                    c['sum'] = None
    rows = class_rows(classes)
    if not rows:   # the hosts' histograms missing: the stats' own rows, without the merge
        classes = {}
        rows = [dict(r, size_class=class_text(r['bytes_min'], r['bytes_max']),
                     bytes_mid=bytes_mid(r['bytes_min'], r['bytes_max']), slowdown_mean=None)
                for r in stats['fct_by_size']]
    return {'fct_by_size': rows, 'fct_not_done': not_done, '_fct_classes': classes}


def aggregate_fct(r, ok):
    """A run's classes over its seeds: the hosts' histograms merged over every seed (messages
    summed, percentiles read from the merged steps); without histograms, each percentile's mean
    over the seeds that have the class."""
    seeds = [s for s in ok if s.get('fct_by_size')]
    if not seeds:
        return r
    r['fct_not_done'] = sum(s.get('fct_not_done') or 0 for s in seeds)
    if len(seeds) == 1:
        r['fct_by_size'] = seeds[0]['fct_by_size']
        return r
    if all(s.get('_fct_classes') for s in seeds):
        merged = {}
        for s in seeds:
            for lo, c in s['_fct_classes'].items():
                m = merged.setdefault(lo, {'hi': c['hi'], 'fct': {}, 'slowdown': {}, 'sum': 0.0})
                for k in ('fct', 'slowdown'):
                    merge_steps(m[k], c[k].items())
                m['sum'] = None if m['sum'] is None or c['sum'] is None else m['sum'] + c['sum']
        r['fct_by_size'] = class_rows(merged)
        return r
    by = {}
    for s in seeds:
        for row in s['fct_by_size']:
            by.setdefault(row['bytes_min'], []).append(row)
    out = []
    for lo in sorted(by):
        rows = by[lo]
        e = dict(rows[0], messages=sum(x['messages'] for x in rows))
        for k in ('fct_p50_us', 'fct_p99_us', 'slowdown_p50', 'slowdown_p99', 'slowdown_mean'):
            vals = [x[k] for x in rows if x.get(k) is not None]
            e[k] = sum(vals) / len(vals) if vals else None
        out.append(e)
    r['fct_by_size'] = out
    return r


def several_sizes(runs):
    """The runs with completion times by size, if some has messages of two size classes or more
    (as roceswitch prints its table: one size says nothing by size); else []."""
    done = [r for r in runs if r.get('fct_by_size')]
    return done if any(len(r['fct_by_size']) > 1 for r in done) else []


def fct_table(runs):
    """A row per size class (over every run's), per run its messages and slowdown p50 and p99;
    '' when no run has messages of several size classes."""
    done = several_sizes(runs)
    if not done:
        return ''
    classes = {}
    for r in done:
        for c in r['fct_by_size']:
            classes.setdefault(c['bytes_min'], c['size_class'])
    head = ['size (B)']
    for r in done:
        head += ['%s msgs' % r['run'], 'p50', 'p99']
    rows = [head]
    for lo in sorted(classes):
        row = [classes[lo]]
        for r in done:
            c = next((x for x in r['fct_by_size'] if x['bytes_min'] == lo), None)
            row += ([str(c['messages']), fmt_num(c['slowdown_p50'], '%.2f'), fmt_num(c['slowdown_p99'], '%.2f')]
                    if c else ['0', '-', '-'])
        rows.append(row)
    rows.append(['not done'] + [x for r in done for x in (str(r.get('fct_not_done', '-')), '', '')])
    many = any(len([s for s in r.get('seeds') or [] if s.get('fct_by_size')]) > 1 for r in done)
    return ('completion-time slowdown by message size (stats fct_by_size: a message\'s completion '
            'time over its unloaded one; p50, p99 over the size class%s, within 25 %%; a class '
            '[2^k, 2^(k+1)) of message bytes a row; not done: messages posted and not completed by '
            'the end, in no class; fct_by_size.csv has the times):\n'
            % (', every seed\'s messages merged' if many else '') + text_table(rows))


def write_fct_csv(out_dir, runs):
    """fct_by_size.csv: per run, seed and size class; with seeds, the merged classes too
    (seed 'all'). [] (nothing written) when no run has completion times by size."""
    rows = []
    for r in runs:
        seeds = [s for s in r.get('seeds') or [] if s.get('fct_by_size')]
        for s in seeds:
            rows += [dict(c, run=r['run'], seed=s.get('seed')) for c in s['fct_by_size']]
        if len(seeds) > 1:
            rows += [dict(c, run=r['run'], seed='all') for c in r.get('fct_by_size') or []]
    if not rows:
        return []
    write_rows_csv(os.path.join(out_dir, 'fct_by_size.csv'), FCT_FIELDS, rows)
    return ['fct_by_size.csv']


def fct_plot(plt, exp, runs, seeds, save):
    """fct_slowdown.png: the slowdown (log) against the message size (log, each class at its
    geometric middle), p50 (left) and p99 (right), a line per run, 1 dotted: HPCC's figure;
    a class of fewer than FEW messages hollow; only with messages of several size classes."""
    done = several_sizes(runs)
    if not done:
        return
    from matplotlib.ticker import FuncFormatter
    colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
    markers = 'osD^v<>ph*'
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharex=True, sharey=True)
    ys = []
    for ax, key, what in ((axes[0], 'slowdown_p50', 'p50'), (axes[1], 'slowdown_p99', 'p99')):
        for j, r in enumerate(done):
            pts = [(c['bytes_mid'], c[key], c['messages']) for c in r['fct_by_size'] if c.get(key)]
            ys += [y for _, y, _ in pts]
            col, mk = colours[j % len(colours)], markers[j % len(markers)]
            ax.plot([x for x, _, _ in pts], [y for _, y, _ in pts], marker=mk, markersize=4, linewidth=1.3,
                    linestyle='-' if what == 'p50' else '--', color=col, label=r['run'])
            few = [(x, y) for x, y, n in pts if n < FEW]
            if few:
                ax.plot([x for x, _ in few], [y for _, y in few], marker=mk, markersize=6, linestyle='none',
                        color=col, markerfacecolor='white')
        ax.axhline(1.0, color='grey', linestyle=':', linewidth=0.8)
        ax.set_xscale('log', base=2)
        ax.set_yscale('log')
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: size_text(int(round(v)))))
        ax.set_xlabel('message size (bytes; each class [2^k, 2^(k+1)) at its geometric middle)')
        ax.set_title('%s slowdown' % what, fontsize=9)
        ax.grid(True, which='both', alpha=0.25)
    axes[0].set_ylabel('FCT slowdown (completion time / unloaded)')
    if ys:
        axes[0].set_ylim(min(0.8, min(ys) * 0.8), max(ys) * 1.3)
    axes[0].legend(fontsize=8)
    fig.suptitle('%s: FCT slowdown by message size%s; hollow: a class of fewer than %d messages' % (
        exp.name, ' (every seed\'s messages merged: %d seeds)' % len(seeds) if len(seeds) > 1 else '', FEW),
        fontsize=10)
    save(fig, 'fct_slowdown.png')
