"""What a fabric experiment prints and writes: the summary table (a row per run), the pause tree
(the ports that asserted PFC, per run), the progress line of one run, and the CSV files
(summary.csv, seeds.csv, hosts.csv, pauses.csv, cables.csv)."""

import os

from .console import fmt_num
from .fabric_collectives import SUMMARY_COLLECTIVE_FIELDS
from .fabric_failover_report import FAILOVER_FIELDS, has_cut
from .outfiles import write_rows_csv
from .tables import text_table

PAUSE_ROWS = 16   # the printed pause tree's ports at most (pauses.csv has them all)

SUMMARY_FIELDS = ['run', 'label', 'seeds', 'goodput_gbps', 'goodput_gbps_min', 'goodput_gbps_max',
                  'ideal_gbps', 'goodput_fraction', 'goodput_fraction_min', 'goodput_fraction_max',
                  'victim_gbps', 'victim_gbps_min', 'victim_gbps_max', 'retransmitted',
                  'out_of_order', 'missing_psns', 'cnp_received', 'messages_done',
                  'pfc_frames_sent', 'pause_us', 'lossless_drops', 'lossless_drops_before_queue', 'drops',
                  'balanced', 'sim_ms',
                  'wall_s', 'slowdown', 'frames_per_wall_s', 'frames', 'process_wall_s',
                  'exit_code', 'set', 'error']
SEED_FIELDS = ['run', 'seed', 'file', 'goodput_gbps', 'ideal_gbps', 'goodput_fraction', 'victim_gbps',
               'retransmitted', 'out_of_order', 'missing_psns', 'cnp_received', 'messages_done',
               'pfc_frames_sent', 'pause_us', 'lossless_drops', 'lossless_drops_before_queue', 'drops',
               'drops_by_reason',
               'balanced', 'sim_ms', 'wall_s', 'slowdown', 'frames_per_wall_s', 'frames',
               'process_wall_s', 'exit_code', 'error']
HOST_FIELDS = ['run', 'seed', 'name', 'link_gbps', 'rx_goodput_gbps', 'tx_acked_gbps',
               'messages_done', 'retransmitted', 'out_of_order', 'missing_psns', 'cnp_received',
               'fct_mean_us', 'fct_p50_us', 'fct_p99_us', 'fct_max_us']
PAUSE_FIELDS = ['run', 'seed', 'port', 'peer', 'assert_ns', 'xoff_sent', 'priorities']
CABLE_FIELDS = ['run', 'seed', 'direction', 'gbps', 'link_gbps', 'sent_frames', 'sent_bytes', 'lost',
                'lost_link_down', 'up']


def summary_table(runs, seeds, victims):
    """One row per run: goodput (mean over seeds, with min and max), the victims', the NICs'
    resends and reordering, PFC, lossless drops, the books, virtual and wall time, speed."""
    many = len(seeds) > 1
    cols = [('run', 'run', None), ('Gb/s', 'goodput_gbps', '%.1f'), ('of ideal', 'goodput_fraction', '%.3f')]
    if many:
        cols += [('min', 'goodput_fraction_min', '%.3f'), ('max', 'goodput_fraction_max', '%.3f')]
    if victims:
        cols += [('victim Gb/s', 'victim_gbps', '%.2f')]
        if many:
            cols += [('min', 'victim_gbps_min', '%.2f'), ('max', 'victim_gbps_max', '%.2f')]
    cols += [('resent', 'retransmitted', '%.0f'), ('out-of-order', 'out_of_order', '%.0f'),
             ('PFC', 'pfc_frames_sent', '%.0f'), ('pause ms', 'pause_us', 'ms'),
             ('lossless drops', 'lossless_drops', '%.0f'), ('books', 'balanced', 'books'),
             ('sim ms', 'sim_ms', '%.3g'), ('wall s', 'wall_s', '%.2f'), ('slowdown', 'slowdown', '%.0fx'),
             ('frames/wall s', 'frames_per_wall_s', '%.0f')]
    rows = [[t for t, _, _ in cols]]
    for r in runs:
        row = []
        for i, (_, k, spec) in enumerate(cols):
            v = r.get(k)
            if i == 0:
                row.append(str(v))
            elif r.get('goodput_gbps') is None and 'error' in r:
                row.append('failed' if i == 1 else '-')
            elif spec == 'books':
                row.append('n/a' if v is None else 'balanced' if v else 'NOT')
            elif spec == 'ms':
                row.append(fmt_num(v / 1e3 if v is not None else None, '%.3f'))
            else:
                row.append(fmt_num(v, spec))
        rows.append(row)
    return text_table(rows)


