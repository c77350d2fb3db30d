"""The figures of the emulated RoCE NICs: per host (goodput, DCQCN rates, CNPs, message
completion), the senders' steady window and fairness, the collectives, and the bottleneck."""

from .names import host_of, qp_name, sends
from .series import series_fct, series_qps


# --------------------------------------------------------------------------------------
# figures of the emulated RoCE NICs


def jain(xs):
    xs = [x for x in xs if x is not None]
    sq = sum(x * x for x in xs)
    return sum(xs) ** 2 / (len(xs) * sq) if xs and sq > 0 else None


STEADY_SETTLE_S = 0.5   # the steady window starts this long after the last sender's first ACK


def steady_window(samples, senders, names):
    """(from_s, to_s, {host: {goodput_gbps, messages, fct_mean_us}}) over the time every sender
    was sending: from the last sender's first delivered byte + STEADY_SETTLE_S to the last
    sample: payload Gb/s, messages completed and their mean completion time in the window;
    (None, None, {}) when that leaves under 0.2 s (or a tenth of the series) or there is no
    series."""
    want = {q['qp']: h['name'] for h in senders for q in h['qps'] if sends(q)}
    if not want or len(samples) < 3:
        return None, None, {}
    first, series = {}, []
    for s in samples:
        qs = series_qps(s, names)
        t = s.get('t_s', 0.0)
        series.append((t, qs))
        for k in want:
            if k in qs and qs[k][1] and k not in first:
                first[k] = t
    if len(first) < len(want):
        return None, None, {}
    t0 = max(first.values()) + STEADY_SETTLE_S
    t1 = series[-1][0]
    span = t1 - series[0][0]
    i0 = next((i for i, (t, _) in enumerate(series) if t >= t0), None)
    if i0 is None or t1 - series[i0][0] < max(0.2, span / 10):
        return None, None, {}
    start, end = series[i0], series[-1]
    done = [series_fct(samples[i0], names), series_fct(samples[-1], names)]
    out = {}
    for k, host in want.items():
        b = (end[1].get(k, (0, 0))[1] or 0) - (start[1].get(k, (0, 0))[1] or 0)
        o = out.setdefault(host, {'goodput_gbps': 0.0, 'n': 0, 'fct_sum': 0.0})
        o['goodput_gbps'] += b * 8 / (end[0] - start[0]) / 1e9
        (n0, m0), (n1, m1) = done[0].get(k, (0, 0.0)), done[1].get(k, (0, 0.0))
        o['n'] += n1 - n0
        o['fct_sum'] += n1 * m1 - n0 * m0
    for o in out.values():
        o['fct_mean_us'] = o['fct_sum'] / o['n'] if o['n'] > 0 else None
        o['messages'] = o.pop('n')
        del o['fct_sum']
    return start[0], end[0], out


