"""The benchmark run against a started switch: install, churn, delete and fill phases, the
checks that traffic flowed and the books balanced, the summary table and the last line."""

import json
import random
import sys
import time

from .churn import churn
from .client import (Client, barrier_line, encode_add, encode_del, json_encode_add,
                     table_sizes, usable_groups)
from .common import NAN, Failure, fmt_int, fmt_num, log
from .measure import Traffic, preallocated_mb, run_phase
from .prefixes import (TBL8_GROUPS, Exhausted, PrefixGen, Route, depth_text, make_routes,
                       prefix_text, split_mix)
from .report import batch_table, emit_json, render


def benchmark(a, sw, prof, deadline):
    cl = Client(sw.sock, deadline)
    groups, made = usable_groups(cl)
    if not groups:
        raise Failure('the switch has no next-hop group to route to')
    if made:
        log('made groups %s (the members of the config\'s per-route groups, which no other route '
            'may name)' % ', '.join(made))
    cl.group0 = groups[0]
    cl.barrier = barrier_line(cl)
    v4_0, v6_0, max4, max6 = table_sizes(cl)
    log('roceswitch %s (pid %d), traffic: %s' % (a.roceswitch, sw.pid, sw.traffic))
    log('tables: IPv4 %d of %d routes, IPv6 %d of %d; %d groups (%s)'
        % (v4_0, max4, v6_0, max6, len(groups), ', '.join(groups[:8]) + (' ...' if len(groups) > 8 else '')))
    if a.max_v4 and max4 != a.max_v4 or a.max_v6 and max6 != a.max_v6:
        log('warning: the switch reports limits IPv4 %d / IPv6 %d, not the --max-v4/--max-v6 asked'
            % (max4, max6))
    rng = random.Random(a.seed)
    gens = {False: PrefixGen(random.Random(a.seed * 7 + 1), False, a.v4_depth_list, a.v4_subnets),
            True: PrefixGen(random.Random(a.seed * 7 + 2), True, a.v6_depth_list, a.v6_trunks)}
    n4, n6 = split_mix(a.routes, a.mix)
    t = time.monotonic()
    routes = make_routes(gens, n4, n6, groups, rng)
    log('generated %d routes (%d IPv4 %s, %d IPv6 %s) in %.1f s; tbl8 groups they need: IPv4 %d, '
        'IPv6 %d (each table has %d)' % (len(routes), n4, depth_text(a.v4_depth_list), n6,
                                         depth_text(a.v6_depth_list), time.monotonic() - t,
                                         len(gens[False].tbl8), len(gens[True].tbl8), TBL8_GROUPS))
    doc = {'roceswitch': a.roceswitch, 'traffic': sw.traffic, 'batch': a.batch, 'seed': a.seed,
           'mix': '%d:%d' % a.mix, 'v4_depths': depth_text(a.v4_depth_list),
           'v6_depths': depth_text(a.v6_depth_list), 'v4_subnets': a.v4_subnets,
           'v6_trunks': a.v6_trunks, 'routes_requested': a.routes,
           'tables_before': {'ipv4': v4_0, 'ipv6': v6_0, 'ipv4_max': max4, 'ipv6_max': max6},
           'tbl8_needed': {'ipv4': len(gens[False].tbl8), 'ipv6': len(gens[True].tbl8)}}

    traffic = Traffic(cl)
    time.sleep(1.0)
    traffic.sample()
    idle_mpps = traffic.rate_mpps(0, 1)
    inst_mpps = inst_wwait = NAN
    peak = [v4_0, v6_0]
    checks = []
    install = delete = None
    rss0 = sw.rss_kb()
    if routes:
        first = routes[:a.batch]
        t = time.perf_counter()
        json_encode_add(1, first)
        enc_json = time.perf_counter() - t
        t = time.perf_counter()
        encode_add(1, first)
        enc_fmt = time.perf_counter() - t
        if prof:
            prof.start('install')
        install = run_phase(cl, 'install', routes, a.batch, encode_add, sw, traffic, v4_0, v6_0, True)
        inst_mpps = install['forwarding_mpps']
        inst_wwait = install['worker_waited_ms']
        if prof:
            install['profile'] = prof.stop(install['wall_s'], install['routes'])
        first_lat = install['per_batch'][0]['latency_s'] if install['per_batch'] else NAN
        doc['client_encoding'] = {'json_dumps_ms': enc_json * 1e3, 'format_ms': enc_fmt * 1e3,
                                  'first_batch_latency_ms': first_lat * 1e3,
                                  'json_dumps_share': enc_json / first_lat if first_lat else NAN}
        log('client: json.dumps of one %d-route batch takes %.1f ms, %.1f%% of the %.1f ms the '
            'switch took to answer the first batch (string formatting: %.1f ms); every batch is '
            'encoded before the clock starts' % (len(first), enc_json * 1e3,
                                                 100 * enc_json / first_lat if first_lat else NAN,
                                                 first_lat * 1e3, enc_fmt * 1e3))
        installed = routes[:install['routes']]
        v4_1, v6_1, _, _ = table_sizes(cl)
        if (v4_1, v6_1) != (install['ipv4_after'], install['ipv6_after']):
            raise Failure('tables hold IPv4 %d / IPv6 %d routes after the install, expected %d / %d'
                          % (v4_1, v6_1, install['ipv4_after'], install['ipv6_after']))
        peak = [max(peak[0], v4_1), max(peak[1], v6_1)]
        rss1 = sw.rss_kb()
        n_inst = len(installed)
        if a.churn:
            doc['churn'] = churn(sw.sock, a.churn, a.churn_seconds, a.mix, a.seed, deadline, log_fn=log)
        drng = random.Random(a.seed * 7 + 3)
        order = list(installed)
        drng.shuffle(order)
        if prof:
            prof.start('delete')
        delete = run_phase(cl, 'delete', order, a.batch, encode_del, sw, traffic, v4_1, v6_1, False)
        if prof:
            delete['profile'] = prof.stop(delete['wall_s'], delete['routes'])
        rss2 = sw.rss_kb()
        v4_2, v6_2, _, _ = table_sizes(cl)
        if (v4_2, v6_2) != (v4_0, v6_0):
            raise Failure('tables hold IPv4 %d / IPv6 %d routes after the delete, expected %d / %d'
                          % (v4_2, v6_2, v4_0, v6_0))
        doc['memory'] = {
            'rss_kb_before': rss0, 'rss_kb_after_install': rss1, 'rss_kb_after_delete': rss2,
            'bytes_per_route': (rss1 - rss0) * 1024 / n_inst if n_inst and rss1 and rss0 else NAN,
            'tables_preallocated_mb': preallocated_mb(max4, max6, a),
            'dpdk_heap': 'not reported by the control protocol: resident memory only'}
    doc['install'], doc['delete'] = install, delete

    fills = {}
    if a.fill:
        for v6 in (False, True):
            fam = 'ipv6' if v6 else 'ipv4'
            u4, u6, m4, m6 = table_sizes(cl)
            want = (m6 - u6 if v6 else m4 - u4) + 1  # one past the limit: the switch must refuse it
            g = PrefixGen(random.Random(a.seed * 7 + 11 + v6), v6,
                          a.v6_depth_list if v6 else a.v4_depth_list,
                          a.v6_trunks if v6 else a.v4_subnets)
            froutes, exhausted = [], None
            try:
                for _ in range(want):
                    ad, d = g.take()
                    froutes.append(Route(v6, prefix_text(v6, ad, d), rng.choice(groups)))
            except Exhausted as e:
                exhausted = str(e)
                log('fill %s: %s after %d prefixes' % (fam, e, len(froutes)))
            log('fill %s: up to %d routes (table: %d of %d); tbl8 groups they need: %d'
                % (fam, len(froutes), u6 if v6 else u4, m6 if v6 else m4, len(g.tbl8)))
            ph = run_phase(cl, 'fill ' + fam, froutes, a.batch, encode_add, sw, traffic, u4, u6, True)
            s4, s6, _, _ = table_sizes(cl)
            peak = [max(peak[0], s4), max(peak[1], s6)]
            ph['table_size'] = s6 if v6 else s4
            ph['generator_exhausted'] = exhausted
            rss_full = sw.rss_kb()
            back = froutes[:ph['routes']]
            random.Random(a.seed * 7 + 13).shuffle(back)
            dl = run_phase(cl, 'empty ' + fam, back, a.batch, encode_del, sw, traffic, s4, s6, False)
            fills[fam] = {'fill': ph, 'empty': dl, 'rss_kb_full': rss_full,
                          'tbl8_needed': len(g.tbl8)}
        doc['fill'] = fills

    traffic.sample()
    final = cl.call({'op': 'counters'})['totals']
    cl.close()
    live = ('received %d, sent %d, queued %d, in flight %d, dropped %d (live totals, read while '
            'the worker runs: not one instant, so they need not balance)'
            % (final['received'], final['sent'], final['queued'], final['in_flight'], final['dropped']))
    rc = sw.stop()
    stats_ok, stats_line, ssamples = False, 'no stats file', []
    try:
        with open(sw.stats) as fh:
            sj = json.load(fh)
        st, ssamples = sj['totals'], sj.get('samples', [])
        stats_ok = bool(st['balanced'])
        stats_line = ('received %d = sent %d + queued %d + in flight %d + dropped %d'
                      % (st['received'], st['sent'], st['queued'], st['in_flight'], st['dropped']))
    except (OSError, ValueError, KeyError) as e:
        stats_line = 'stats file unreadable: %s' % e
    # Traffic flowed: between every two counters reads (phase boundaries) and every two of the
    # switch's once-a-second samples.
    t00 = traffic.samples[0][0]
    pairs = [(a_[1], b_[1], a_[2], b_[2], 'counters', a_[0] - t00, b_[0] - t00)
             for a_, b_ in zip(traffic.samples, traffic.samples[1:])]
    # After a long request the switch's loop takes the samples it missed back to back: compare
    # samples at least 0.1 s apart.
    kept = []
    for x in ssamples:
        if not kept or x['t_s'] - kept[-1]['t_s'] >= 0.1:
            kept.append(x)
    ssamples = kept
    pairs += [(a_['received'], b_['received'], a_['sent'], b_['sent'], 'switch', a_['t_s'], b_['t_s'])
              for a_, b_ in zip(ssamples, ssamples[1:])]
    stall_list = [p_ for p_ in pairs if p_[1] <= p_[0] or p_[3] <= p_[2]]
    stalls = len(stall_list)
    for p_ in stall_list:
        log('traffic stalled between %s samples at %.2f s and %.2f s: received %d -> %d, sent %d -> %d'
            % (p_[4], p_[5], p_[6], p_[0], p_[1], p_[2], p_[3]))
    flowing = len(traffic.samples) >= 2 and not stalls
    checks.append(('traffic flowing: received and sent grew between every two of %d counters '
                   'reads and of %d once-a-second samples of the switch (%d stalls)'
                   % (len(traffic.samples), len(ssamples), stalls), flowing))
    checks.append(('books balance at exit, exit status %s (%s)' % (rc, stats_line),
                   stats_ok and rc == 0))
    doc['traffic_check'] = {'samples': [{'t_s': s[0] - traffic.samples[0][0], 'received': s[1],
                                         'sent': s[2], 'dropped': s[3]} for s in traffic.samples],
                            'switch_samples': len(ssamples), 'stalls': stalls, 'flowing': flowing,
                            'stall_pairs': [{'source': p_[4], 't0_s': p_[5], 't1_s': p_[6],
                                             'received': [p_[0], p_[1]], 'sent': [p_[2], p_[3]]}
                                            for p_ in stall_list],
                            'forwarding_mpps': traffic.rate_mpps(0, -1) if len(traffic.samples) > 1 else NAN,
                            'idle_mpps': idle_mpps, 'install_mpps': inst_mpps}
    doc['checks'] = [{'check': c, 'ok': ok} for c, ok in checks]
    doc['totals_live_at_end'] = final

    # ---- report
    if install:
        print('\ninstall, per batch:\n' + batch_table(install))
        print('\ndelete, per batch:\n' + batch_table(delete))
    for fam, f in fills.items():
        print('\nfill %s, per batch:\n' % fam + batch_table(f['fill']))
    rows = [('figure', 'value')]
    rows.append(('traffic', sw.traffic))
    rows.append(('batch size', '%d route operations a transaction' % a.batch))
    if install:
        v4n = sum(1 for r in routes[:install['routes']] if not r.v6)
        rows.append(('routes installed', '%d (IPv4 %d %s, IPv6 %d %s; mix %d:%d)'
                     % (install['routes'], v4n, depth_text(a.v4_depth_list),
                        install['routes'] - v4n, depth_text(a.v6_depth_list), a.mix[0], a.mix[1])))
        rows.append(('tables after install', 'IPv4 %d, IPv6 %d%s' % (
            install['ipv4_after'], install['ipv6_after'],
            ' (stopped: %s)' % install['table_full'] if install['table_full'] else '')))
        for ph in (install, delete):
            rows.append(('%s rate' % ph['what'], '%s routes/s (%d routes, %.3f s wall)'
                         % (fmt_int(ph['routes_per_s']), ph['routes'], ph['wall_s'])))
            ct = ph['control_thread_ms']
            rows.append(('%s CPU' % ph['what'], 'control thread on CPU %.0f ms = %s routes per CPU '
                         'second; waited %.0f ms for a CPU' % (ct['on_cpu'], fmt_int(ph['routes_per_cpu_s']),
                                                               ct['waiting_for_cpu'])))
            rows.append(('%s latency a batch' % ph['what'], 'p50 %.1f ms, p99 %.1f ms, max %.1f ms'
                         % (ph['latency_ms']['p50'], ph['latency_ms']['p99'], ph['latency_ms']['max'])))
        m = doc['memory']
        rows.append(('switch RSS', 'before %s kB, after install %s kB, after delete %s kB (not '
                     'returned)' % (m['rss_kb_before'], m['rss_kb_after_install'], m['rss_kb_after_delete'])))
        rows.append(('memory a route', '%s bytes of RSS growth a route; mostly first touches of '
                     'the tables the banks preallocate (%s MB; without hugepages a page is '
                     'resident once written)' % (fmt_int(m['bytes_per_route']),
                                                 fmt_num(m['tables_preallocated_mb'], '%.0f'))))
        ce = doc['client_encoding']
        rows.append(('client encoding', 'json.dumps %.1f ms a batch = %.1f%% of its apply time: '
                     'pre-encoded' % (ce['json_dumps_ms'], 100 * ce['json_dumps_share'])))
    if 'churn' in doc:
        c = doc['churn']
        rows.append(('churn (table loaded)', '%s updates/s of %g asked; latency p50 %.3f ms, p99 %.3f ms, '
                     'max %.3f ms'
                     % (fmt_int(c['updates_per_s']), c['target'], c['latency_ms']['p50'],
                        c['latency_ms']['p99'], c['latency_ms']['max'])))
    for fam, f in fills.items():
        ph, dl = f['fill'], f['empty']
        rows.append(('fill %s' % fam, 'table size %d (%s); %s routes/s in, %s routes/s out; RSS full %s kB'
                     % (ph['table_size'], ph['table_full'] or ph['generator_exhausted'] or 'not full',
                        fmt_int(ph['routes_per_s']), fmt_int(dl['routes_per_s']), f['rss_kb_full'])))
    during = ('%s Mpps during the install (its worker waited %s ms for its CPU meanwhile), '
              % (fmt_num(inst_mpps, '%.2f'), fmt_num(inst_wwait, '%.0f')) if install else '')
    rows.append(('forwarding', '%s Mpps sent in 1 s before any change, %s%s Mpps over the whole run'
                 % (fmt_num(idle_mpps, '%.2f'), during,
                    fmt_num(doc['traffic_check']['forwarding_mpps'], '%.2f'))))
    rows.append(('at the end', live))
    for c, ok in checks:
        rows.append(('check', '%s: %s' % ('ok' if ok else 'FAILED', c)))
    print('\nsummary:\n' + render(rows, header=True, left=True))

    rate = install['routes_per_s'] if install else NAN
    doc['final'] = {'routes_per_s': rate, 'ipv4_max': peak[0], 'ipv6_max': peak[1]}
    if a.json:
        emit_json(a.json, doc)
    print('routes_per_s=%s ipv4_max=%d ipv6_max=%d' % (fmt_int(rate) if install else 0, peak[0], peak[1]))
    sys.stdout.flush()
    return 0 if all(ok for _, ok in checks) else 1
