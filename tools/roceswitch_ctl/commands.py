"""The command table: each command's words, the operation it sends, its arguments, how it builds the
operation's fields and how it shows a read's result; and the argument parser built from it."""

import argparse
import json

from .args import (addresses, int_map, keyvals, members, nexthops_arg, on_off, opt, per_queue, policy_value, positive, vlan_id, vlan_ids,
                   tc_policy)
from .client import DEFAULT_SOCKET, PROG, UsageError
from .runners import run_batch, run_buffer_set, run_capture, run_p4, run_raw, run_system_set, run_trace
from .show import (show_counters, show_dump, show_fdb, show_groups, show_limits, show_lldp, show_mirrors, show_neighbours, show_ops, show_ports,
                   show_qos, show_routes)
from .watch import run_watch


class Parser(argparse.ArgumentParser):
    def error(self, message):  # raised, not exited: a batch file's lines are parsed here too
        raise UsageError(message, self)


def A(*flags, **kw):
    return flags, kw


def group_fields(a):
    if a.param and not a.policy:
        raise UsageError('--param needs --policy (a policy is given whole, with its parameters)')
    by_tc = None
    if a.policy_by_tc is not None:
        by_tc = dict(x for x in a.policy_by_tc if x is not None)
    return opt(name=a.name, members=a.members, policy=a.policy and policy_value(a.policy, a.param or []),
               table_size=a.table_size, policy_by_tc=by_tc)


def group_args(add):
    return [A('name', help='group name'),
            A('--members', type=members, action='extend', required=add, metavar='PORT=MAC[*WEIGHT],...',
              help='the members (replace them all with group set)'),
            A('--policy', metavar='NAME', help='routing policy (roceswitch -- --help-policies), default ecmp'),
            A('--param', type=keyvals, action='extend', metavar='K=V', help="the policy's parameters (repeatable)"),
            A('--table-size', type=positive(int), metavar='N', help='redirection table slots, a power of two'),
            A('--policy-by-tc', type=tc_policy, action='append', metavar='TC=NAME[:K=V]',
              help="a traffic class's own policy (repeatable; 'none' clears them)")]


class Cmd:
    def __init__(self, words, help, op=None, args=(), build=None, show=None, run=None):
        self.words, self.help, self.op, self.args = words, help, op, args
        self.build, self.show, self.run = build or (lambda a: {}), show, run
        self.read = show is not None

    def execute(self, cl, a, parser):
        if self.run:
            return self.run(cl, a, parser)
        result = cl.call({'op': self.op, **self.build(a)})
        if self.read:
            print(json.dumps(result, indent=2)) if a.json else self.show(result, a)
        return 0


def route_fields(a):
    if (a.via == 'drop') != (a.target is None):
        raise UsageError("route add PREFIX group NAME | nexthops PORT=MAC,... | drop (drop takes nothing after it)")
    target = {'group': lambda t: {'group': t}, 'nexthops': lambda t: {'nexthops': nexthops_arg(t)},
              'drop': lambda t: {'drop': True}}[a.via](a.target)
    return opt(prefix=a.prefix, replace=a.replace or None, **target)


def port_set_fields(a):
    """The given settings; an address family given empty ('' or none) is sent as null: no address of it."""
    fields = opt(port=a.name, speed_gbps=a.speed, cable_length_m=a.cable_length, mac=a.mac,
                 queues=opt(limit_packets=a.limit_packets, limit_bytes=a.limit_bytes, scheduler=a.scheduler,
                            weights=a.weights) or None, icmp_unreachable=a.icmp_unreachable, lldp=a.lldp)
    for family in ('ipv4', 'ipv6'):
        if getattr(a, family) is not None:
            fields[family] = getattr(a, family) or None
    # VLAN membership, a merge patch of the port's vlan: 'none' (null) removes that part.
    vlan = {}
    if a.vlan_access is not None:
        vlan['access'] = None if a.vlan_access == 'none' else a.vlan_access
    if a.vlan_tagged is not None:
        vlan['tagged'] = None if a.vlan_tagged == 'none' else a.vlan_tagged
    if vlan:
        fields['vlan'] = vlan
    return fields


