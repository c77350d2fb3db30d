"""The figures of a fabric run (from roceswitch's fabric stats JSON): goodput against the ideal,
the NICs' resends and reordering, PFC (frames, and each port's pause time: the pause tree), drops,
the cables' rates, the books and the speed; and a run's figures over its seeds (mean, min, max)."""

# Drop reasons that lose nothing: PFC frames a port consumed, what was still queued at the stop,
# frames for the switch itself.
NOT_LOST = ('shutdown_flush', 'mac_control_consumed', 'local_delivered')

# The figures averaged over a run's seeds; (min, max) are kept for those in RANGE.
MEAN = ('goodput_gbps', 'goodput_fraction', 'ideal_gbps', 'victim_gbps', 'retransmitted',
        'out_of_order', 'missing_psns', 'cnp_received', 'messages_done', 'pfc_frames_sent',
        'pause_us', 'lossless_drops', 'lossless_drops_before_queue', 'drops', 'sim_ms', 'wall_s', 'slowdown',
        'frames_per_wall_s', 'frames', 'process_wall_s')
RANGE = ('goodput_gbps', 'goodput_fraction', 'victim_gbps')


def cable_directions(cable):
    """[(name, direction JSON)] of a cable 'leaf1.up1-spine1.down1': a->b is from_side 0."""
    a, _, b = str(cable.get('name', '?')).partition('-')
    out = []
    for d in cable.get('directions') or []:
        src, dst = (a, b) if d.get('from_side', 0) == 0 else (b, a)
        out.append(('%s>%s' % (src, dst), d))
    return out


def fabric_figures(stats, victims):
    """Every figure of one fabric run."""
    fab = stats.get('fabric') or {}
    wall = fab.get('wall') or {}
    virt = float(fab.get('virtual_s') or 0)
    hosts = (stats.get('hosts') or {}).get('list') or []
    good = (stats.get('hosts') or {}).get('goodput') or {}
    by_host = {h.get('name'): h for h in hosts}

    def hsum(k):
        return sum(h.get(k) or 0 for h in hosts)

    pfc = pause = lossless = before_queue = drops = 0
    by_reason = {}
    pauses = []   # [{port, peer, assert_ns, xoff_sent, priorities}]
    for sw in stats.get('switches') or []:
        lossless += sw.get('lossless_drops') or 0
        before_queue += sw.get('lossless_drops_before_queue') or 0
        for k, v in (sw.get('drops') or {}).items():
            if v and k not in NOT_LOST:
                by_reason[k] = by_reason.get(k, 0) + v
                drops += v
        for p in sw.get('ports') or []:
            pf = p.get('pfc') or {}
            pfc += pf.get('frames_sent') or 0
            ns = sum(g.get('assert_ns') or 0 for g in pf.get('pg') or [])
            xoff = sum(g.get('xoff_sent') or 0 for g in pf.get('pg') or [])
            if ns or xoff:
                pause += ns
                pauses.append({'port': '%s.%s' % (sw.get('name'), p.get('name')),
                               'peer': peer_of(sw.get('name'), p), 'assert_ns': ns, 'xoff_sent': xoff,
                               'priorities': [g.get('pg') for g in pf.get('pg') or []
                                              if g.get('assert_ns') or g.get('xoff_sent')]})
    cables = []
    for c in stats.get('cables') or []:
        for name, d in cable_directions(c):
            cables.append({'direction': name, 'gbps': (d.get('sent_bytes') or 0) * 8 / virt / 1e9 if virt else None,
                           'link_gbps': c.get('gbps'), 'sent_frames': d.get('sent_frames'),
                           'sent_bytes': d.get('sent_bytes'), 'lost': d.get('lost'),
                           'lost_link_down': d.get('lost_link_down'), 'up': c.get('up')})
    missing = [v for v in victims if v not in by_host]
    victim = sum(by_host[v].get('rx_goodput_gbps') or 0 for v in victims if v in by_host) \
        if victims and not missing else None
    totals = fab.get('totals') or {}
    return {
        'goodput_gbps': good.get('gbps'), 'ideal_gbps': good.get('ideal_gbps'),
        'goodput_fraction': good.get('fraction'),
        'victim_gbps': victim, 'victims_missing': missing,
        'retransmitted': hsum('retransmitted'), 'out_of_order': hsum('out_of_order'),
        'missing_psns': hsum('missing_psns'), 'cnp_received': hsum('cnp_received'),
        'messages_done': hsum('messages_done'),
        'pfc_frames_sent': pfc, 'pause_us': pause / 1e3, 'lossless_drops': lossless,
        'lossless_drops_before_queue': before_queue,
        'drops': drops, 'drops_by_reason': by_reason,
        'balanced': totals.get('balanced'),
        'sim_ms': virt * 1e3, 'wall_s': wall.get('real_s'), 'slowdown': wall.get('slowdown'),
        'frames_per_wall_s': wall.get('frames_per_wall_s'), 'frames': fab.get('frames'),
        'switches': fab.get('switches'), 'hosts_count': fab.get('hosts'), 'links': fab.get('links'),
        'hosts': [{'name': h.get('name'), 'link_gbps': h.get('link_gbps'),
                   'rx_goodput_gbps': h.get('rx_goodput_gbps'), 'tx_acked_gbps': h.get('tx_acked_gbps'),
                   'messages_done': h.get('messages_done'), 'retransmitted': h.get('retransmitted'),
                   'out_of_order': h.get('out_of_order'), 'missing_psns': h.get('missing_psns'),
                   'cnp_received': h.get('cnp_received'),
                   'fct_us': {k: v for k, v in (h.get('fct_us') or {}).items() if k != 'cdf'}}
                  for h in hosts],
        'pauses': pauses, 'cables': cables,
        'collectives': [{k: c.get(k) for k in ('op', 'size_bytes', 'done', 'time_us', 'algbw_gbps',
                                               'busbw_gbps', 'ranks')}
                        for c in stats.get('collectives') or []],
    }


