"""Route churn: single-op updates at a fixed rate over prefixes that carry no traffic, each
answer awaited; perf/linerate --churn runs churn() beside its traffic."""

import random
import time

from .client import Client, usable_groups
from .common import NAN, Failure, note, percentile
from .prefixes import BARRIER_V4, CHURN_V4, CHURN_V6, prefix_text


def churn(sock_path, rate, seconds, mix=(3, 1), seed=1, deadline=None, log_fn=note):
    """Single-op updates at `rate` a second for `seconds`, cycling route.add, route.add with
    replace (another group) and route.del over prefixes that carry no traffic (198.18.0.0/15
    /32s and 2001:2::/48 /128s, in the `mix` ratio), against the switch at `sock_path`. Each
    update waits for its answer (the switch serves one connection's requests in order), so a
    switch that cannot keep up shows as an achieved rate below `rate`. Returns a dict:
    updates, seconds, updates_per_s, target, latency_ms {p50, p99, max}, by_op counts."""
    if deadline is None:
        deadline = time.monotonic() + seconds + 60
    cl = Client(sock_path, deadline)
    try:
        groups, made = usable_groups(cl)
        if not groups:
            raise Failure('churn: the switch has no next-hop group')
        taken = set()
        for base, depth in ((CHURN_V4, False), (CHURN_V6, True)):
            pfx = prefix_text(depth, base[0], base[1])
            got = cl.call({'op': 'route.list', 'prefix': pfx, 'limit': 1 << 20})
            taken.update(r['prefix'] for r in got['routes'])
        rng = random.Random(seed)
        pool = []
        a4, a6 = mix
        k = 0
        while len(pool) < 4096:
            v6 = a4 + a6 > 0 and (k % (a4 + a6)) >= a4
            if v6:
                p = prefix_text(True, CHURN_V6[0] | (k + 1), 128)
            else:
                p = prefix_text(False, CHURN_V4[0] | (k + 1), 32)
            if p != BARRIER_V4 and p not in taken:
                pool.append(p)
            k += 1
        lat, by_op = [], {'add': 0, 'replace': 0, 'del': 0}
        t0 = time.monotonic()
        end = t0 + seconds
        i, slot = 0, 0
        current = None
        while True:
            due = t0 + i / rate if rate > 0 else time.monotonic()
            now = time.monotonic()
            if due >= end or now >= end:
                break
            if due > now:
                time.sleep(due - now)
            step = i % 3
            if step == 0:
                current = (pool[slot % len(pool)], rng.choice(groups))
                slot += 1
                req = {'op': 'route.add', 'prefix': current[0], 'group': current[1]}
                kind = 'add'
            elif step == 1:
                other = [g for g in groups if g != current[1]] or groups
                req = {'op': 'route.add', 'prefix': current[0], 'group': rng.choice(other),
                       'replace': True}
                kind = 'replace'
            else:
                req = {'op': 'route.del', 'prefix': current[0]}
                kind = 'del'
            s = time.monotonic()
            cl.call(req)
            lat.append(time.monotonic() - s)
            by_op[kind] += 1
            i += 1
        el = time.monotonic() - t0
        if i % 3:  # leave the table as it was: the prefix of an unfinished cycle goes
            cl.call({'op': 'route.del', 'prefix': current[0]})
        for name in made:
            cl.call({'op': 'group.del', 'name': name})
        res = {'updates': i, 'seconds': el, 'updates_per_s': i / el if el > 0 else NAN,
               'target': rate, 'by_op': by_op,
               'latency_ms': {'p50': percentile(lat, 50) * 1e3, 'p99': percentile(lat, 99) * 1e3,
                              'max': (max(lat) if lat else NAN) * 1e3}}
        log_fn('churn: %d updates in %.1f s: %.0f updates/s (target %g); latency p50 %.3f ms, '
               'p99 %.3f ms, max %.3f ms' % (i, el, res['updates_per_s'], rate,
                                             res['latency_ms']['p50'], res['latency_ms']['p99'],
                                             res['latency_ms']['max']))
        return res
    finally:
        cl.close()
