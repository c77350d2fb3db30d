"""The PNG plots (matplotlib, when installed): per member port throughput and backlog and per flow
goodput with experiment.group; DCQCN's rates over the bottleneck queue, message completion
times and busbw against size with NICs."""

import os

from .common import PROG, SERIES_SMOOTH_MS
from .console import fmt_num
from .names import sends


def smooth(ts, ys, ms):
    """Rates averaged over windows of about `ms` (rates in ys, None for unknown)."""
    if len(ts) < 2:
        return ts, ys
    period = (ts[-1] - ts[0]) / max(1, len(ts) - 1) * 1000
    k = max(1, int(round(ms / period))) if period > 0 else 1
    out_t, out_y = [], []
    for i in range(0, len(ts), k):
        chunk = [y for y in ys[i:i + k] if y is not None]
        if chunk:
            out_t.append(ts[min(i + k, len(ts)) - 1])
            out_y.append(sum(chunk) / len(chunk))
    return out_t, out_y


def plots(out_dir, exp, runs, tables, out):
    """With experiment.group, three PNGs, one subplot per run each; with NICs, the NIC plots
    (nic_plots). Returns the files written."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        out.line('%s: python3-matplotlib is missing (apt-get install python3-matplotlib): no plots'
                 % PROG)
        return []
    done = [(r, tables[r['label']]) for r in runs if 'error' not in r and r['label'] in tables]
    if not done:
        return []
    n = len(done)
    written = []

    def figure(fname, title, ylabel, draw, xlabel='time (s)'):
        fig, axes = plt.subplots(n, 1, figsize=(10, 2.6 * n + 0.8), sharex=True, squeeze=False)
        for ax, (r, tb) in zip(axes[:, 0], done):
            draw(ax, r, tb)
            ax.set_title('%s  (goodput %s)' % (r['run'], fmt_num(r.get('goodput_fraction'))),
                         fontsize=10, loc='left')
            ax.set_ylabel(ylabel)
            ax.grid(True, alpha=0.3)
        axes[-1, 0].set_xlabel(xlabel)
        fig.suptitle('%s: %s' % (exp.name, title))
        fig.tight_layout()
        path = os.path.join(out_dir, fname)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)

    def column(tb, name):
        cols, rows = tb
        i = cols.index(name)
        return [row[0] for row in rows], [row[i] for row in rows]

    def legend(ax, count):
        if count <= 16:
            ax.legend(fontsize=7, ncol=min(8, count), loc='upper right')

    speeds = sorted({float(exp.ports.get(p, {}).get('speed_gbps', 100)) for p in exp.members})

    def draw_tx(ax, r, tb):
        for p in r['member_ports']:
            ts, ys = smooth(*column(tb, 'tx_gbps:%s' % p), SERIES_SMOOTH_MS)
            ax.plot(ts, ys, label=p, linewidth=1)
        if len(speeds) == 1:
            ax.axhline(speeds[0], color='grey', linestyle='--', linewidth=0.8)
            ax.text(0, speeds[0], ' link rate', fontsize=7, va='bottom', color='grey',
                    transform=ax.get_yaxis_transform())
        legend(ax, len(r['member_ports']))

    def draw_q(ax, r, tb):
        for p in r['member_ports']:
            ts, ys = column(tb, 'queue_bytes:%s' % p)
            ax.plot(ts, [y / 1e3 for y in ys], label=p, linewidth=1)
        legend(ax, len(r['member_ports']))

    # Per-flow goodput over time when the series has it; else each flow's mean, as bars.
    over_time = any(c.startswith('goodput_gbps:') for _, tb in done for c in tb[0])

    def draw_flows(ax, r, tb):
        fl = r.get('flows', [])
        fair = r['ideal_payload_gbps'] / len(fl) if fl and r.get('ideal_payload_gbps') else None
        if over_time:
            fcols = [c for c in tb[0] if c.startswith('goodput_gbps:')]
            for c in fcols:
                ts, ys = smooth(*column(tb, c), SERIES_SMOOTH_MS)
                ax.plot(ts, ys, label=c.split(':', 1)[1], linewidth=1)
            legend(ax, len(fcols))
        else:
            ax.bar(range(len(fl)), [f.get('goodput_gbps') or 0 for f in fl])
            ax.set_xticks(range(len(fl)))
            ax.set_xticklabels([f['flow'] for f in fl], fontsize=7, rotation=20)
        if fair:
            ax.axhline(fair, color='grey', linestyle='--', linewidth=0.8)
            ax.text(0, fair, ' ideal / flows', fontsize=7, va='bottom', color='grey',
                    transform=ax.get_yaxis_transform())

    if exp.group:
        figure('throughput_per_member.png', 'tx Gb/s per %s member port (%d ms averages)'
               % (exp.group, SERIES_SMOOTH_MS), 'Gb/s', draw_tx)
        figure('queue_depth_per_uplink.png', 'egress backlog per %s member port (all queues)'
               % exp.group, 'KB', draw_q)
        if exp.receivers:
            figure('flow_goodput.png', 'goodput per received flow (payload Gb/s%s)'
                   % ('' if over_time else ', mean over the run'), 'Gb/s', draw_flows,
                   'time (s)' if over_time else 'received flow (source/QP)')
    written += nic_plots(plt, out_dir, exp, done, column)
    return written


FCT_CURVES = 8   # CDF curves a run draws at most: its QPs', else its hosts', else its own


def cdf_points(steps):
    """([ms], [fraction]) of a CDF from the stats' steps [[upper edge us, messages], ...]."""
    n = sum(c for _, c in steps)
    if not n:
        return [], []
    xs, ys, acc = [steps[0][0] / 1e3], [0.0], 0
    for upper_us, c in steps:
        acc += c
        xs.append(upper_us / 1e3)
        ys.append(acc / n)
    return xs, ys


