"""The tables roceswitch-lab prints: a row per run (routing, NIC), a row per run and NIC host,
nccl-tests' table of the collectives, and the figures on a run's progress line."""

from .console import fmt_bytes, fmt_num


# --------------------------------------------------------------------------------------
# reports


TABLE_COLS = [('policy', 'policy', None), ('goodput', 'goodput_fraction', '%.3f'),
              ('Gb/s', 'goodput_gbps', '%.3f'), ('share min', 'member_share_min', '%.3f'),
              ('share max', 'member_share_max', '%.3f'), ('out-of-order', 'out_of_order_fraction', '%.4f'),
              ('late', 'late', '%d'), ('missing', 'missing', '%d'),
              ('max queue', 'max_queue_bytes', 'bytes'), ('drops', 'drops', '%d'),
              ('PFC', 'pfc_frames_sent', '%d'), ('CPU', 'worker_cpu_share', 'pct')]


def table(runs, cols=None):
    """A fixed-width table: one row per run; cols are (title, key, format) and the first is the
    run's name."""
    cols = cols or TABLE_COLS
    rows = [[t for t, _, _ in cols]]
    for r in runs:
        row = []
        for i, (_, k, spec) in enumerate(cols):
            v = r.get(k)
            if i == 0:
                row.append(str(v))
            elif 'error' in r:
                row.append('failed' if i == 1 else '-')
            elif spec == 'bytes':
                row.append(fmt_bytes(v))
            elif spec == 'pct':
                row.append('n/a' if v is None else '%.0f%%' % (100 * v))
            else:
                row.append(fmt_num(v, spec))
        rows.append(row)
    return text_table(rows)


def text_table(rows, right_from=1):
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    out = []
    for n, r in enumerate(rows):
        out.append('  '.join(v.ljust(w) if c < right_from else v.rjust(w)
                             for c, (v, w) in enumerate(zip(r, widths))).rstrip())
        if n == 0:
            out.append('  '.join('-' * w for w in widths))
    return '\n'.join(out)


# A vary experiment's routing table (with experiment.group): the same columns, named by run.
ROUTING_COLS = [('run', 'run', None)] + TABLE_COLS[1:]

# Runs of NIC hosts: the senders (QPs not part of a collective), the switch, the bottleneck.
NIC_COLS = [('run', 'run', None), ('goodput Gb/s', 'senders_goodput_gbps', '%.3f'),
            ('steady min', 'steady_goodput_min', '%.3f'), ('max', 'steady_goodput_max', '%.3f'),
            ('Jain', 'jain_fairness', '%.3f'), ('rate min', 'rate_final_min', '%.3f'),
            ('rate max', 'rate_final_max', '%.3f'), ('CNPs', 'cnp_received', '%d'),
            ('ECN marks', 'ecn_marked', '%d'), ('PFC', 'pfc_frames_sent', '%d'),
            ('queue p50', 'bottleneck_median_queue_bytes', 'bytes'),
            ('max', 'bottleneck_max_queue_bytes', 'bytes'), ('resent', 'retransmitted', '%d'),
            ('drops', 'drops', '%d'), ('util', 'bottleneck_utilisation', 'pct'),
            ('CPU', 'worker_cpu_share', 'pct')]


def own_traffic(h):
    """A NIC host with QPs of its own traffic (not only a collective's)."""
    return any(not q.get('tag') for q in h.get('qps', []))


def fct_ms(h, k):
    f = h.get('fct_us')
    return None if not f or f.get(k) is None else f[k] / 1e3


def hosts_table(runs):
    """One row per run and NIC host with traffic of its own: goodput, DCQCN rate at the end,
    CNPs, resends, message completion times."""
    rows = [['run', 'host', 'goodput Gb/s', 'steady', 'rate end', 'CNP sent', 'CNP rcvd', 'resent',
             'NAKs', 'timeouts', 'messages', 'MCT p50 ms', 'p99 ms', 'max ms', 'steady mean']]
    for r in runs:
        for h in r.get('hosts') or []:
            if not own_traffic(h):
                continue
            sender = h['sends']
            rows.append([r['run'], h['name'],
                         fmt_num(h['goodput_gbps']) if sender else '-',
                         fmt_num(h.get('goodput_gbps_steady')) if sender else '-',
                         fmt_num(h['rate_gbps_final']) if sender else '-',
                         '%d' % h['cnp_sent'], '%d' % h['cnp_received'], '%d' % h['retransmitted'],
                         '%d' % h['naks_received'], '%d' % h['timeouts'],
                         '%d' % h['messages_done'] if sender else '-',
                         fmt_num(fct_ms(h, 'p50'), '%.2f') if sender else '-',
                         fmt_num(fct_ms(h, 'p99'), '%.2f') if sender else '-',
                         fmt_num(fct_ms(h, 'max'), '%.2f') if sender else '-',
                         fmt_num(h['fct_mean_us_steady'] / 1e3 if h.get('fct_mean_us_steady') else None,
                                 '%.2f') if sender else '-'])
    return text_table(rows, right_from=2) if len(rows) > 1 else ''


