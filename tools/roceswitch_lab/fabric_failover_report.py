"""What a fabric experiment with a cable cut prints and writes: the link-failure table (a row per
run), its columns in summary.csv and seeds.csv, members.csv (each member of the groups the cable
was in, before the cut and while it was down), goodput_series.csv and failover.png (the fabric's
received goodput over virtual time, a panel per run, the cut, the routes' convergence and the
cable's return marked); and, from fabric_convergence, the table of the routes after the cut."""

import os

from .console import fmt_num
from .fabric_convergence import CONVERGENCE_FIELDS, convergence_line, convergence_table, converged_text
from .fabric_failover import RECOVER_SHARE
from .outfiles import write_rows_csv
from .tables import text_table

FAILOVER_FIELDS = ['cut_cable', 'cut_ms', 'up_ms', 'failover_us', 'failover_us_max', 'lost_link_down',
                   'link_down_drops', 'blackholed', 'group_failovers', 'steered_away', 'moved_gbps',
                   'survivors_gain_gbps', 'qps_receiving', 'qps_slower', 'goodput_unit', 'goodput_before_gbps', 'goodput_down_gbps',
                   'goodput_min_gbps', 'goodput_min_fraction', 'goodput_min_before_gbps',
                   'recover_us', 'recover_us_max', 'goodput_window_ms', 'series_ms'] + CONVERGENCE_FIELDS + \
    ['failover_error']
MEMBER_FIELDS = ['run', 'seed', 'switch', 'group', 'then', 'port', 'dead', 'before_gbps', 'down_gbps']
SERIES_FIELDS = ['run', 'seed', 't_ms', 'goodput_gbps', 'goodput_window_gbps']


def has_cut(runs):
    return any(r.get('cut_ms') is not None for r in runs)


def failover_line(f):
    """A run's (one seed's) link-failure figures for its progress line ('' without a cut)."""
    if f.get('cut_ms') is None:
        return ''
    if f.get('failover_error'):
        return 'cut %s: %s' % (f['cut_cable'], f['failover_error'])
    fo = f['failover_us']
    return ('cut %s at %g ms: failover %s us, goodput %s -> min %s Gb/s, recovered %s, '
            'black-holed %d, lost in the cable %d; %s' % (
                f['cut_cable'], f['cut_ms'], '<= %g' % (f['series_ms'] * 1e3) if fo == 0 else '%.0f' % fo,
                fmt_num(f.get('goodput_before_gbps'), '%.1f'), fmt_num(f.get('goodput_min_gbps'), '%.1f'),
                'after %s us' % fmt_num(f['recover_us'], '%.0f') if f.get('recover_us') is not None else 'never',
                f.get('blackholed') or 0, f.get('lost_link_down') or 0, convergence_line(f)))


def failover_table(runs):
    """A row per run with a cable cut: when the cut's ends stopped transmitting into it, what
    was lost (in the cable, in the dead ports' queues, black-holed by a group with no live
    member), what moved, and the received goodput before, at its lowest and while down, and the
    time to recover to 90 % of before."""
    cut = [r for r in runs if r.get('cut_ms') is not None]
    if not cut:
        return ''
    cables = sorted({str(r.get('cut_cable')) for r in cut})
    rows = [['run'] + (['cable'] if len(cables) > 1 else []) +
            ['cut ms', 'up ms', 'failover us', 'lost in cable', 'link_down drops',
             'black-holed', 'converged ms', 'steered', 'moved Gb/s', 'survivors +Gb/s', 'QPs slower', 'before Gb/s', 'min before',
             'min after', 'min/before', 'while down', 'recover us', 'lossless drops']]
    period = None
    for r in cut:
        period = r.get('series_ms') or period
        fo = r.get('failover_us')
        rows.append([r['run']] + ([str(r.get('cut_cable'))] if len(cables) > 1 else []) +
                    [fmt_num(r.get('cut_ms'), '%g'),
                     fmt_num(r.get('up_ms'), '%g') if r.get('up_ms') is not None else '-',
                     ('<=%.0f' % (r['series_ms'] * 1e3) if fo == 0 else fmt_num(fo, '%.0f'))
                     if fo is not None and r.get('series_ms') else 'n/a',
                     fmt_num(r.get('lost_link_down'), '%.0f'), fmt_num(r.get('link_down_drops'), '%.0f'),
                     fmt_num(r.get('blackholed'), '%.0f'), converged_text(r), fmt_num(r.get('steered_away'), '%.0f'),
                     fmt_num(r.get('moved_gbps'), '%.1f'), fmt_num(r.get('survivors_gain_gbps'), '%+.1f'),
                     '%s/%s' % (fmt_num(r.get('qps_slower'), '%.0f'), fmt_num(r.get('qps_receiving'), '%.0f')),
                     fmt_num(r.get('goodput_before_gbps'), '%.1f'),
                     fmt_num(r.get('goodput_min_before_gbps'), '%.1f'),
                     fmt_num(r.get('goodput_min_gbps'), '%.1f'), fmt_num(r.get('goodput_min_fraction'), '%.2f'),
                     fmt_num(r.get('goodput_down_gbps'), '%.1f'),
                     fmt_num(r.get('recover_us'), '%.0f') if r.get('recover_us') is not None else 'never',
                     fmt_num(r.get('lossless_drops'), '%.0f')])
    win = next((r.get('goodput_window_ms') for r in runs if r.get('goodput_window_ms')), None)
    return ('link failure%s: failover us: from the cut until neither end transmits into the cable '
            '(from the series: <= its period, %s us, when both stopped at once); lost in cable: '
            'frames sent into it while down (0: both ends stopped at the cut); link_down drops: '
            'frames queued on a dead port; '
            'black-holed: no_live_member drops (a group whose every member is down: the other '
            'switches keep sending it traffic until the routes converge); converged ms: when they '
            'did (the table below); steered: the groups\' steered_away (ecmp: '
            'packets of moved flows, flowlet_*: flowlets moved); moved Gb/s: the dead members\' '
            'rate before the cut; survivors +Gb/s: the other members\' gain while it was down (with '
            'the groups converged routes moved to); QPs slower: receiving QPs whose goodput while down was > 10%% below theirs before; '
            'goodput (%s received, Gb/s): mean over the second half before the cut, the lowest '
            'mean over %s ms windows before and after it, the mean while down; recover us: from '
            'the cut until the windowed goodput stays >= %d%% of before (never: not by the end)'
            ':\n' % (' (cable %s)' % cables[0] if len(cables) == 1 else '',
                     fmt_num(period * 1e3 if period else None, '%g'),
                     next((r.get('goodput_unit') for r in runs if r.get('goodput_unit')), 'payload'),
                     fmt_num(win, '%g'), int(RECOVER_SHARE * 100))
            + text_table(rows, right_from=2 if len(cables) > 1 else 1) + '\n\n' + convergence_table(runs))


