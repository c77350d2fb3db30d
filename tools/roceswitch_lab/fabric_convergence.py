"""The routes after a cable cut (docs/fabric.md, "Routes after a cable event"): fast failover
hides a dead cable only from the two switches it joins; fabric.convergence_ms after the event
every switch's routes are recomputed, which ends the black hole a switch with no live member
left (no_live_member drops) was. From the stats' fabric.routing: the setting, when routes
converged after the cut and how many changed; from the series: the black-holing switches' lost
bytes per interval, which place the black-holed drops before or after that instant."""

from .console import fmt_num
from .tables import text_table


def convergence_setting(conf, stats):
    """fabric.convergence_ms as the run had it: ms (the stats' convergence_us when they have
    it, else the file's key, default 1), or 'never'."""
    routing = (stats.get('fabric') or {}).get('routing')
    if isinstance(routing, dict) and routing.get('convergence_us') is not None:
        return float(routing['convergence_us']) / 1e3
    v = ((conf or {}).get('fabric') or {}).get('convergence_ms', 1)
    if isinstance(v, str) and v.strip() == 'never':
        return 'never'
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def routing_figures(conf, stats, cut_ms):
    """The routing update the cut caused: the first of fabric.routing.updates at or after it
    (converged_ms: virtual ms; None when the routes never converge or not within the run), its
    switches, routes changed and withdrawn; and every update of the run."""
    routing = (stats.get('fabric') or {}).get('routing')
    updates = (routing.get('updates') or []) if isinstance(routing, dict) else []
    out = {'convergence_ms': convergence_setting(conf, stats),
           'routing_updates': [dict(u) for u in updates if isinstance(u, dict)],
           'converged_ms': None, 'switches_changed': None, 'routes_changed': None,
           'routes_withdrawn': None}
    first = next((u for u in out['routing_updates']
                  if float(u.get('at_us') or 0) >= cut_ms * 1e3 - 1e-6), None)
    if first is not None:
        out.update({'converged_ms': float(first['at_us']) / 1e3, 'switches_changed': first.get('switches'),
                    'routes_changed': first.get('routes'), 'routes_withdrawn': first.get('withdrawn')})
    errors = [str(e) for u in out['routing_updates'] for e in u.get('errors') or []]
    if errors:
        out['routing_errors'] = errors
    return out


def switch_balance(sample, name):
    """(bytes received, sent, queued) over a switch's ports in one series sample."""
    for s in sample.get('switches') or []:
        if s.get('name') == name:
            ports = s.get('ports') or []
            return (sum(p.get('rx_bytes') or 0 for p in ports), sum(p.get('tx_bytes') or 0 for p in ports),
                    sum(sum(p.get('queue_bytes') or []) for p in ports))
    return None


def hole_figures(stats, samples, ts, cut, converged):
    """The black hole in time. The series has no drop counters, but a switch's bytes in, less
    its bytes out and the growth of its queues, is what it lost in an interval (dropped, for
    any reason, or consumed: PFC frames). Over the switches with no_live_member drops: the lost
    bytes before and after the convergence instant (an interval belongs to after when it starts
    there or later), the end of the last interval after the cut in which they lost anything
    (hole_end_us, from the cut: an upper bound by the series' period), and the black-holed
    count split at convergence (None without one within the run): exact when nothing was lost
    after it, else shared in proportion to the bytes (blackholed_split 'bytes')."""
    holes = [sw.get('name') for sw in stats.get('switches') or []
             if ((sw.get('drops') or {}).get('no_live_member') or 0) > 0]
    total = sum(((sw.get('drops') or {}).get('no_live_member') or 0) for sw in stats.get('switches') or [])
    out = {'hole_switches': holes, 'hole_lost_bytes_before': None, 'hole_lost_bytes_after': None,
           'hole_end_us': None, 'blackholed_before': None, 'blackholed_after': None, 'blackholed_split': None}
    if not holes:
        if converged is not None:
            out.update({'blackholed_before': 0, 'blackholed_after': 0, 'blackholed_split': 'exact'})
        return out
    before = after = 0
    last = None
    for name in holes:
        bal = [switch_balance(s, name) for s in samples]
        if any(b is None for b in bal):
            return out
        for i in range(1, len(ts)):
            lost = (bal[i][0] - bal[i - 1][0]) - (bal[i][1] - bal[i - 1][1]) - (bal[i][2] - bal[i - 1][2])
            if lost <= 0 or ts[i] <= cut + 1e-12:
                continue
            if converged is not None and ts[i - 1] >= converged - 1e-12:
                after += lost
            else:
                before += lost
            last = ts[i] if last is None else max(last, ts[i])
    out.update({'hole_lost_bytes_before': before,
                'hole_lost_bytes_after': after if converged is not None else None,
                'hole_end_us': (last - cut) * 1e6 if last is not None else None})
    if converged is not None:
        if not after:
            out.update({'blackholed_before': total, 'blackholed_after': 0, 'blackholed_split': 'exact'})
        else:
            a = int(round(total * after / float(before + after)))
            out.update({'blackholed_before': total - a, 'blackholed_after': a, 'blackholed_split': 'bytes'})
    return out