def peer_of(switch, port):
    """Whom a port's pause stops: the far end of its cable, or its host."""
    if port.get('kind') == 'link' and port.get('link'):
        a, _, b = str(port['link']).partition('-')
        return b if a == '%s.%s' % (switch, port.get('name')) else a
    return 'host' if port.get('kind') == 'emulated_host' else str(port.get('kind') or '?')


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def aggregate(r, per_seed):
    """A run's figures over its seeds (the ones that ran): each figure's mean, with min and max
    of goodput and the victims' goodput; the books balanced only if every seed's did; the pause
    tree and the cables averaged per port and direction; the hosts' goodput sorted per seed and
    averaged rank by rank."""
    ok = [s for s in per_seed if 'error' not in s]
    errors = ['seed %s: %s' % (s.get('seed'), s['error']) for s in per_seed if 'error' in s]
    if errors:
        r['error'] = '; '.join(errors)
    if not ok:
        return r
    for k in MEAN:   # one seed: its own figures (counts stay integers)
        r[k] = ok[0].get(k) if len(ok) == 1 else mean([s.get(k) for s in ok])
    for k in RANGE:
        vals = [s.get(k) for s in ok if s.get(k) is not None]
        r[k + '_min'] = min(vals) if vals else None
        r[k + '_max'] = max(vals) if vals else None
    r['balanced'] = all(s.get('balanced') is True for s in ok)
    n = len(ok)
    ports = {}
    for s in ok:
        for p in s['pauses']:
            e = ports.setdefault(p['port'], {'port': p['port'], 'peer': p['peer'], 'assert_ns': 0.0,
                                             'xoff_sent': 0.0})
            e['assert_ns'] += p['assert_ns'] / n
            e['xoff_sent'] += p['xoff_sent'] / n
    r['pauses'] = sorted(ports.values(), key=lambda p: -p['assert_ns'])
    dirs = {}
    for s in ok:
        for c in s['cables']:
            e = dirs.setdefault(c['direction'], {'direction': c['direction'], 'gbps': 0.0,
                                                 'link_gbps': c['link_gbps'], 'lost': 0.0})
            e['gbps'] += (c['gbps'] or 0) / n
            e['lost'] += (c['lost'] or 0) / n
    r['cables'] = list(dirs.values())
    ranked = [sorted(h.get('rx_goodput_gbps') or 0 for h in s['hosts']) for s in ok]
    width = min(len(x) for x in ranked) if ranked else 0
    r['host_goodput_sorted'] = [mean([x[i] for x in ranked]) for i in range(width)]
    r['link_gbps'] = sorted({h.get('link_gbps') for s in ok for h in s['hosts'] if h.get('link_gbps')})
    r['exit_code'] = max(s.get('exit_code') or 0 for s in ok)
    return r