def pause_table(runs):
    """The pause tree: a row per switch port that asserted PFC towards its neighbour in some run
    (the longest first), a column per run: the time it asserted pause, in microseconds (mean
    over the seeds), summed over priorities."""
    done = [r for r in runs if r.get('pauses') is not None]
    ports = {}
    for r in done:
        for p in r['pauses']:
            e = ports.setdefault(p['port'], [p['peer'], 0.0])
            e[1] = max(e[1], p['assert_ns'])
    if not ports:
        return 'pause tree: no switch port asserted PFC in any run'
    order = sorted(ports, key=lambda n: -ports[n][1])
    rows = [['port', 'pauses'] + [r['run'] for r in done]]
    for n in order[:PAUSE_ROWS]:
        vals = {r['run']: next((p['assert_ns'] for p in r['pauses'] if p['port'] == n), 0.0) for r in done}
        rows.append([n, ports[n][0]] + ['%.1f' % (vals[r['run']] / 1e3) for r in done])
    more = len(order) - PAUSE_ROWS
    text = text_table(rows, right_from=2)
    head = 'pause tree: the switch ports that asserted PFC towards their neighbour ("pauses"), ' \
           'and for how many microseconds in each run (summed over priorities%s)' % (', mean over seeds' if any(
               len(r.get('seeds') or []) > 1 for r in done) else '')
    return head + '\n' + text + ('\n... and %d more ports (pauses.csv)' % more if more > 0 else '')


def run_line(f, victims):
    """The figures of one run (one seed) on its progress line."""
    parts = ['goodput %s of ideal (%s of %s Gb/s)' % (
        fmt_num(f.get('goodput_fraction')), fmt_num(f.get('goodput_gbps'), '%.1f'),
        fmt_num(f.get('ideal_gbps'), '%.0f'))]
    if victims:
        parts.append('victim %s Gb/s' % fmt_num(f.get('victim_gbps'), '%.2f'))
    parts.append('resent %d, out-of-order %d, PFC %d (pause %.3f ms), lossless drops %d, books %s' % (
        f['retransmitted'], f['out_of_order'], f['pfc_frames_sent'], f['pause_us'] / 1e3,
        f['lossless_drops'], 'balanced' if f.get('balanced') else 'NOT BALANCED'))
    parts.append('%sx slower than real time' % fmt_num(f.get('slowdown'), '%.0f'))
    return ', '.join(parts)


def with_extra(fields, runs, tail):
    """fields with the link-failure and collective columns before its tail, when some run has
    a cable cut or collectives."""
    extra = (FAILOVER_FIELDS if has_cut(runs) else []) + \
        (SUMMARY_COLLECTIVE_FIELDS if any(r.get('collectives') for r in runs) else [])
    if tail == 'seeds':
        extra = [k for k in extra if k not in ('failover_us_max', 'recover_us_max', 'busbw_gbps_min',
                                               'busbw_gbps_max')]
    cut = fields.index('exit_code')
    return fields[:cut] + extra + fields[cut:]


def write_csvs(out_dir, runs):
    """summary.csv (a row per run), seeds.csv (per run and seed), hosts.csv, pauses.csv,
    cables.csv (per run, seed and host, port or cable direction); with a cable cut or
    collectives, their columns in summary.csv and seeds.csv. Returns the names."""
    rows = []
    for r in runs:
        row = dict(r)
        row['seeds'] = [s['seed'] for s in r.get('seeds') or [] if s.get('seed') is not None] or None
        row['set'] = r.get('set')
        rows.append(row)
    write_rows_csv(os.path.join(out_dir, 'summary.csv'), with_extra(SUMMARY_FIELDS, runs, 'summary'), rows)
    seeds, hosts, pauses, cables = [], [], [], []
    for r in runs:
        for s in r.get('seeds') or []:
            base = {'run': r['run'], 'seed': s.get('seed')}
            seeds.append(dict(s, run=r['run'], file=os.path.basename((s.get('files') or {}).get('json', ''))))
            for h in s.get('hosts') or []:
                fct = h.get('fct_us') or {}
                hosts.append(dict(h, **base, **{'fct_%s_us' % k: fct.get(k) for k in ('mean', 'p50', 'p99', 'max')}))
            pauses += [dict(p, **base) for p in s.get('pauses') or []]
            cables += [dict(c, **base) for c in s.get('cables') or []]
    write_rows_csv(os.path.join(out_dir, 'seeds.csv'), with_extra(SEED_FIELDS, runs, 'seeds'), seeds)
    write_rows_csv(os.path.join(out_dir, 'hosts.csv'), HOST_FIELDS, hosts)
    write_rows_csv(os.path.join(out_dir, 'pauses.csv'), PAUSE_FIELDS, pauses)
    write_rows_csv(os.path.join(out_dir, 'cables.csv'), CABLE_FIELDS, cables)
    return ['summary.csv', 'seeds.csv', 'hosts.csv', 'pauses.csv', 'cables.csv']
