"""The collectives of a fabric run (stats collectives[], as nccl-tests reports them): each
against its ranks' link payload rate, a run's summary over its collectives and seeds, the table
(a row per run and collective), collectives.csv and busbw.png (a bar per run)."""

import os

from .console import fmt_num
from .nic import payload_share
from .outfiles import write_rows_csv
from .tables import text_table

COLLECTIVE_FIELDS = ['run', 'seed', 'index', 'op', 'ranks', 'hosts', 'size_bytes', 'done', 'time_us',
                     'algbw_gbps', 'busbw_gbps', 'link_gbps', 'link_payload_gbps', 'busbw_link_fraction']
# summary.csv's and seeds.csv's columns when a run has collectives (over all its collectives:
# the longest time, the smallest algbw and busbw, done if every one finished)
SUMMARY_COLLECTIVE_FIELDS = ['collective_done', 'collective_time_us', 'algbw_gbps', 'busbw_gbps',
                             'busbw_gbps_min', 'busbw_gbps_max', 'busbw_link_fraction']


def collective_figures(stats):
    """Each collective of the stats with its hosts' slowest link and that link's payload rate
    at their NICs' smallest MTU (what busbw can reach with nothing else on the links)."""
    link = {h.get('name'): h.get('link_gbps') for h in (stats.get('hosts') or {}).get('list') or []}
    mtu = {}
    for sw in stats.get('switches') or []:
        for p in sw.get('ports') or []:
            nic = (p.get('host') or {}).get('nic') or {}
            if nic.get('mtu'):
                mtu['%s.%s' % (sw.get('name'), p.get('name'))] = int(nic['mtu'])
    out = []
    for i, c in enumerate(stats.get('collectives') or []):
        e = {k: c.get(k) for k in ('op', 'size_bytes', 'done', 'time_us', 'algbw_gbps', 'busbw_gbps',
                                   'ranks', 'hosts')}
        e['index'] = i
        hosts = c.get('hosts') or []
        gbps = [link[h] for h in hosts if link.get(h)]
        mtus = [mtu[h] for h in hosts if h in mtu]
        if gbps and mtus:
            e['link_gbps'] = min(gbps)
            e['link_payload_gbps'] = min(gbps) * payload_share(min(mtus))
            e['busbw_link_fraction'] = (e['busbw_gbps'] / e['link_payload_gbps']
                                        if e.get('done') and e.get('busbw_gbps') else None)
        out.append(e)
    return out


def summarise(colls):
    """A run's (one seed's) figures over its collectives."""
    if not colls:
        return {}
    done = all(c.get('done') for c in colls)
    times = [c.get('time_us') for c in colls if c.get('done')]
    worst = min(colls, key=lambda c: c.get('busbw_gbps') or 0)
    return {'collective_done': done, 'collective_time_us': max(times) if done and times else None,
            'algbw_gbps': min(c.get('algbw_gbps') or 0 for c in colls) if done else None,
            'busbw_gbps': worst.get('busbw_gbps') if done else None,
            'busbw_link_fraction': worst.get('busbw_link_fraction') if done else None,
            'link_payload_gbps': worst.get('link_payload_gbps')}


def aggregate_collectives(r, ok):
    """A run's collective figures over its seeds: the means (busbw with its min and max), done
    only if every seed's collectives finished; each collective's figures averaged by index."""
    seeds = [s for s in ok if s.get('collectives')]
    if not seeds:
        return r
    sums = [summarise(s['collectives']) for s in seeds]
    r['collective_done'] = all(x['collective_done'] for x in sums)
    for k in ('collective_time_us', 'algbw_gbps', 'busbw_gbps', 'busbw_link_fraction', 'link_payload_gbps'):
        vals = [x[k] for x in sums if x.get(k) is not None]
        r[k] = sum(vals) / len(vals) if vals and r['collective_done'] else None
    bus = [x['busbw_gbps'] for x in sums if x.get('busbw_gbps') is not None]
    r['busbw_gbps_min'] = min(bus) if bus and r['collective_done'] else None
    r['busbw_gbps_max'] = max(bus) if bus and r['collective_done'] else None
    per = []
    for i, c in enumerate(seeds[0]['collectives']):
        same = [s['collectives'][i] for s in seeds if len(s['collectives']) > i]
        e = dict(c, done=all(x.get('done') for x in same))
        for k in ('time_us', 'algbw_gbps', 'busbw_gbps', 'busbw_link_fraction'):
            vals = [x.get(k) for x in same if x.get(k) is not None]
            e[k] = sum(vals) / len(vals) if vals and e['done'] else None
        per.append(e)
    r['collectives'] = per
    return r