COMMANDS = [
    Cmd('route add', 'route a prefix to a next-hop group, to next hops of its own, or drop it (a blackhole)', 'route.add',
        [A('prefix', help='IPv4 or IPv6 prefix, e.g. 10.1.0.0/16'),
         A('via', choices=['group', 'nexthops', 'drop'], metavar='group|nexthops|drop',
           help="'group NAME', 'nexthops PORT=MAC[*WEIGHT],...' (the route's own group), or 'drop'"),
         A('target', nargs='?', metavar='NAME|PORT=MAC,...'), A('--replace', action='store_true', help='replace an existing route')],
        route_fields),
    Cmd('route del', 'remove a route', 'route.del', [A('prefix')], lambda a: {'prefix': a.prefix}),
    Cmd('route list', 'routes inside a prefix (all by default)', 'route.list',
        [A('prefix', nargs='?'), A('--limit', type=int, metavar='N', help='at most N (the switch: 10000)')],
        lambda a: opt(prefix=a.prefix, limit=a.limit), show=show_routes),
    Cmd('group add', 'add a next-hop group', 'group.add', group_args(True), group_fields),
    Cmd('group set', 'change a group: what is given is replaced', 'group.set', group_args(False), group_fields),
    Cmd('group del', 'delete a group no route uses', 'group.del', [A('name')], lambda a: {'name': a.name}),
    Cmd('group list', 'groups: policy, members (port*weight), table size, routes', 'group.list',
        [A('name', nargs='?'), A('--names', action='store_true', help='names only, one a line')],
        lambda a: opt(name=a.name), show=show_groups),
    Cmd('port down', "set a port's admin state down (its link goes down)", 'port.set', [A('name')],
        lambda a: {'port': a.name, 'admin': 'down'}),
    Cmd('port up', "set a port's admin state up", 'port.set', [A('name')], lambda a: {'port': a.name, 'admin': 'up'}),
    Cmd('port set', "change a port's rate, queues, MAC, addresses, ICMP unreachable, LLDP and VLANs on the running switch "
        '(what is given only)', 'port.set',
        [A('name'), A('--speed', type=float, metavar='GBPS', help='the link rate the port sends at'),
         A('--mac', metavar='MAC', help="the port's own MAC (its frames' and PFC frames' source)"),
         A('--cable-length', type=float, metavar='M', help='cable length (lossless headroom is checked against it)'),
         A('--limit-packets', type=per_queue(int), metavar='N|N0,...,N7', help="queue limits in packets"),
         A('--limit-bytes', type=per_queue(int), metavar='N|N0,...,N7', help='queue limits in bytes'),
         A('--scheduler', type=per_queue(str), metavar='S|S0,...,S7', help='strict or dwrr'),
         A('--weights', type=per_queue(int), metavar='W|W0,...,W7', help='DWRR weights'),
         A('--ipv4', type=addresses, metavar='ADDR[,ADDR...]',
           help="the port's IPv4 addresses, e.g. 10.0.1.1/24 (they replace its IPv4 ones; '' or none: no IPv4 address)"),
         A('--ipv6', type=addresses, metavar='ADDR[,ADDR...]',
           help="the port's IPv6 addresses, e.g. 2001:db8:1::1/64 (they replace its IPv6 ones; '' or none: none)"),
         A('--icmp-unreachable', type=on_off, metavar='on|off',
           help='answer a packet no route takes with ICMP destination unreachable'),
         A('--lldp', type=on_off, metavar='on|off', help='send LLDP with DCBX (PFC, ETS, RoCE priority) on the port'),
         A('--vlan-access', type=vlan_id, metavar='VID|none',
           help="the VLAN the port carries untagged (a declared one; none: no untagged VLAN)"),
         A('--vlan-tagged', type=vlan_ids, metavar='VID[,VID...]|none',
           help='the VLANs the port carries tagged (they replace its tagged ones; none: no tagged VLAN)')],
        port_set_fields),
    Cmd('port list', 'ports: admin and link state, speed', 'port.list',
        [A('--names', action='store_true', help='names only, one a line')], show=show_ports),
    Cmd('mirror set', "add or replace a mirror session: copies of ports' received (--rx) or sent (--tx) frames "
        'to a port', 'mirror.set',
        [A('name', help='session name'), A('dst', metavar='DST_PORT', help='where the copies go'),
         A('--rx', type=lambda t: [x for x in t.split(',') if x], action='extend', metavar='PORT,...',
           help='ports whose received frames are copied (before any check: dropped ones too)'),
         A('--tx', type=lambda t: [x for x in t.split(',') if x], action='extend', metavar='PORT,...',
           help='ports whose sent frames are copied (after the rewrite)'),
         A('--truncate', type=int, metavar='BYTES', help='keep this much of each frame (default: whole)'),
         A('--queue', type=int, metavar='Q', help="the destination's queue, a lossy one (default 0)")],
        lambda a: opt(name=a.name, dst_port=a.dst, rx_ports=a.rx, tx_ports=a.tx, truncate=a.truncate, queue=a.queue)),
    Cmd('mirror del', 'remove a mirror session', 'mirror.del', [A('name')], lambda a: {'name': a.name}),
    Cmd('mirror list', 'mirror sessions, with the copies made and lost', 'mirror.list', show=show_mirrors),
    Cmd('neighbours', 'the neighbour table (ARP / ND): port, address, MAC, state', 'neighbour.list', show=show_neighbours),
    Cmd('fdb', "the bridge's MAC table (learned addresses per VLAN and port)", 'fdb.list', show=show_fdb),
    Cmd('lldp', "LLDP neighbours and their DCBX settings (PFC, ETS, RoCE's application priority)", 'lldp.list', show=show_lldp),
    Cmd('counters', 'counters: a table a port, or one port or group', 'counters',
        [A('object', nargs='?', help='a port or group name')], lambda a: opt(object=a.object), show=show_counters),
    Cmd('config dump', 'the running state as a configuration the switch starts from', 'config.dump',
        [A('file', nargs='?', help='write it here (default: standard output)')], show=show_dump),
    Cmd('state hash', 'a hash of the running state (equal states, equal hashes)', 'state.hash',
        show=lambda r, a: print(r['hash'])),
    Cmd('limits', 'what the control plane accepts at most, and what is used', 'limits', show=show_limits),
    Cmd('ops', "the switch's operations (its help)", 'help', show=show_ops),
    Cmd('batch', 'apply a file of changes as one transaction',
        args=[A('file', metavar='FILE|-', help='one change a line: an operation object ({"op": ...}) or a '
                'command line (route add 10.1.0.0/16 group spine); # comments')], run=run_batch),
    Cmd('buffer get', "the traffic manager's settings (buffer, wred_profiles, queue_wred, pfcwd, pfc_quanta, load_view) and each port's "
        'rate, cable and queues, as YAML `buffer set` and the config take', 'buffer.get',
        [A('file', nargs='?', help='write it here (default: standard output)')], show=show_dump),
    Cmd('buffer set', 'merge a file of lossless sections (as `buffer get` writes them) into the running switch',
        args=[A('file', metavar='FILE|-', help='YAML: any of buffer, wred_profiles, queue_wred, pfcwd, pfc_quanta, '
                'load_view, ports; a map merges into the running one, null removes a key')], run=run_buffer_set),
    Cmd('system get', "the switch's settings as a host on its links (lldp, neighbours, copp, bridge, vlans), as YAML "
        '`system set` and the config take', 'system.get',
        [A('file', nargs='?', help='write it here (default: standard output)')], show=show_dump),
    Cmd('system set', 'merge a file of those sections (as `system get` writes them) into the running switch',
        args=[A('file', metavar='FILE|-', help='YAML: any of lldp, neighbours, copp, bridge (ageing_s), vlans (the whole '
                "list: only its interfaces' addresses may change); a map merges into the running one, null: the "
                'default')], run=run_system_set),
    Cmd('qos get', 'the classification maps (trust, DSCP/PCP to class, class to queue, CNP queue)', 'qos.get', show=show_qos),
    Cmd('qos set', 'change the classification maps on the running switch (the given entries only)', 'qos.set',
        [A('--trust', choices=['dscp', 'pcp']), A('--dscp-to-tc', type=int_map, metavar='DSCP=TC,...'),
         A('--pcp-to-tc', type=int_map, metavar='PCP=TC,...'), A('--tc-to-queue', type=int_map, metavar='TC=QUEUE,...'),
         A('--cnp-queue', type=int, metavar='Q', help='CNPs to this queue (-1: classified like any packet)')],
        lambda a: opt(trust=a.trust, dscp_to_tc=a.dscp_to_tc, pcp_to_tc=a.pcp_to_tc, tc_to_queue=a.tc_to_queue,
                      cnp_queue=a.cnp_queue)),
    Cmd('p4', "program the P4 program's tables with BMv2 simple_switch_CLI commands (one transaction)",
        args=[A('file', metavar='FILE|-', help='one command a line, as for simple_switch_CLI (table_indirect_add, '
                'act_prof_create_member, table_add dscp_to_tc ...); # comments')], run=run_p4),
    Cmd('trace', "follow the next packets through the pipeline: one line a stage, what it read and decided",
        args=[A('count', type=int, help='packets each worker traces'),
              A('--every', type=positive(int), metavar='K', help='then 1 packet in K, until --wait runs out'),
              A('--wait', type=positive(float), default=5.0, metavar='S', help='how long to wait for the packets (5)'),
              A('--json', action='store_true', help='print the result as JSON')], run=run_trace),
    Cmd('capture', "write a port's packets to a pcapng file (Wireshark, tshark) until a count or a duration",
        args=[A('port', help='port name'), A('direction', nargs='?', choices=['rx', 'tx', 'both'], default='both'),
              A('file', metavar='FILE.pcapng'), A('--count', type=positive(int), metavar='N', help='stop after N packets'),
              A('--duration', type=positive(float), metavar='S', help='stop after S seconds'),
              A('--snaplen', type=positive(int), metavar='BYTES', help='keep this much of each packet'),
              A('--json', action='store_true', help='print the result as JSON')], run=run_capture),
    Cmd('raw', 'send one request as given, print the response', args=[A('request', metavar='JSON')], run=run_raw),
    Cmd('watch', 'live per-port rates, queues, PFC, ECN and drops',
        args=[A('--interval', type=positive(float), default=1.0, metavar='S', help='seconds between refreshes (1)'),
              A('--count', type=positive(int), metavar='N', help='stop after N refreshes')], run=run_watch),
]


