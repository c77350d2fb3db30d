"""A link failure in a fabric run (fabric.cable_events: a cable cut, maybe up again later): from
the stats and the time series, how long the two switches at its ends kept transmitting into it
(the failover time), what moved to the other members of the groups it was in, and the fabric's
received goodput around the cut (its dip and the time to recover to 90 % of before); with
fabric_convergence, when the routes converged after it and the black hole on either side."""

import json

from .fabric_convergence import CONVERGENCE_MEAN, hole_figures, routing_figures

RECOVER_SHARE = 0.9   # "recovered": the goodput back at this share of its mean before the cut


def cable_cut(conf):
    """(cable as named, cut at ms, up again at ms or None) of the first `down` event of
    fabric.cable_events in a run's fabric file, or None without one."""
    fab = (conf or {}).get('fabric') or {}
    events = fab.get('cable_events') or []
    if not isinstance(events, list):
        return None
    for i, e in enumerate(events):
        if not isinstance(e, dict) or e.get('state') != 'down':
            continue
        up = next((float(u['at_ms']) for u in events[i + 1:] if isinstance(u, dict)
                   and u.get('cable') == e.get('cable') and u.get('state') == 'up'), None)
        return str(e.get('cable')), float(e['at_ms']), up
    return None


def find_cable(stats, name):
    """The stats' cable (name 'A-B', A and B as SWITCH.PORT) a cable event names by an end or
    whole, or None."""
    for c in stats.get('cables') or []:
        a, _, b = str(c.get('name', '')).partition('-')
        if name in (a, b, c.get('name')):
            return c
    return None


def read_series(path):
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def series_port(sample, switch, port):
    for s in sample.get('switches') or []:
        if s.get('name') == switch:
            for p in s.get('ports') or []:
                if p.get('name') == port:
                    return p
    return {}


def received_bytes(sample, host_ports):
    """What the fabric's hosts received by this sample: the payload the NICs' responder QPs took
    in; without NICs, the bytes the leaves' host ports sent to their hosts (wire bytes)."""
    payload = wire = 0
    nics = False
    for s in sample.get('switches') or []:
        for h in s.get('hosts') or []:
            for q in h.get('qps') or []:
                nics = True
                if q.get('role') == 'responder':
                    payload += q.get('rx_bytes') or 0
        if not nics:
            for p in s.get('ports') or []:
                if (s.get('name'), p.get('name')) in host_ports:
                    wire += p.get('tx_bytes') or 0
    return (payload, 'payload') if nics else (wire, 'wire')


def qp_figures(samples, ts, cut, until):
    """The receiving QPs (the NICs' responders) whose goodput while the cable was down was more
    than 10 % below their own before the cut: the flows the failure slowed (moved onto a busier
    member, or stalled), of all that received before it."""
    series = {}   # a QP's rx_bytes per sample (0 before it appears)
    for i, s in enumerate(samples):
        for sw in s.get('switches') or []:
            for h in sw.get('hosts') or []:
                for q in h.get('qps') or []:
                    if q.get('role') == 'responder':
                        key = (sw.get('name'), h.get('port'), q.get('qpn'), q.get('peer'))
                        series.setdefault(key, [0] * len(samples))[i] = q.get('rx_bytes') or 0
    i0, ic, iu = index_at(ts, cut / 2), index_at(ts, cut), index_at(ts, until)
    busy = slower = 0
    for rx in series.values():
        before, down = rate(rx, ts, i0, ic), rate(rx, ts, ic, iu)
        if before:
            busy += 1
            slower += down is not None and down < 0.9 * before
    return {'qps_receiving': busy, 'qps_slower': slower}


def index_at(ts, t):
    """The last sample at or before t (the first one if none)."""
    best = 0
    for i, x in enumerate(ts):
        if x <= t + 1e-12:
            best = i
    return best


def rate(values, ts, i, j):
    """Gb/s of a byte counter between samples i and j."""
    return (values[j] - values[i]) * 8 / (ts[j] - ts[i]) / 1e9 if j > i and ts[j] > ts[i] else None


def goodput_figures(ts, rx, cut, until, window_ms):
    """The received goodput per series interval and over a trailing window of window_ms: its
    mean before the cut (the half of the run before it), its mean while the cable is down, its
    smallest windowed value after the cut, and the time from the cut until the windowed goodput
    is at RECOVER_SHARE of before for good (to the end of the run); for comparison the smallest
    windowed value before the cut (windows within its second half)."""
    period = (ts[-1] - ts[0]) / (len(ts) - 1) if len(ts) > 1 else 0
    k = max(1, int(round(window_ms / 1e3 / period))) if period else 1
    raw = [None] + [rate(rx, ts, i - 1, i) for i in range(1, len(ts))]
    smooth = [None] * len(ts)
    for i in range(k, len(ts)):
        smooth[i] = rate(rx, ts, i - k, i)
    i0, ic, iu = index_at(ts, cut / 2), index_at(ts, cut), index_at(ts, until)
    before = rate(rx, ts, i0, ic)
    down = rate(rx, ts, ic, iu)
    after = [(ts[i], v) for i, v in enumerate(smooth) if v is not None and ts[i] > cut + 1e-12]
    low = min((v for _, v in after), default=None)
    low_before = min((v for i, v in enumerate(smooth) if v is not None and i0 + k <= i <= ic), default=None)
    recover = None
    if before and after:
        bad = [t for t, v in after if v < RECOVER_SHARE * before]
        if not bad:
            recover = 0.0
        elif bad[-1] < after[-1][0]:   # back above for good before the end
            nxt = next(t for t, _ in after if t > bad[-1])
            recover = (nxt - cut) * 1e6
    return {'goodput_before_gbps': before, 'goodput_down_gbps': down, 'goodput_min_gbps': low,
            'goodput_min_before_gbps': low_before,
            'goodput_min_fraction': low / before if low is not None and before else None,
            'recover_us': recover, 'goodput_window_ms': k * period * 1e3,
            '_goodput': [[round(t * 1e3, 6), v, s] for t, v, s in zip(ts, raw, smooth) if v is not None]}