def nccl_table(runs, exp):
    """The collectives as nccl-tests prints them (size, count, type, redop, root, time,
    algbw, busbw; GB/s), a row per run and collective, with the lab's columns after."""
    lines = []
    by_coll = {}
    for r in runs:
        for i, c in enumerate(r.get('collectives') or []):
            by_coll.setdefault((i, c.get('op'), tuple(c.get('hosts') or [])), []).append((r, c))
    for (i, op, hosts), rc in by_coll.items():
        links = sorted({(c.get('link_gbps'), c.get('link_payload_gbps')) for _, c in rc
                        if c.get('link_gbps')})
        lines.append('#')
        lines.append('#  collectives[%d]: %s over %d ranks (%s), %s' % (
            i, op, len(hosts), ' '.join(hosts), '; '.join(
                '%g Gb/s links: busbw at most %.4f GB/s (their payload rate)' % (g, pg / 8)
                for g, pg in links) or 'links unknown'))
        lines.append('#')
        lines.append('#%12s %12s %8s %6s %6s %11s %11s %11s %8s %6s %6s %5s' % (
            'size', 'count', 'type', 'redop', 'root', 'time', 'algbw', 'busbw', 'of link', 'PFC',
            'drops', 'CPU'))
        lines.append('#%12s %12s %8s %6s %6s %11s %11s %11s %8s %6s %6s %5s' % (
            '(B)', '(elements)', '', '', '', '(us)', '(GB/s)', '(GB/s)', '', '', '', ''))
        bus = []
        redop = 'sum' if op in ('allreduce', 'reducescatter') else 'none'
        for r, c in sorted(rc, key=lambda x: x[1].get('size_bytes') or 0):
            size = c.get('size_bytes') or 0
            cpu = r.get('worker_cpu_share')
            of_link = ('%.1f%%' % (100 * c['busbw_link_fraction'])
                       if c.get('busbw_link_fraction') is not None else '-')
            tail_ = ' %8s %6s %6s %5s' % (
                of_link, r.get('pfc_frames_sent', '-'), r.get('drops', '-'),
                '-' if cpu is None else '%.0f%%' % (100 * cpu))
            head = ' %12d %12d %8s %6s %6d' % (size, size // 4, 'float', redop, -1)
            if 'error' in r:
                lines.append(head + ' %11s' % 'failed')
            elif not c.get('done'):
                lines.append(head + ' %11s %11s %11s' % ('not done', '-', '-') + tail_)
            else:
                bus.append(c['busbw_GBps'])
                lines.append(head + ' %11.1f %11.4f %11.4f' % (c['time_us'], c['algbw_GBps'],
                                                             c['busbw_GBps']) + tail_)
        lines.append('# Out of bounds values : %d (collectives not done in the run)' % (
            sum(1 for r, c in rc if not c.get('done'))))
        if any((c.get('busbw_link_fraction') or 0) > 1.02 for _, c in rc):
            lines.append('# Above 100% of link  : faster than the links can carry: the emulated '
                         'hosts\' link shapers let a bucket (>= 18.5 KB) out at once after an '
                         'idle wait, and make up time a descheduled worker lost (see the CPU '
                         'column); a small collective is only a few buckets')
        lines.append('# Avg bus bandwidth    : %s' % (fmt_num(sum(bus) / len(bus), '%.4f') if bus else 'n/a'))
        lines.append('#')
    return '\n'.join(lines)


def run_line(r):
    """The figures of one run on its progress line."""
    parts = []
    if 'goodput_fraction' in r:
        parts.append('goodput %s of ideal (%.3f Gb/s), out-of-order %s' % (
            fmt_num(r['goodput_fraction']), r['goodput_gbps'],
            fmt_num(r['out_of_order_fraction'], '%.4f')))
    if 'max_queue_bytes' in r:
        parts.append('max queue %s' % fmt_bytes(r['max_queue_bytes']))
    if r.get('senders'):
        parts.append('senders %s Gb/s (%s..%s), CNPs %d, resent %d' % (
            fmt_num(r['senders_goodput_gbps']), fmt_num(r['sender_goodput_min']),
            fmt_num(r['sender_goodput_max']), r['cnp_received'], r['retransmitted']))
    for c in r.get('collectives') or []:
        parts.append('%s %s B: %s' % (c.get('op'), c.get('size_bytes'),
                                      '%.1f us, busbw %.4f GB/s' % (c['time_us'], c['busbw_GBps'])
                                      if c.get('done') else 'not done'))
    if r.get('bottleneck') and r.get('senders') and 'max_queue_bytes' not in r:
        parts.append('%s queue max %s' % (r['bottleneck'], fmt_bytes(r['bottleneck_max_queue_bytes'])))
    parts.append('drops %d, PFC %d' % (r['drops'], r['pfc_frames_sent']))
    return ', '.join(parts)