# The figures averaged over a run's seeds (with fabric_failover's FAILOVER_MEAN).
CONVERGENCE_MEAN = ('converged_ms', 'switches_changed', 'routes_changed', 'routes_withdrawn',
                    'hole_lost_bytes_before', 'hole_lost_bytes_after', 'hole_end_us',
                    'blackholed_before', 'blackholed_after')
CONVERGENCE_FIELDS = ['convergence_ms', 'converged_ms', 'switches_changed', 'routes_changed',
                      'routes_withdrawn', 'blackholed_before', 'blackholed_after', 'blackholed_split',
                      'hole_end_us', 'hole_lost_bytes_before', 'hole_lost_bytes_after']


def converged_text(r):
    """When routes converged after the cut, for a table: virtual ms, 'never' (the setting), or
    '-' (not within the run)."""
    if r.get('converged_ms') is not None:
        return fmt_num(r['converged_ms'], '%g')
    return 'never' if r.get('convergence_ms') == 'never' else '-'


def convergence_line(f):
    """The routing part of a run's progress line."""
    if f.get('converged_ms') is None:
        return 'routes %s' % ('never recomputed (convergence_ms: never)' if f.get('convergence_ms') == 'never'
                              else 'not recomputed within the run')
    after = f.get('blackholed_after')
    return 'routes converged at %g ms (%d changed, %d withdrawn), black-holed after it %s%s' % (
        f['converged_ms'], f.get('routes_changed') or 0, f.get('routes_withdrawn') or 0,
        '~' if f.get('blackholed_split') == 'bytes' else '', fmt_num(after, '%.0f'))


def dash(x, spec='%.0f'):
    """A figure for a table, '-' where there is none (a run without convergence)."""
    return '-' if x is None else fmt_num(x, spec)


def later_updates(r):
    """The run's routing updates after the cut's (those the cable's return caused, or later
    events'), as 'MS ms: ROUTES' each."""
    ups = [u for u in r.get('routing_updates') or []
           if r.get('converged_ms') is not None and float(u.get('at_us') or 0) / 1e3 > r['converged_ms'] + 1e-9]
    return ', '.join('%g ms: %s' % (float(u.get('at_us') or 0) / 1e3, u.get('routes')) for u in ups) or '-'


def convergence_table(runs):
    """A row per run with a cut: the routes' recomputation after it, and the black hole on
    either side of it."""
    cut = [r for r in runs if r.get('cut_ms') is not None]
    if not cut:
        return ''
    rows = [['run', 'convergence ms', 'converged ms', 'switches', 'routes changed', 'withdrawn',
             'black-holed', 'before', 'after', 'hole ends us', 'later updates']]
    for r in cut:
        conv = r.get('convergence_ms')
        approx = '~' if r.get('blackholed_split') == 'bytes' else ''
        rows.append([r['run'], conv if isinstance(conv, str) else dash(conv, '%g'), converged_text(r),
                     dash(r.get('switches_changed')), dash(r.get('routes_changed')),
                     dash(r.get('routes_withdrawn')), dash(r.get('blackholed')),
                     approx + dash(r.get('blackholed_before')) if r.get('blackholed_before') is not None else '-',
                     approx + dash(r.get('blackholed_after')) if r.get('blackholed_after') is not None else '-',
                     dash(r.get('hole_end_us')), later_updates(r)])
    return ('routes after the cut (fabric.convergence_ms after a cable event every switch\'s routes '
            'are recomputed over the cables that are up: stats fabric.routing): convergence ms: the '
            'setting; converged ms: the virtual time of the first update after the cut (never: not '
            'recomputed; -: not within the run); switches, routes changed, withdrawn: that update\'s '
            'switches and host routes moved to another group, and those withdrawn (no path left); '
            'black-holed: no_live_member drops, and those before and after the convergence (from '
            'the series: the black-holing switches\' bytes in - out - queued per interval; ~: shared in '
            'proportion to those bytes); hole ends us: from the cut to the end of the last '
            'interval in which they lost anything (-: none); later updates: the run\'s next '
            'convergences (after the cable came back), ms: host routes changed:\n' + text_table(rows))