def end_figures(samples, ts, switch, port, cut, until):
    """One end of the cut cable: when its port last transmitted (the end of the last series
    interval in which its tx_bytes grew, before the cable came back) and when the series first
    shows its link down, both from the cut, in microseconds (upper bounds: the series' period)."""
    tx = [series_port(s, switch, port).get('tx_bytes') or 0 for s in samples]
    up = [series_port(s, switch, port).get('link_up') for s in samples]
    last = None
    for i in range(1, len(ts)):
        if ts[i] <= until + 1e-12 and tx[i] > tx[i - 1]:
            last = ts[i]
    ic = index_at(ts, cut)
    seen = next((ts[i] for i in range(len(ts)) if ts[i] > cut - 1e-12 and up[i] is False), None)
    return {'port': '%s.%s' % (switch, port),
            'tx_stop_us': max(0.0, (last - cut) * 1e6) if last is not None else 0.0,
            'busy_before': tx[ic] > tx[0],
            'link_down_seen_us': (seen - cut) * 1e6 if seen is not None else None}


def member_bytes(samples, switch, group, port):
    """A group member's tx bytes per sample from the series (None where the group is not in it:
    groups of one member never are; those converged routes made appear after the cut)."""
    out = []
    for s in samples:
        sw = next((x for x in s.get('switches') or [] if x.get('name') == switch), {})
        out.append(next((m.get('bytes') or 0 for m in sw.get('members') or []
                         if m.get('group') == group and m.get('port') == port), None))
    return out


def successors(samples, ts, sw, ports, cut):
    """The groups converged routes moved a group's routes to: on the same switch, first in the
    series after the cut, with members among the group's ports (the cable's removed)."""
    first, members = {}, {}
    for t, s in zip(ts, samples):
        for x in s.get('switches') or []:
            if x.get('name') == sw:
                for m in x.get('members') or []:
                    first.setdefault(m.get('group'), t)
                    members.setdefault(m.get('group'), set()).add(m.get('port'))
    return sorted(g for g, t in first.items() if t > cut + 1e-12 and members[g] <= set(ports))


def member_figures(stats, samples, ts, ends, cut, until):
    """Every group (on the switches at the cable's ends) with one of its ports as a member: each
    member's Gb/s before the cut (its second half) and while the cable was down, from the
    series' members (groups of one member are not in the series: only the stats' totals), with
    what the group's successors (the groups converged routes moved to) sent on the same port,
    and the policy's steered_away (packets, or flowlets, moved off a dead member)."""
    i0, ic, iu = index_at(ts, cut / 2), index_at(ts, cut), index_at(ts, until)
    rows, steered, failovers, moved, gain = [], 0, 0, 0.0, 0.0
    single = []
    for sw in stats.get('switches') or []:
        dead = {p for s, p in ends if s == sw.get('name')}
        if not dead:
            continue
        for g in sw.get('groups') or []:
            ports = [m.get('port') for m in g.get('members') or []]
            if not dead & set(ports):
                continue
            steered += ((g.get('policy') or {}).get('counters') or {}).get('steered_away') or 0
            failovers += g.get('failovers') or 0
            if len(ports) == 1:
                single.append('%s.%s' % (sw['name'], g.get('name')))
            then = successors(samples, ts, sw['name'], ports, cut)
            for port in ports:
                b = member_bytes(samples, sw['name'], g.get('name'), port)
                if len(b) != len(ts) or any(x is None for x in b):
                    continue
                for n in then:
                    b = [x + (y or 0) for x, y in zip(b, member_bytes(samples, sw['name'], n, port))]
                before, after = rate(b, ts, i0, ic), rate(b, ts, ic, iu)
                rows.append({'switch': sw['name'], 'group': g.get('name'), 'then': '+'.join(then),
                             'port': port, 'dead': port in dead, 'before_gbps': before, 'down_gbps': after})
                if port in dead:
                    moved += before or 0
                else:
                    gain += (after or 0) - (before or 0)
    return {'members': rows, 'steered_away': steered, 'group_failovers': failovers,
            'moved_gbps': moved, 'survivors_gain_gbps': gain, 'single_member_groups': single}