def build_parser(description):
    common = Parser(add_help=False)
    common.add_argument('--socket', default=argparse.SUPPRESS, metavar='PATH',
                        help=f'control socket (env ROCESWITCH_SOCKET, else {DEFAULT_SOCKET})')
    common.add_argument('--timeout', type=positive(float), default=argparse.SUPPRESS, metavar='S',
                        help='seconds to wait for the switch (30)')
    top = Parser(prog=PROG, parents=[common], description=description,
                 epilog='Each command has --help; reads take --json (the raw result).')
    # (not set_defaults(socket=...): the options' actions are shared with every subparser)
    top.set_defaults(cmd=None, noun=top)
    nouns = top.add_subparsers(metavar='COMMAND', title='commands')
    verbs = {}
    for cmd in COMMANDS:
        words = cmd.words.split()
        if len(words) == 1:
            p = nouns.add_parser(words[0], parents=[common], help=cmd.help, description=cmd.help)
        else:
            if words[0] not in verbs:
                np = nouns.add_parser(words[0], help=f'{words[0]} commands', parents=[common])
                np.set_defaults(noun=np)
                verbs[words[0]] = np.add_subparsers(metavar='COMMAND', title='commands')
            p = verbs[words[0]].add_parser(words[1], parents=[common], help=cmd.help, description=cmd.help)
        for flags, kw in cmd.args:
            p.add_argument(*flags, **kw)
        if cmd.read:
            p.add_argument('--json', action='store_true', help='print the raw JSON result')
        p.set_defaults(cmd=cmd)
        cmd.parser = p
    return top
