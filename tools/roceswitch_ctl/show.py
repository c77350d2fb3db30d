"""What a read prints: tables padded to their widest cell, one printer a command (COMMANDS' show=)."""

import json
import re
import sys

from .client import CtlError

NUMERIC = re.compile(r'^-?[0-9][0-9.,]*[KMGT]?$|^-$')


def num(v):
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def human(b):
    if b < 1024:
        return f'{b:.0f}'
    for unit in 'KMG':
        b /= 1024
        if b < 1024 or unit == 'G':
            return f'{b:.1f}{unit}'


def table(headers, rows, out=None):
    """Columns padded to their widest cell; numeric columns right-aligned."""
    out = out if out is not None else sys.stdout
    rows = [[num(c) for c in r] for r in rows]
    width = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    right = [bool(rows) and all(NUMERIC.match(r[i]) for r in rows) for i in range(len(headers))]
    for r in [headers] + rows:
        cells = [c.rjust(w) if ri else c.ljust(w) for c, w, ri in zip(r, width, right)]
        out.write('  '.join(cells).rstrip() + '\n')


def policy_text(p, params=True):
    if isinstance(p, str):
        return p
    if not params:
        return p['name']
    params = p['params'] if isinstance(p.get('params'), dict) else {k: v for k, v in p.items() if k not in ('name', 'counters')}
    inner = ','.join(f'{k}={num(v)}' for k, v in sorted(params.items()))
    return f"{p['name']}({inner})" if inner else p['name']


def group_policy_text(g, params=True):
    by_tc = g.get('policy_by_tc') or {}
    return ' '.join([policy_text(g['policy'], params)] + [f'tc{tc}={policy_text(by_tc[tc], params)}' for tc in sorted(by_tc)])


def show_routes(r, a):
    if r['routes']:
        table(['prefix', 'group'], [[x['prefix'], 'drop' if x.get('drop') else x['group']] for x in r['routes']])
    line = f"{r['total']} route{'' if r['total'] == 1 else 's'}"
    print(line + (f" (first {len(r['routes'])} shown)" if r['truncated'] else ''))


def show_groups(r, a):
    if a.names:
        return print('\n'.join(g['name'] for g in r))
    # Every parameter is listed (defaults too): in the table for one group only.
    table(['name', 'policy', 'members', 'table', 'routes'],
          [[g['name'], '-' if g.get('drop') else group_policy_text(g, params=bool(a.name)),
            'drop' if g.get('drop') else ','.join(f"{m['port']}*{m['weight']}" for m in g['members']),
            g['table_size'], g['routes']] for g in r])


def show_ports(r, a):
    if a.names:
        return print('\n'.join(p['name'] for p in r))
    table(['name', 'admin', 'link', 'speed'], [[p['name'], p['admin'], p['link'], f"{num(p['speed_gbps'])}G"] for p in r])


def show_mirrors(r, a):
    table(['name', 'dst', 'rx ports', 'tx ports', 'truncate', 'queue', 'copies', 'lost'],
          [[m['name'], m['dst_port'], ','.join(m['rx_ports']) or '-', ','.join(m['tx_ports']) or '-',
            m['truncate'] or 'whole', m['queue'], m['copies'], m['lost']] for m in r])


def show_neighbours(r, a):
    table(['port', 'ip', 'mac', 'state', 'held'],
          [[n['port'], n['ip'], n['mac'] or '-', n['state'] + (' (static)' if n.get('static') else ''), n['held']] for n in r])


def show_fdb(r, a):
    table(['vlan', 'mac', 'port'], [[e['vlan'], e['mac'], e['port']] for e in sorted(r, key=lambda e: (e['vlan'], e['mac']))])


def show_lldp(r, a):
    def pfc(n):
        return f"{n['pfc']['enable']:#04x}" if 'pfc' in n else '-'
    table(['port', 'chassis', 'port_id', 'system', 'ttl', 'pfc_enable', 'ets_bw', 'app', 'mismatch'],
          [[n['port'], n['chassis_id'], n['port_id'], n['system_name'] or '-', n['ttl'], pfc(n),
            '/'.join(str(b) for b in n['ets']['bw_pct']) if 'ets' in n else '-',
            ','.join(f"{x['protocol']}:{x['priority']}" for x in n['app'] if x['selector'] == 3) or '-',
            'PFC' if n['pfc_mismatch'] else '-'] for n in r])