def fct_curves(hosts):
    """[(kind, steps)]: the sender QPs' completion-time CDFs, or their hosts' when there are
    more than FCT_CURVES, or the run's when there are that many hosts too."""
    qps = [(q['qp'], (q.get('fct_us') or {}).get('cdf')) for h in hosts for q in h['qps']
           if sends(q) and q.get('messages_done')]
    qps = [(k, s) for k, s in qps if s]
    if len(qps) <= FCT_CURVES:
        return [('qp', s) for _, s in qps]
    per_host = [(h['name'], (h.get('fct_us') or {}).get('cdf')) for h in hosts if h.get('sends')]
    per_host = [(k, s) for k, s in per_host if s]
    if len(per_host) <= FCT_CURVES:
        return [('host', s) for _, s in per_host]
    merged = {}
    for _, steps in per_host:
        for upper, c in steps:
            merged[upper] = merged.get(upper, 0) + c
    return [('run', sorted([u, c] for u, c in merged.items()))]


def nic_plots(plt, out_dir, exp, done, column):
    """rates_and_queue.png and fct_cdf.png for runs whose QPs send traffic of their own;
    busbw_vs_size.png for runs with collectives."""
    written = []

    def save(fig, fname):
        fig.tight_layout()
        path = os.path.join(out_dir, fname)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)

    # Sender rates over time over the bottleneck's queue: DCQCN's convergence plot.
    senders = []
    for r, tb in done:
        names = [q['qp'] for h in r.get('hosts') or [] for q in h['qps'] if sends(q)]
        names = [k for k in names if 'qp_goodput_gbps:%s' % k in tb[0]]
        if names:
            senders.append((r, tb, names))
    if senders:
        ecn, xoff = exp.rates_view()
        n = len(senders)
        fig, axes = plt.subplots(2 * n, 1, figsize=(10, 4.6 * n + 0.8), sharex=True, squeeze=False,
                                 gridspec_kw={'height_ratios': [2, 1] * n})
        for i, (r, tb, names) in enumerate(senders):
            ax, axq = axes[2 * i, 0], axes[2 * i + 1, 0]
            colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
            for j, k in enumerate(names):
                c = colours[j % len(colours)]
                ts, ys = smooth(*column(tb, 'qp_goodput_gbps:%s' % k), SERIES_SMOOTH_MS)
                ax.plot(ts, ys, color=c, linewidth=1.2, label=k.split('/')[0])
                ts, ys = column(tb, 'qp_rate_gbps:%s' % k)
                ax.plot(ts, ys, color=c, linewidth=0.8, linestyle='--', alpha=0.8)
            b = r.get('bottleneck')
            speed = float(exp.ports.get(b, {}).get('speed_gbps', 0)) if b else 0
            if speed and names:
                fair = speed / len(names)
                ax.axhline(fair, color='grey', linestyle=':', linewidth=0.8)
                ax.text(0, fair, ' %s / %d' % (b, len(names)), fontsize=7, va='bottom', color='grey',
                        transform=ax.get_yaxis_transform())
            if r.get('steady_from_s') is not None:
                ax.axvspan(r['steady_from_s'], r['steady_to_s'], color='grey', alpha=0.08, linewidth=0)
            ax.set_ylabel('Gb/s')
            ax.set_title('%s: goodput %s Gb/s, Jain %s, CNPs %s, PFC %s  (solid: goodput, %d ms '
                         'averages; dashed: DCQCN rate)' % (
                             r['run'], fmt_num(r.get('senders_goodput_gbps')),
                             fmt_num(r.get('jain_fairness')), r.get('cnp_received'),
                             r.get('pfc_frames_sent'), SERIES_SMOOTH_MS), fontsize=9, loc='left')
            ax.grid(True, alpha=0.3)
            if len(names) <= 16:
                ax.legend(fontsize=7, ncol=min(8, len(names)), loc='upper right')
            qcol = 'queue_bytes:%s' % b
            if b and qcol in tb[0]:
                ts, ys = column(tb, qcol)
                axq.plot(ts, [y / 1e3 for y in ys], color='black', linewidth=0.9)
                marks = sorted({v for lo_hi in ecn.values() for v in lo_hi if v})
                for v, what in zip(marks[:2], ('ECN Kmin', 'ECN Kmax')):
                    axq.axhline(v / 1e3, color='tab:orange', linestyle='--', linewidth=0.8)
                    axq.text(0, v / 1e3, ' %s' % what, fontsize=7, va='bottom', color='tab:orange',
                             transform=axq.get_yaxis_transform())
                if xoff:
                    axq.axhline(xoff * len(names) / 1e3, color='tab:red', linestyle='--', linewidth=0.8)
                    axq.text(0, xoff * len(names) / 1e3, ' PFC XOFF x %d senders' % len(names),
                             fontsize=7, va='bottom', color='tab:red', transform=axq.get_yaxis_transform())
            axq.set_ylabel('%s queue KB' % (b or '?'))
            axq.grid(True, alpha=0.3)
        axes[-1, 0].set_xlabel('time (s)')
        fig.suptitle('%s: sender rates and the bottleneck queue' % exp.name)
        save(fig, 'rates_and_queue.png')

        # Message completion times: each sender QP's CDF (each host's, past FCT_CURVES QPs in
        # a run; the run's, past that many hosts), from the histogram's steps in the stats.
        fig, ax = plt.subplots(1, 1, figsize=(8, 4.8))
        colours = plt.rcParams['axes.prop_cycle'].by_key()['color']
        lo = hi = None
        what = 'QP'
        for i, (r, tb, names) in enumerate(senders):
            c = colours[i % len(colours)]
            curves = fct_curves(r.get('hosts') or [])
            what = 'QP' if curves and curves[0][0] == 'qp' else 'host' if curves and curves[0][0] == 'host' else 'run'
            for j, (_, steps) in enumerate(curves):
                xs, ys = cdf_points(steps)
                if not xs:
                    continue
                ax.step(xs, ys, where='post', color=c, linewidth=1.0, alpha=0.8,
                        label=r['run'] if j == 0 else None)
                lo = xs[0] if lo is None else min(lo, xs[0])
                hi = xs[-1] if hi is None else max(hi, xs[-1])
        if lo and hi and hi / lo > 20:
            ax.set_xscale('log')
        ax.set_ylim(0, 1.05)
        ax.set_xlabel('message completion time (ms): post to last ACK')
        ax.set_ylabel('fraction of messages')
        ax.set_title('%s: message completion time CDF, one curve per %s (buckets within 25 %%)'
                     % (exp.name, what), fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, 'fct_cdf.png')

    # busbw against the message size, per collective (nccl-tests' figure).
    curves, ideals = {}, set()
    for r, tb in done:
        for i, c in enumerate(r.get('collectives') or []):
            if c.get('done') and c.get('busbw_GBps') is not None:
                curves.setdefault((i, c.get('op'), tuple(c.get('hosts') or [])), []).append(
                    (c['size_bytes'], c['busbw_GBps'], c['algbw_GBps']))
                if c.get('link_gbps'):
                    ideals.add((c['link_gbps'], c['link_payload_gbps'] / 8))
    if curves:
        fig, ax = plt.subplots(1, 1, figsize=(8, 4.8))
        for (i, op, hosts), pts in curves.items():
            pts.sort()
            line, = ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o',
                            label='%s, %d ranks: busbw' % (op, len(hosts)))
            ax.plot([p[0] for p in pts], [p[2] for p in pts], marker='.', linestyle='--',
                    color=line.get_color(), alpha=0.6, label='%s: algbw' % op)
        for gbps, ideal in sorted(ideals):
            ax.axhline(ideal, color='grey', linestyle=':', linewidth=0.8)
            ax.text(0, ideal, ' %g Gb/s links: payload %.4f GB/s' % (gbps, ideal), fontsize=7,
                    va='bottom', color='grey', transform=ax.get_yaxis_transform())
        ax.set_xscale('log', base=2)
        sizes = sorted({p[0] for pts in curves.values() for p in pts})
        ax.set_xticks(sizes)
        ax.set_xticklabels([fmt_size(x) for x in sizes], fontsize=8)
        ax.set_ylim(bottom=0)
        ax.set_xlabel('size (bytes)')
        ax.set_ylabel('GB/s')
        ax.set_title('%s: bus bandwidth against size (nccl-tests\' busbw)' % exp.name, fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        save(fig, 'busbw_vs_size.png')
    return written


def fmt_size(n):
    for unit, k in (('G', 1 << 30), ('M', 1 << 20), ('K', 1 << 10)):
        if n >= k and n % k == 0:
            return '%d%s' % (n // k, unit)
    return str(n)