def collectives_table(runs):
    """A row per run and collective, nccl-tests' figures: time, algbw and busbw (GB/s, and busbw
    in Gb/s against the link's payload rate), done; the NICs' resends and out-of-order packets
    and PFC frames of the run beside them."""
    rows = [['run', 'op', 'ranks', 'size (B)', 'time (us)', 'algbw (GB/s)', 'busbw (GB/s)',
             'busbw Gb/s', 'of link', 'done', 'resent', 'out-of-order', 'PFC']]
    for r in runs:
        for c in r.get('collectives') or []:
            ok = c.get('done')
            rows.append([r['run'] if c.get('index', 0) == 0 else '', str(c.get('op')), str(c.get('ranks')),
                         str(c.get('size_bytes')), fmt_num(c.get('time_us'), '%.1f') if ok else 'not done',
                         fmt_num(c['algbw_gbps'] / 8 if ok and c.get('algbw_gbps') is not None else None, '%.3f'),
                         fmt_num(c['busbw_gbps'] / 8 if ok and c.get('busbw_gbps') is not None else None, '%.3f'),
                         fmt_num(c.get('busbw_gbps') if ok else None, '%.2f'),
                         fmt_num(c['busbw_link_fraction'] * 100 if c.get('busbw_link_fraction') is not None
                                 else None, '%.1f%%'),
                         'yes' if ok else 'NO', fmt_num(r.get('retransmitted'), '%.0f'),
                         fmt_num(r.get('out_of_order'), '%.0f'), fmt_num(r.get('pfc_frames_sent'), '%.0f')])
    if len(rows) == 1:
        return ''
    many = any(len(r.get('seeds') or []) > 1 for r in runs)
    return ('collectives (stats collectives[]; time from the first message posted to the last '
            'delivered; algbw = size / time, busbw = algbw x 2(n-1)/n for allreduce; of link: busbw '
            'over the ranks\' link payload rate%s):\n' % (', mean over seeds' if many else '')
            + text_table(rows, right_from=2))


def collective_rows(runs):
    rows = []
    for r in runs:
        for s in r.get('seeds') or []:
            rows += [dict(c, run=r['run'], seed=s.get('seed')) for c in s.get('collectives') or []]
    return rows


def write_collectives_csv(out_dir, runs):
    rows = collective_rows(runs)
    if not rows:
        return []
    write_rows_csv(os.path.join(out_dir, 'collectives.csv'), COLLECTIVE_FIELDS, rows)
    return ['collectives.csv']


def busbw_plot(plt, out_dir, exp, runs, seeds, save):
    """busbw.png: a bar per run, its collectives' smallest busbw (Gb/s; whiskers min..max over
    the seeds), a line at the ranks' link payload rate; bars coloured by the run's policy."""
    done = [r for r in runs if r.get('collectives')]
    if not done:
        return
    colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
    pol = []
    for r in done:
        p = str((r.get('set') or {}).get('fabric.policy', r.get('policy', '')))
        if p not in pol:
            pol.append(p)
    fig, ax = plt.subplots(1, 1, figsize=(max(6.0, 0.75 * len(done) + 2.5), 4.8))
    x = list(range(len(done)))
    vals = [r.get('busbw_gbps') or 0 for r in done]
    col = [colours[pol.index(str((r.get('set') or {}).get('fabric.policy', r.get('policy', ''))))
                   % len(colours)] for r in done]
    ax.bar(x, vals, color=col, alpha=0.85)
    if len(seeds) > 1:
        lo = [v - (r.get('busbw_gbps_min') if r.get('busbw_gbps_min') is not None else v) for v, r in zip(vals, done)]
        hi = [(r.get('busbw_gbps_max') if r.get('busbw_gbps_max') is not None else v) - v for v, r in zip(vals, done)]
        ax.errorbar(x, vals, yerr=[lo, hi], fmt='none', ecolor='black', capsize=4, linewidth=1)
    for i, (v, r) in enumerate(zip(vals, done)):
        ax.text(i, v, 'not done' if not r.get('collective_done') else '%.1f' % v, ha='center',
                va='bottom', fontsize=8)
    links = sorted({r['link_payload_gbps'] for r in done if r.get('link_payload_gbps')})
    for g in links:
        ax.axhline(g, color='grey', linestyle='--', linewidth=0.8,
                   label='the ranks\' link payload rate: %.1f Gb/s' % g)
    if any(p for p in pol):
        from matplotlib.patches import Patch
        handles = [Patch(color=colours[i % len(colours)], label=p) for i, p in enumerate(pol) if p]
        ax.legend(handles=handles + ax.get_legend_handles_labels()[0], fontsize=8, loc='upper center',
                  ncol=len(handles) + 1)
    ax.set_xticks(x)
    ax.set_xticklabels([r['run'] for r in done], rotation=30, ha='right', fontsize=8)
    ax.set_ylabel('busbw (Gb/s)')
    ax.set_ylim(0, max([1.0] + vals + links) * 1.3)
    ax.grid(True, axis='y', alpha=0.3)
    ax.set_title('%s: busbw per run (the slowest collective%s)' % (
        exp.name, ', mean over %d seeds, whiskers min..max' % len(seeds) if len(seeds) > 1 else ''),
        fontsize=9)
    save(fig, 'busbw.png')