def port_sums(p):
    """The figures the summary and watch show, from one port of the stats JSON (app/stats_json.cc)."""
    pfc, queues = p.get('pfc', {}), p.get('queues', [])
    return {'rx_packets': p.get('rx_packets', 0), 'tx_packets': p.get('tx_packets', 0),
            'rx_bytes': p.get('rx_bytes', 0), 'tx_bytes': p.get('tx_bytes', 0),
            'drops': sum(p.get('drops', {}).values()), 'queued': p.get('load', {}).get('queued_bytes', 0),
            'pfc_tx': pfc.get('frames_sent', 0),
            # PFC received, per priority (one frame may pause several) and 802.3x PAUSE
            'pfc_rx': sum(pfc.get('rx_xoff', [])) + sum(pfc.get('rx_xon', [])) + pfc.get('rx_pause', 0),
            'ecn': sum(q.get('ecn_marked', 0) for q in queues)}


def show_counters(r, a):
    if 'ports' in r:  # the whole switch: one line a port
        rows = []
        for p in r['ports']:
            s = port_sums(p)
            rows.append([p['name'], s['rx_packets'], s['tx_packets'], s['drops'], s['queued'], s['pfc_tx'], s['pfc_rx'], s['ecn']])
        table(['port', 'rx_packets', 'tx_packets', 'drops', 'queue_bytes', 'pfc_tx', 'pfc_rx', 'ecn_marked'], rows)
        t = r.get('totals', {})
        print(f"totals: received {t.get('received')} sent {t.get('sent')} queued {t.get('queued')} "
              f"dropped {t.get('dropped')}, lossless drops {r.get('lossless_drops')}")
    elif 'queues' in r:  # one port
        s, pfc = port_sums(r), r.get('pfc', {})
        print(f"{r['name']} ({r.get('kind')}, {num(r.get('speed_gbps'))} Gb/s, link {'up' if r.get('link_up') else 'down'}, "
              f"quality {r.get('load', {}).get('quality')})")
        print(f"rx {s['rx_packets']} packets {s['rx_bytes']} bytes, tx {s['tx_packets']} packets {s['tx_bytes']} bytes")
        print('drops: ' + (' '.join(f'{k}={v}' for k, v in sorted(r.get('drops', {}).items())) or 'none'))
        print(f"pfc: {s['pfc_tx']} frames sent; received xoff {pfc.get('rx_xoff')} xon {pfc.get('rx_xon')} pause {pfc.get('rx_pause')}")
        table(['queue', 'depth_bytes', 'peak_bytes', 'enqueued', 'dequeued', 'drops', 'ecn_marked', 'paused'],
              [[q['queue'], q['depth_bytes'], q['peak_bytes'], q['enqueued_packets'], q['dequeued_packets'],
                sum(q.get('drops', {}).values()), q['ecn_marked'], 'yes' if q.get('paused_now') else 'no']
               for q in r['queues'] if q['enqueued_packets'] or q['depth_bytes'] or q.get('paused_now')])
    elif 'members' in r:  # one group
        print(f"{r['name']}: {group_policy_text(r)}, failovers {r.get('failovers')}")
        ctr = r.get('policy', {}).get('counters') or {}
        if ctr:
            print('policy counters: ' + ' '.join(f'{k}={v}' for k, v in ctr.items()))
        table(['port', 'nexthop', 'link', 'packets', 'bytes'],
              [[m['port'], m['nexthop'], 'up' if m.get('link_up') else 'down', m['packets'], m['bytes']] for m in r['members']])
    else:
        print(json.dumps(r, indent=2))


def show_dump(r, a):
    text = r['yaml'] if r['yaml'].endswith('\n') else r['yaml'] + '\n'  # buffer.get, system.get: no last newline
    if a.file:
        try:
            with open(a.file, 'w') as f:
                f.write(text)
        except OSError as e:
            raise CtlError(e.strerror, a.file) from None
    else:
        sys.stdout.write(text)


def show_limits(r, a):
    table(['limit', 'used', 'max'],
          [[k, v.get('used', '-'), v.get('max', '-')] if isinstance(v, dict) else [k, '-', v] for k, v in r.items()])


def show_ops(r, a):
    table(['op', 'kind', 'arguments'], [[o['op'], 'write' if o['writes'] else 'read', o['args']] for o in r])


def show_qos(r, a):
    print(f"trust {r['trust']}, CNPs to queue {r['cnp_queue'] if r['cnp_queue'] >= 0 else '(classified like any packet)'}")
    table(['dscp'] + [str(d) for d in range(0, 64, 8)],
          [[f'+{o}'] + [r['dscp_to_tc'][d + o] for d in range(0, 64, 8)] for o in range(8)])
    table(['', *[str(i) for i in range(8)]], [['pcp_to_tc', *r['pcp_to_tc']], ['tc_to_queue', *r['tc_to_queue']]])
