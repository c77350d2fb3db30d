"""The measurement: one phase of route transactions sent batch after batch and timed, the
traffic read around it, a progress line, and the tables' preallocated size."""

import time

from .client import barrier, encode_add, result_of
from .common import NAN, SwitchError, fmt_int, log, note, percentile
from .prefixes import TBL8_GROUPS


class Traffic:
    """Packet totals (`counters`) read before and after each phase, outside its timed window:
    a request between two batches would wait for the replay of the first on the second bank,
    moving that work out of the next batch's latency. The switch's own once-a-second samples
    (its stats JSON) cover the phases between."""

    def __init__(self, cl):
        self.cl, self.samples = cl, []
        self.sample()

    def sample(self):
        now = time.monotonic()
        t = self.cl.call({'op': 'counters'})['totals']
        self.samples.append((now, t['received'], t['sent'], t['dropped']))
        return len(self.samples) - 1

    def rate_mpps(self, first, last):
        a, b = self.samples[first], self.samples[last]
        return (b[2] - a[2]) / (b[0] - a[0]) / 1e6 if b[0] > a[0] else NAN


class Progress:
    """A line on stderr about once a second: routes done, current and overall rate."""

    def __init__(self, what, total, sizes):
        self.what, self.total, self.sizes = what, total, sizes
        self.t0 = self.last = time.monotonic()
        self.done, self.last_rate = 0, NAN

    def batch_done(self, n, seconds, v4, v6):
        self.done += n
        self.last_rate = n / seconds if seconds > 0 else NAN
        self.sizes = (v4, v6)
        self.tick()

    def tick(self):
        now = time.monotonic()
        if now - self.last < 1.0:
            return
        self.last = now
        el = now - self.t0
        note('%s: %d/%d routes in %.1f s (tables: IPv4 %d, IPv6 %d); last batch %s routes/s, '
             'overall %s routes/s' % (self.what, self.done, self.total, el, self.sizes[0],
                                      self.sizes[1], fmt_int(self.last_rate),
                                      fmt_int(self.done / el if el > 0 else NAN)))


def preallocated_mb(max4, max6, a):
    """What the two banks' rte_lpm and rte_lpm6 allocate when created (route_bank.cc): per
    table, a tbl24 of 2^24 4-byte entries, tbl8 groups of 256 entries, rules of 8 bytes (lpm) or
    a hash of 1.2 x rules (lpm6, about 64 bytes an entry with its key)."""
    t4, t6 = a.tbl8_v4 or TBL8_GROUPS, a.tbl8_v6 or TBL8_GROUPS
    v4 = (1 << 24) * 4 + t4 * 1024 + max4 * 8
    v6 = (1 << 24) * 4 + t6 * 1024 + int(max6 * 1.2) * 64
    return 2 * (v4 + v6) / 2 ** 20


def run_phase(cl, what, routes, batch, encode, sw, traffic, v4_base, v6_base, stop_on_full):
    """Sends `routes` in transactions of `batch` (encoded before timing) and waits for each
    answer. Returns a dict of figures. `stop_on_full`: a "route table full" answer ends the
    phase after the ops before the failing one are sent again (table filled exactly)."""
    lines = []
    for k in range(0, len(routes), batch):
        lines.append((k, min(k + batch, len(routes)), encode(k // batch + 1, routes[k:k + batch])))
    prog = Progress(what, len(routes), (v4_base, v6_base))
    adding = encode is encode_add
    sizes = [v4_base, v6_base]
    rows, done, full = [], 0, None
    i0 = traffic.sample()
    sched0, wwait0 = sw.sched_ms(), sw.workers_wait_ms()
    t_start = time.monotonic()
    for b, (lo, hi, line) in enumerate(lines):
        t0 = time.monotonic()
        resp = cl.send_line(line, tick=prog.tick)
        t1 = time.monotonic()
        n = hi - lo
        if not resp.get('ok'):
            e = resp.get('error') or {}
            reason, index = e.get('reason', '?'), e.get('index')
            if not (stop_on_full and 'route table full' in reason and index is not None):
                raise SwitchError(reason, e.get('field', ''), index)
            full = reason
            part = routes[lo:lo + index]
            if part:
                t0b = time.monotonic()
                resp = cl.send_line(encode(b + 1, part), tick=prog.tick)
                result_of(resp)
                t1 = time.monotonic()
                rows.append({'batch': b + 1, 'routes': len(part), 'latency_s': t1 - t0b,
                             'failed_attempt_s': t0b - t0, 'rss_kb': sw.rss_kb()})
            n = len(part)
            for r in part:
                sizes[r.v6] += 1
            done += n
            prog.batch_done(n, t1 - t0, *sizes)
            break
        for r in routes[lo:hi]:
            sizes[r.v6] += 1 if adding else -1
        done += n
        rows.append({'batch': b + 1, 'routes': n, 'latency_s': t1 - t0, 'rss_kb': sw.rss_kb()})
        rows[-1]['ipv4_after'], rows[-1]['ipv6_after'] = sizes
        prog.batch_done(n, t1 - t0, *sizes)
    barrier(cl)
    wall = time.monotonic() - t_start
    sched1, wwait1 = sw.sched_ms(), sw.workers_wait_ms()
    i1 = traffic.sample()
    if rows:
        rows[-1]['ipv4_after'], rows[-1]['ipv6_after'] = sizes
    lat = [r['latency_s'] for r in rows]
    out = {'what': what, 'routes': done, 'batches': len(rows), 'wall_s': wall,
           'routes_per_s': done / wall if wall > 0 else NAN,
           'latency_ms': {'p50': percentile(lat, 50) * 1e3, 'p99': percentile(lat, 99) * 1e3,
                          'max': (max(lat) if lat else NAN) * 1e3},
           'per_batch': rows, 'table_full': full, 'ipv4_after': sizes[0], 'ipv6_after': sizes[1],
           'forwarding_mpps': traffic.rate_mpps(i0, i1), 'worker_waited_ms': wwait1 - wwait0,
           'control_thread_ms': {'on_cpu': sched1[0] - sched0[0], 'waiting_for_cpu': sched1[1] - sched0[1]}}
    log('%s: %d routes in %d transactions, %.3f s: %s routes/s; latency a batch p50 %.1f ms, '
        'p99 %.1f ms, max %.1f ms%s' % (what, done, len(rows), wall, fmt_int(out['routes_per_s']),
                                        out['latency_ms']['p50'], out['latency_ms']['p99'],
                                        out['latency_ms']['max'],
                                        '; stopped: %s' % full if full else ''))
    on, waiting = out['control_thread_ms']['on_cpu'], out['control_thread_ms']['waiting_for_cpu']
    out['routes_per_cpu_s'] = done / on * 1e3 if on > 0 else NAN
    log('%s: the switch\'s control thread was on CPU %.0f ms (%s routes per CPU second, %.2f us a '
        'route) and waited for a CPU %.0f ms of those %.0f ms%s'
        % (what, on, fmt_int(out['routes_per_cpu_s']), on * 1e3 / done if done else NAN, waiting,
           wall * 1e3, ': OTHER LOAD on its CPU, the wall-time rate understates'
           if waiting > 0.05 * wall * 1e3 else ''))
    return out