def failover_figures(conf, stats, series_path, window_ms):
    """The link-failure figures of one run ({} without a cable cut in its fabric file)."""
    cut_ev = cable_cut(conf)
    if cut_ev is None:
        return {}
    name, cut_ms, up_ms = cut_ev
    out = {'cut_cable': name, 'cut_ms': cut_ms, 'up_ms': up_ms}
    cable = find_cable(stats, name)
    drops = {}
    for sw in stats.get('switches') or []:
        for k, v in (sw.get('drops') or {}).items():
            drops[k] = drops.get(k, 0) + (v or 0)
    out['link_down_drops'] = drops.get('link_down', 0)
    out['blackholed'] = drops.get('no_live_member', 0)
    out.update(routing_figures(conf, stats, cut_ms))
    if cable is None:
        out['failover_error'] = 'no cable %s in the stats' % name
        return out
    out['cut_cable'] = cable.get('name')
    out['lost_link_down'] = sum(d.get('lost_link_down') or 0 for d in cable.get('directions') or [])
    try:
        samples = read_series(series_path)
    except (OSError, ValueError) as e:
        out['failover_error'] = 'time series %s: %s' % (series_path, e)
        return out
    if len(samples) < 3:
        out['failover_error'] = 'time series %s: fewer than 3 samples' % series_path
        return out
    ts = [float(s.get('t_s') or 0) for s in samples]
    cut = cut_ms / 1e3
    if not ts[0] < cut < ts[-1]:
        out['failover_error'] = 'the cut at %g ms is not within the series (%g .. %g ms)' % (
            cut_ms, ts[0] * 1e3, ts[-1] * 1e3)
        return out
    if up_ms is not None and up_ms / 1e3 >= ts[-1]:
        out['up_ms'] = up_ms = None   # back up only after the run's end
    until = up_ms / 1e3 if up_ms is not None else ts[-1]
    out['series_ms'] = (ts[-1] - ts[0]) / (len(ts) - 1) * 1e3
    ends = [tuple(e.split('.', 1)) for e in str(cable.get('name')).split('-', 1)]
    out['ends'] = [end_figures(samples, ts, s, p, cut, until) for s, p in ends]
    out['failover_us'] = max(e['tx_stop_us'] for e in out['ends'])
    out.update(member_figures(stats, samples, ts, ends, cut, until))
    conv = out.get('converged_ms')
    out.update(hole_figures(stats, samples, ts, cut, conv / 1e3 if conv is not None else None))
    out.update(qp_figures(samples, ts, cut, until))
    host_ports = {(sw.get('name'), p.get('name')) for sw in stats.get('switches') or []
                  for p in sw.get('ports') or [] if p.get('kind') == 'emulated_host'}
    rx, unit = zip(*(received_bytes(s, host_ports) for s in samples))
    out['goodput_unit'] = unit[0]
    out.update(goodput_figures(ts, list(rx), cut, until, window_ms))
    return out


# The figures averaged over a run's seeds (fabric_figures.aggregate's MEAN, for a cut).
FAILOVER_MEAN = ('failover_us', 'lost_link_down', 'link_down_drops', 'blackholed', 'steered_away',
                 'group_failovers', 'moved_gbps', 'survivors_gain_gbps', 'goodput_before_gbps',
                 'goodput_down_gbps', 'goodput_min_gbps', 'goodput_min_fraction',
                 'goodput_min_before_gbps', 'recover_us', 'qps_receiving', 'qps_slower') + CONVERGENCE_MEAN


def aggregate_failover(r, ok):
    """A run's link-failure figures over its seeds: the mean of each, the worst failover and
    recovery (a seed that never recovered makes the run's recover_us None), the cut as written,
    the members, the routing updates and the goodput series of the first seed; the black-holed
    split estimated ('bytes') when any seed's was."""
    cuts = [s for s in ok if s.get('cut_ms') is not None]
    if not cuts:
        return r
    for k in ('cut_cable', 'cut_ms', 'up_ms', 'series_ms', 'goodput_unit', 'goodput_window_ms',
              'ends', 'members', 'single_member_groups', '_goodput', 'convergence_ms',
              'routing_updates', 'hole_switches'):
        r[k] = cuts[0].get(k)
    splits = [s.get('blackholed_split') for s in cuts]
    r['blackholed_split'] = 'bytes' if 'bytes' in splits else splits[0]
    for k in FAILOVER_MEAN:
        vals = [s.get(k) for s in cuts if s.get(k) is not None]
        r[k] = (vals[0] if len(vals) == 1 else sum(vals) / len(vals)) if vals else None
    fo = [s.get('failover_us') for s in cuts if s.get('failover_us') is not None]
    r['failover_us_max'] = max(fo) if fo else None
    rec = [s.get('recover_us') for s in cuts]
    r['recover_us_max'] = None if any(v is None for v in rec) else max(rec)
    routing = [e for s in cuts for e in s.get('routing_errors') or []]
    if routing:
        r['routing_errors'] = routing
    errors = [s['failover_error'] for s in cuts if s.get('failover_error')]
    if errors:
        r['failover_error'] = '; '.join(errors)
    return r
