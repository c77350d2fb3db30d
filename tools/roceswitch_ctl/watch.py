"""watch: live per-port rates, queues, PFC, ECN and drops, from two counters reads a frame."""

import io
import sys
import time

from .show import human, port_sums, table


def watch_frame(prev, cur, dt):
    before = {p['name']: port_sums(p) for p in prev['ports']}
    rows, tot = [], {'rx_bytes': 0, 'tx_bytes': 0, 'rx_packets': 0, 'tx_packets': 0, 'drops': 0}
    for p in cur['ports']:
        s = port_sums(p)
        s0 = before.get(p['name'], s)
        d = {k: max(0, s[k] - s0[k]) / dt for k in s}
        for k in tot:
            tot[k] += d[k]
        queues = ' '.join(f"q{q['queue']}={human(q['depth_bytes'])}" for q in p.get('queues', [])
                          if q['enqueued_packets'] or q['depth_bytes'])
        rows.append([p['name'], 'up' if p.get('link_up') else 'down',
                     f"{d['rx_bytes'] * 8 / 1e9:.3f}", f"{d['rx_packets'] / 1e6:.3f}",
                     f"{d['tx_bytes'] * 8 / 1e9:.3f}", f"{d['tx_packets'] / 1e6:.3f}",
                     f"{d['pfc_tx']:.0f}", f"{d['pfc_rx']:.0f}", f"{d['ecn']:.0f}", f"{d['drops']:.0f}", queues or '-'])
    buf = cur.get('buffer', {})
    head = (f"roceswitch  {time.strftime('%H:%M:%S')}  every {dt:.2f} s   "
            f"rx {tot['rx_bytes'] * 8 / 1e9:.3f} Gb/s {tot['rx_packets'] / 1e6:.3f} Mpps   "
            f"tx {tot['tx_bytes'] * 8 / 1e9:.3f} Gb/s {tot['tx_packets'] / 1e6:.3f} Mpps   "
            f"drops {tot['drops']:.0f}/s   lossless drops {cur.get('lossless_drops', 0)}   "
            f"buffer {human(buf.get('used_bytes', 0))}/{human(buf.get('pool_bytes', 0))}\n")
    out = io.StringIO()
    table(['port', 'link', 'rx_Gb/s', 'rx_Mpps', 'tx_Gb/s', 'tx_Mpps', 'pfc_tx/s', 'pfc_rx/s', 'ecn/s', 'drops/s',
           'queue_bytes'], rows, out)
    # A NIC whose DCBX PFC vector differs from the switch's: its lossless classes are not lossless.
    for n in cur.get('lldp', []):
        if n.get('pfc_mismatch'):
            out.write(f"DCBX MISMATCH on {n['port']}: {n.get('system_name') or n.get('chassis_id')} advertises PFC enable "
                      f"{n.get('pfc', {}).get('enable', 0):#04x}\n")
    return head + out.getvalue()


def run_watch(cl, a, parser):
    tty = sys.stdout.isatty()
    prev, t_prev, shown = cl.call({'op': 'counters'}), time.monotonic(), 0
    try:
        while a.count is None or shown < a.count:
            time.sleep(a.interval)
            cur, t = cl.call({'op': 'counters'}), time.monotonic()
            frame = watch_frame(prev, cur, max(t - t_prev, 1e-6))
            sys.stdout.write(('\x1b[H\x1b[2J' if tty else '\n' if shown else '') + frame)
            sys.stdout.flush()
            prev, t_prev, shown = cur, t, shown + 1
    except KeyboardInterrupt:
        pass