def nic_figures(stats, samples, exp, el):
    """hosts, collectives, the senders' summary and the bottleneck; {} without NICs."""
    names = exp.ip_names()
    hosts = []
    for p in stats.get('ports', []):
        nic = host_of(p).get('nic')
        if not isinstance(nic, dict):
            continue
        qps = nic.get('qps') or []
        req = [q for q in qps if q.get('role') == 'requester']
        resp = [q for q in qps if q.get('role') != 'requester']

        def total(k, qs=qps):
            return sum(q.get(k, 0) or 0 for q in qs)
        # Over all its requester QPs (the NIC's totals), or its one QP's from an older switch.
        fct = (nic.get('totals') or {}).get('fct_us')
        done = [q for q in req if q.get('messages_done')]
        if fct is None and len(done) == 1:
            fct = done[0].get('fct_us')
        rx = total('rx_bytes', resp)
        hosts.append({
            'name': p['name'], 'cc': nic.get('cc'),
            'goodput_gbps': total('goodput_gbps', req), 'goodput_gbps_steady': None,
            'fct_mean_us_steady': None, 'messages_steady': None,
            'rate_gbps_final': total('rate_gbps', req) if req else None,
            'cnp_sent': total('cnp_sent'), 'cnp_received': total('cnp_received'),
            'retransmitted': total('retransmitted'), 'naks_received': total('naks_received'),
            'timeouts': total('timeouts'), 'ce_received': total('ce_received'),
            'acked_bytes': total('acked_bytes', req), 'messages_done': total('messages_done', req),
            'rx_bytes': rx, 'rx_gbps': rx * 8 / el / 1e9 if el else None,
            'fct_us': fct,
            'sends': any(sends(q) for q in req),
            'qps': [{'qp': qp_name(p['name'], q, names), 'peer': names.get(str(q.get('peer')), q.get('peer')),
                     'qpn': q.get('qpn'), 'role': q.get('role'), 'tag': q.get('tag'),
                     'goodput_gbps': q.get('goodput_gbps'), 'rate_gbps': q.get('rate_gbps'),
                     'alpha': q.get('alpha'), 'rate_cuts': q.get('rate_cuts'),
                     'acked_bytes': q.get('acked_bytes'), 'messages_done': q.get('messages_done'),
                     'fct_us': q.get('fct_us'), 'retransmitted': q.get('retransmitted'),
                     'naks_received': q.get('naks_received'), 'timeouts': q.get('timeouts'),
                     'cnp_sent': q.get('cnp_sent'), 'cnp_received': q.get('cnp_received'),
                     'ce_received': q.get('ce_received'), 'rx_bytes': q.get('rx_bytes')}
                    for q in qps],
        })
    colls = [{k: c.get(k) for k in ('op', 'size_bytes', 'time_us', 'algbw_gbps', 'busbw_gbps',
                                     'algbw_GBps', 'busbw_GBps', 'ranks', 'hosts', 'done')}
             for c in stats.get('collectives') or []]
    # Each collective's links as the run had them: the slowest of its hosts' and its payload
    # rate at the smallest MTU of their NICs (what busbw can reach with nothing else on them).
    sp = {p['name']: p for p in stats.get('ports', [])}
    for c in colls:
        hs = [sp[n] for n in c.get('hosts') or [] if n in sp]
        if not hs:
            continue
        gbps = min(float(h.get('speed_gbps') or 0) for h in hs)
        mtu = min(int((host_of(h).get('nic') or {}).get('mtu') or 1024) for h in hs)
        c['link_gbps'] = gbps
        c['link_payload_gbps'] = gbps * payload_share(mtu)
        c['busbw_link_fraction'] = (c['busbw_gbps'] / c['link_payload_gbps']
                                    if c.get('done') and c.get('busbw_gbps') is not None and gbps else None)
    out = {'hosts': hosts, 'collectives': colls}
    if not hosts and exp.bottleneck is None:
        return out

    senders = [h for h in hosts if h['sends']]
    good = [sum(q['goodput_gbps'] or 0 for q in h['qps'] if sends(q)) for h in senders]
    rates = [sum(q['rate_gbps'] or 0 for q in h['qps'] if sends(q)) for h in senders]
    acked = sum(q['acked_bytes'] or 0 for h in senders for q in h['qps'] if sends(q))
    steady_from, steady_to, steady = steady_window(samples, senders, names)
    for h in senders:
        st = steady.get(h['name']) or {}
        h['goodput_gbps_steady'] = st.get('goodput_gbps')
        h['fct_mean_us_steady'] = st.get('fct_mean_us')
        h['messages_steady'] = st.get('messages')
    sgood = [steady[h['name']]['goodput_gbps'] for h in senders] if steady else good
    out.update({
        'senders': [h['name'] for h in senders],
        'senders_goodput_gbps': acked * 8 / el / 1e9 if senders and el else None,
        'sender_goodput_min': min(good) if good else None,
        'sender_goodput_max': max(good) if good else None,
        'steady_from_s': steady_from, 'steady_to_s': steady_to,
        'steady_goodput_min': min(sgood) if steady and sgood else None,
        'steady_goodput_max': max(sgood) if steady and sgood else None,
        'jain_fairness': jain(sgood),
        'rate_final_min': min(rates) if rates else None,
        'rate_final_max': max(rates) if rates else None,
        'cnp_sent': sum(h['cnp_sent'] for h in hosts),
        'cnp_received': sum(h['cnp_received'] for h in hosts),
        'retransmitted': sum(h['retransmitted'] for h in hosts),
        'naks_received': sum(h['naks_received'] for h in hosts),
        'timeouts': sum(h['timeouts'] for h in hosts),
        'ecn_marked': sum(q.get('ecn_marked', 0) for p in stats.get('ports', [])
                          for q in p.get('queues', [])),
    })

    # The bottleneck: the port named, else the one whose queue peaked highest.
    ports = {p['name']: p for p in stats.get('ports', [])}

    def peak(p):
        return max((q.get('peak_bytes', 0) for q in p.get('queues', [])), default=0)
    b = exp.bottleneck
    if b is None and ports:
        b = max(stats['ports'], key=peak)['name']
    bp = ports.get(b, {})
    max_q = None
    window = []
    for s in samples:
        for p in s.get('ports', []):
            if p.get('name') == b:
                q = sum(p.get('queue_bytes', [0]))
                max_q = q if max_q is None or q > max_q else max_q
                if steady_from is None or steady_from <= s.get('t_s', 0) <= steady_to:
                    window.append(q)
    window.sort()
    speed = float(bp.get('speed_gbps') or exp.ports.get(b, {}).get('speed_gbps', 100))
    wire = (bp.get('tx_bytes', 0) + 24 * bp.get('tx_packets', 0)) * 8 / el / 1e9 if el else None
    out.update({
        'bottleneck': b, 'bottleneck_max_queue_bytes': max_q,
        'bottleneck_median_queue_bytes': window[len(window) // 2] if window else None,
        'bottleneck_peak_queue_bytes': peak(bp) if bp else None,
        'bottleneck_tx_gbps': wire,
        'bottleneck_utilisation': wire / speed if wire is not None and speed else None,
    })
    return out


def payload_share(mtu):
    """Payload over wire bytes of full packets at a NIC MTU: ETH+IP+UDP+BTH+ICRC (58), FCS,
    preamble and gap (24) per packet, as the NIC tests count."""
    return mtu / (mtu + 58 + 24)
