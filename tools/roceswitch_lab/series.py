"""roceswitch's time series (--series, JSON lines): loading it, the received flows and QPs of one
sample, and the per-run table of rates and queues written as NN-RUN.series.csv."""

import json

from .names import flow_key, qp_name


def load_series(path):
    samples = []
    try:
        with open(path) as fh:
            for line in fh:
                line = line.strip()
                if line:
                    try:
                        samples.append(json.loads(line))
                    except ValueError:
                        break  # a line cut by a stop: keep what came before
    except OSError:
        pass
    return samples


def series_flows(sample):
    """{flow key: (bytes, packets)} of every received flow in one series sample (any host)."""
    out = {}
    for h in sample.get('hosts', []):
        fl = h.get('rx_flows')
        if fl is None and isinstance(h.get('host'), dict):
            fl = h['host'].get('rx_flows')
        for f in fl or []:
            out[flow_key(f)] = (f.get('bytes', 0), f.get('packets', 0))
    return out


def series_qps(sample, names):
    """{QP name: (DCQCN rate Gb/s, bytes delivered)} of every requester QP in one series
    sample. Delivered: the bytes its responder at the peer took in (counted per packet), else
    the bytes acknowledged (counted per completed message: coarser)."""
    ips = {}
    for ip, port in names.items():
        ips.setdefault(port, ip)
    rx = {}
    for h in sample.get('hosts', []):
        for q in h.get('qps') or []:
            if q.get('role') != 'requester':
                rx[(h.get('port'), str(q.get('peer')), q.get('qpn'))] = q.get('rx_bytes', 0)
    out = {}
    for h in sample.get('hosts', []):
        for q in h.get('qps') or []:
            if q.get('role') == 'requester':
                got = rx.get((names.get(str(q.get('peer'))), ips.get(h.get('port')), q.get('qpn')))
                out[qp_name(h.get('port'), q, names)] = (
                    q.get('rate_gbps'), got if got is not None else q.get('acked_bytes', 0))
    return out


def series_table(samples, member_ports, bottleneck=None, names=None):
    """Per sample: t_s, per member port tx Gb/s (over the interval before it) and backlog bytes,
    per received flow goodput Gb/s; with NICs the bottleneck's backlog and per requester QP its
    DCQCN rate and goodput (payload Gb/s its responder took in over the interval). Returns
    (columns, rows)."""
    flows, qps = [], []
    for s in samples:
        for k in series_flows(s):
            if k not in flows:
                flows.append(k)
        if names is not None:
            for k in series_qps(s, names):
                if k not in qps:
                    qps.append(k)
    extra_q = [bottleneck] if bottleneck and bottleneck not in member_ports else []
    cols = ['t_s'] + ['tx_gbps:%s' % p for p in member_ports] + \
        ['queue_bytes:%s' % p for p in member_ports + extra_q] + ['goodput_gbps:%s' % k for k in flows] + \
        ['qp_rate_gbps:%s' % k for k in qps] + ['qp_goodput_gbps:%s' % k for k in qps]
    rows = []
    prev = None
    # The last sample is taken after the stop, often a moment after the one before: a rate
    # over so short an interval is noise, so intervals under half the usual one give none.
    gaps = sorted(b.get('t_s', 0) - a.get('t_s', 0) for a, b in zip(samples, samples[1:]))
    min_dt = gaps[len(gaps) // 2] / 2 if gaps else 0
    for s in samples:
        ports = {p['name']: p for p in s.get('ports', [])}
        fl = series_flows(s)
        qs = series_qps(s, names) if qps else {}
        t = s.get('t_s', 0.0)
        row = [t]
        dt = t - prev[0] if prev else 0
        if dt < min_dt:
            dt = 0
        for p in member_ports:
            tx = ports.get(p, {}).get('tx_bytes', 0)
            row.append((tx - prev[1].get(p, 0)) * 8 / dt / 1e9 if prev and dt > 0 else None)
        for p in member_ports + extra_q:
            row.append(sum(ports.get(p, {}).get('queue_bytes', [0])))
        for k in flows:
            b = fl.get(k, (0, 0))[0]
            row.append((b - prev[2].get(k, (0, 0))[0]) * 8 / dt / 1e9 if prev and dt > 0 else None)
        for k in qps:
            row.append(qs[k][0] if k in qs else None)
        for k in qps:
            b = qs.get(k, (None, 0))[1]
            row.append((b - prev[3].get(k, (None, 0))[1]) * 8 / dt / 1e9 if prev and dt > 0 else None)
        rows.append(row)
        prev = (t, {p: ports.get(p, {}).get('tx_bytes', 0) for p in member_ports}, fl, qs)
    return cols, rows


def series_fct(sample, names):
    """{QP name: (messages done, their mean completion time in us)} of the requesters."""
    return {qp_name(h.get('port'), q, names): (q.get('messages_done') or 0, q.get('fct_mean_us') or 0.0)
            for h in sample.get('hosts', []) for q in h.get('qps') or [] if q.get('role') == 'requester'}
