"""The figures of one run from its stats JSON and time series: the receivers' goodput and
ordering, the group's balance and queues, drops, PFC and whether the emulator kept real time."""

from .common import RunError
from .names import flow_key, flow_order, host_of
from .nic import nic_figures


# --------------------------------------------------------------------------------------
# figures of one run


def receiver_flows(stats, receivers):
    """The received flows of the receivers: a receiver group's flows are reported once, by its
    first port; the others name it in rx_flows_in."""
    ports = {p['name']: p for p in stats.get('ports', [])}
    seen, flows = set(), []
    for n in receivers:
        if n not in ports:
            raise RunError("the stats have no port '%s'" % n)
        h = host_of(ports[n])
        leader = h.get('rx_flows_in', n)
        if leader in seen:
            continue
        seen.add(leader)
        lh = host_of(ports.get(leader, {}))
        if 'rx_flows' not in lh:
            raise RunError("port '%s' reports no rx_flows in the stats JSON: this roceswitch is "
                           "older than the per-flow receive counters; rebuild it" % leader)
        flows.extend(lh['rx_flows'])
    return flows


def figures(stats, samples, exp, wall_s):
    """Every figure of one run from its stats JSON and time series: the receivers' goodput
    (with experiment.receivers), the group's balance (with experiment.group), drops and PFC,
    and the NICs' figures (hosts, collectives, the bottleneck) when the hosts have NICs."""
    el = float(stats.get('elapsed_s') or 0) or None
    out = {}
    if exp.receivers:
        out.update(receiver_figures(stats, exp, el))
    if exp.group:
        out.update(group_figures(stats, samples, exp))
    ports = {p['name']: p for p in stats.get('ports', [])}
    by_reason = {k: v for k, v in (stats.get('drops') or {}).items() if v}
    drops = sum(v for k, v in by_reason.items() if k != 'shutdown_flush')
    pfc = sum((p.get('pfc') or {}).get('frames_sent', 0) for p in stats.get('ports', []))

    # Did the emulated senders keep real time? Those nobody paused should send what they offer.
    realtime = None
    if el:
        for n, offered in exp.senders().items():
            h = host_of(ports.get(n, {}))
            if not h or h.get('rx_pfc_frames', 0) or offered <= 0:
                continue
            sent = (h.get('tx_bytes', 0) + 24 * h.get('tx_packets', 0)) * 8 / el / 1e9
            r = sent / offered
            realtime = r if realtime is None or r < realtime else realtime
    out.update({
        'drops': drops, 'drops_by_reason': by_reason,
        'lossless_drops': stats.get('lossless_drops'),
        'pfc_frames_sent': pfc,
        'emulator_realtime': realtime,
        'balanced': (stats.get('totals') or {}).get('balanced'),
        'elapsed_s': el, 'wall_s': wall_s,
    })
    out.update(nic_figures(stats, samples, exp, el))
    return out


def receiver_figures(stats, exp, el):
    flows = receiver_flows(stats, exp.receivers)
    payload = sum(f.get('bytes', 0) for f in flows)
    pkts = sum(f.get('packets', 0) for f in flows)
    frames = sum(f.get('frame_bytes', 0) for f in flows)
    # A frame costs FCS, preamble, SFD and gap on the wire (frames of RoCE are >= 60 bytes).
    wire = frames + 24 * pkts
    goodput = 0.0
    for f in flows:
        g = f.get('goodput_gbps')
        if g is None:
            g = f.get('bytes', 0) * 8 / el / 1e9 if el else 0.0
        goodput += g
    share_payload = payload / wire if wire else None
    ideal_payload = exp.ideal * share_payload if share_payload else None
    ooo = sum(f.get('out_of_order', 0) for f in flows)
    late = sum(f.get('late', 0) for f in flows)
    missing = sum(f.get('missing', 0) for f in flows)
    return {
        'goodput_fraction': goodput / ideal_payload if ideal_payload else None,
        'goodput_gbps': goodput,
        'ideal_gbps': exp.ideal,
        'ideal_payload_gbps': ideal_payload,
        'out_of_order_fraction': ooo / pkts if pkts else None,
        'out_of_order': ooo, 'late': late, 'missing': missing,
        'late_fraction': late / pkts if pkts else None,
        'received_packets': pkts, 'received_payload_bytes': payload,
        'flows_received': len(flows),
        'flows': [{'flow': flow_key(f), 'packets': f.get('packets', 0), 'bytes': f.get('bytes', 0),
                   'goodput_gbps': f.get('goodput_gbps'), 'out_of_order': f.get('out_of_order', 0),
                   'late': f.get('late', 0), 'missing': f.get('missing', 0)}
                  for f in sorted(flows, key=flow_order)],
    }


def group_figures(stats, samples, exp):
    group = next((g for g in stats.get('groups', []) if g.get('name') == exp.group), None)
    if group is None:
        raise RunError("the stats have no group '%s'" % exp.group)
    mpk = [m.get('packets', 0) for m in group.get('members', [])]
    total = sum(mpk)
    share = [p / total for p in mpk] if total else [0.0] * len(mpk)
    member_ports = [m.get('port') for m in group.get('members', [])]

    ports = {p['name']: p for p in stats.get('ports', [])}
    max_q = None
    for s in samples:
        for p in s.get('ports', []):
            if p.get('name') in member_ports:
                q = sum(p.get('queue_bytes', [0]))
                max_q = q if max_q is None or q > max_q else max_q
    peak_q = max((q.get('peak_bytes', 0) for n in member_ports
                  for q in ports.get(n, {}).get('queues', [])), default=0)
    pg = group.get('policy') or {}
    return {
        'max_queue_bytes': max_q, 'peak_queue_bytes': peak_q,
        'member_ports': member_ports, 'member_packets': mpk, 'member_share': share,
        'member_share_min': min(share) if share else None,
        'member_share_max': max(share) if share else None,
        'policy_counters': pg.get('counters', {}), 'policy_params': pg.get('params', {}),
    }