def write_failover_csvs(out_dir, runs):
    """members.csv and goodput_series.csv (per run and seed); returns the names written."""
    if not has_cut(runs):
        return []
    members, series = [], []
    for r in runs:
        for s in r.get('seeds') or []:
            members += [dict(m, run=r['run'], seed=s.get('seed')) for m in s.get('members') or []]
            series += [{'run': r['run'], 'seed': s.get('seed'), 't_ms': t, 'goodput_gbps': g,
                        'goodput_window_gbps': w} for t, g, w in s.get('_goodput') or []]
    write_rows_csv(os.path.join(out_dir, 'members.csv'), MEMBER_FIELDS, members)
    write_rows_csv(os.path.join(out_dir, 'goodput_series.csv'), SERIES_FIELDS, series)
    return ['members.csv', 'goodput_series.csv']


def failover_plot(plt, exp, runs, save):
    """failover.png: a panel per run with a cut (its first seed): the received goodput per
    series interval (thin) and over the trailing window (thick), the mean before the cut and
    90 % of it, a vertical line at the cut, at each convergence of the routes and where the
    cable came back."""
    done = [r for r in runs if r.get('cut_ms') is not None and r.get('_goodput')]
    if not done:
        return
    fig, axes = plt.subplots(len(done), 1, figsize=(10, 1.9 * len(done) + 1.0), sharex=True, squeeze=False)
    top = max(max((g or 0) for _, g, _ in r['_goodput']) for r in done) * 1.1 or 1.0
    for ax, r in zip(axes[:, 0], done):
        t = [p[0] for p in r['_goodput']]
        ax.plot(t, [p[1] for p in r['_goodput']], color='tab:blue', linewidth=0.5, alpha=0.45,
                label='per %g ms' % r['series_ms'])
        ax.plot([x for x, _, w in r['_goodput'] if w is not None], [w for _, _, w in r['_goodput'] if w is not None],
                color='tab:blue', linewidth=1.6, label='over %g ms' % r['goodput_window_ms'])
        ax.axvline(r['cut_ms'], color='tab:red', linewidth=1.2, label='cut %s' % r['cut_cable'])
        for i, u in enumerate(r.get('routing_updates') or []):
            ax.axvline(float(u.get('at_us') or 0) / 1e3, color='tab:purple', linewidth=1.0, linestyle='-.',
                       label='routes converged' if i == 0 else None)
        if r.get('up_ms') is not None:
            ax.axvline(r['up_ms'], color='tab:green', linewidth=1.2, linestyle='--', label='back up')
        if r.get('goodput_before_gbps'):
            ax.axhline(r['goodput_before_gbps'] * RECOVER_SHARE, color='grey', linestyle=':', linewidth=0.9,
                       label='%d%% of before' % int(RECOVER_SHARE * 100))
        ax.set_ylim(0, top)
        ax.set_ylabel('Gb/s', fontsize=8)
        ax.grid(True, alpha=0.3)
        rec = r.get('recover_us')
        ax.set_title('%s: before %s, min %s Gb/s, recovered %s' % (
            r['run'], fmt_num(r.get('goodput_before_gbps'), '%.1f'), fmt_num(r.get('goodput_min_gbps'), '%.1f'),
            'after %.0f us' % rec if rec is not None else 'never'), fontsize=8, loc='left')
        ax.set_title('routes converged %s, black-holed %s' % (
            {'-': 'after the run', 'never': 'never'}.get(converged_text(r), 'at %s ms' % converged_text(r)),
            fmt_num(r.get('blackholed'), '%.0f')), fontsize=8, loc='right')
    axes[0, 0].legend(fontsize=7, loc='lower left', ncol=6)
    axes[-1, 0].set_xlabel('virtual time (ms)')
    # The figure's title as the top panel's centre title: tight_layout leaves room for that,
    # not for a suptitle, which the panel titles would overlap.
    axes[0, 0].set_title('%s: the fabric\'s received goodput (%s) over time%s\n' % (
        exp.name, done[0].get('goodput_unit', 'payload'),
        ' (first seed)' if any(len(r.get('seeds') or []) > 1 for r in done) else ''), fontsize=10, pad=10)
    save(fig, 'failover.png')
