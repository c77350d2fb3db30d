"""`gen valid`: well-formed RoCEv2 (IPv4 and IPv6) and plain UDP frames, deterministic for a
seed, interleaved evenly."""

import ipaddress
import random

from frames import build_roce_frame, build_udp_frame, linux_flow_label, linux_udp_sport, roce_l4
from pcap_tools import write_pcap
from wire import ETH_VLAN, OP_SEND_ONLY, OP_WRITE_ONLY, mac_bytes


def det_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


class _Flows:
    """Per flow: a random first PSN, then +1 a packet."""

    def __init__(self, rng):
        self.rng = rng
        self.next = {}

    def psn(self, key):
        if key not in self.next:
            self.next[key] = self.rng.randrange(0, 1 << 24)
        p = self.next[key]
        self.next[key] = (p + 1) & 0xFFFFFF
        return p


def _random_l4(rng, dqpn, psn, size):
    """SEND_ONLY or RDMA WRITE_ONLY (with RETH) of `size` payload bytes, padded to 4."""
    padcnt = (-size) % 4
    payload = det_bytes(rng, size)
    op = OP_SEND_ONLY if rng.random() < 0.5 else OP_WRITE_ONLY
    ack = 1 if rng.random() < 0.25 else 0
    reth = None
    if op == OP_WRITE_ONLY:
        reth = (0x7F0000000000 + (psn << 12), 0x1000 + (dqpn & 0xFFF), size)
    return roce_l4(op, dqpn, psn, payload + b'\x00' * padcnt, padcnt=padcnt, ackreq=ack,
                   reth=reth), op


def cmd_gen_valid(a):
    rng = random.Random(a.seed)
    dmac, smac = mac_bytes(a.dmac), mac_bytes(a.smac)
    dsts = a.dst or ['10.0.2.2', '10.0.3.2', '10.0.4.2']
    for d in dsts + [a.src]:
        ipaddress.IPv4Address(d)
    tos = ((a.dscp & 0x3F) << 2) | (a.ecn & 3)
    vlans = [] if a.vlan is None else [(ETH_VLAN, ((a.vlan & 7) << 13) | (a.vid & 0xFFF))]
    flows = _Flows(rng)
    forced_sizes = [0, 256, 1, 2, 3]

    v4, v6, udp = [], [], []
    ops = {OP_SEND_ONLY: 0, OP_WRITE_ONLY: 0}
    for i in range(a.count):
        di = i % len(dsts)
        q = (i // len(dsts)) % a.qps
        fidx = di * a.qps + q
        dqpn = 0x000100 + fidx * 0x11
        lqpn = 0x000200 + fidx * 0x13
        sport = linux_udp_sport(linux_flow_label(lqpn, dqpn))
        psn = flows.psn(('4', fidx))
        size = forced_sizes[i] if i < len(forced_sizes) else rng.randint(0, 256)
        l4, op = _random_l4(rng, dqpn, psn, size)
        ops[op] += 1
        v4.append(build_roce_frame(dmac, smac, 4, a.src, dsts[di], sport, l4, tos, a.ttl,
                                   ident=(a.seed * 7919 + i), vlans=vlans))
    for i in range(a.ipv6_count):
        q = i % a.qps
        dqpn = 0x000600 + q * 0x11
        lqpn = 0x000700 + q * 0x13
        fl = linux_flow_label(lqpn, dqpn)
        sport = linux_udp_sport(fl)
        psn = flows.psn(('6', q))
        size = rng.randint(0, 256) if i else 0
        l4, op = _random_l4(rng, dqpn, psn, size)
        ops[op] += 1
        v6.append(build_roce_frame(dmac, smac, 6, a.src6, a.dst6, sport, l4, tos, a.ttl,
                                   flow=fl, vlans=vlans))
    for i in range(a.udp_count):
        size = rng.randint(0, 200)
        payload = b'roceswitch-udp:%08d:' % i + det_bytes(rng, size)
        udp.append(build_udp_frame(dmac, smac, 4, a.src, dsts[i % len(dsts)], 10000 + (i % 1000),
                                   a.udp_dport, payload, (a.udp_dscp & 0x3F) << 2, a.ttl,
                                   ident=(a.seed * 7919 + 50000 + i), vlans=vlans))
    # interleave the three kinds evenly, deterministically
    tagged = []
    for kind, lst in ((0, v4), (1, v6), (2, udp)):
        n = len(lst)
        for j, fr in enumerate(lst):
            tagged.append(((j + 0.5) / n, kind, j, fr))
    tagged.sort(key=lambda t: t[:3])
    frames = [t[3] for t in tagged]
    write_pcap(a.out, frames)
    print('gen valid: wrote %d frames to %s (%d RoCEv2/IPv4, %d RoCEv2/IPv6, %d plain UDP; '
          '%d SEND_ONLY, %d WRITE_ONLY; %s)' %
          (len(frames), a.out, len(v4), len(v6), len(udp), ops[OP_SEND_ONLY], ops[OP_WRITE_ONLY],
           'VLAN pcp %d vid %d' % (a.vlan, a.vid) if vlans else 'untagged'))
    return 0


def add_command(gs):
    gv = gs.add_parser('valid', help='well-formed RoCEv2 / UDP packets', description=(
        'Write well-formed RoCEv2 packets: Ether/IPv4/UDP(dport 4791)/BTH[/RETH]/payload/pad/ICRC, '
        'RC SEND_ONLY or RDMA WRITE_ONLY, payload 0..256 bytes, UDP source port derived from the '
        'QP pair as Linux does, PSN incrementing per QP, IPv4 UDP checksum 0. Optional IPv6 RoCEv2 '
        'and plain UDP packets are interleaved evenly. Frames shorter than 60 bytes get Ethernet '
        'padding after the IP datagram (outside the ICRC). Built with scapy; every ICRC is '
        'recomputed by the oracle\'s own code.'))
    gv.add_argument('--out', required=True, help='output pcap')
    gv.add_argument('--count', type=int, default=100, help='IPv4 RoCEv2 packets (default 100)')
    gv.add_argument('--ipv6-count', type=int, default=0, help='IPv6 RoCEv2 packets '
                    '(2001:db8:1::2 -> 2001:db8:2::2, default 0)')
    gv.add_argument('--udp-count', type=int, default=0, help='plain IPv4 UDP (non-RoCE) packets (default 0)')
    gv.add_argument('--smac', default='02:00:00:00:aa:01', help='source MAC (default %(default)s)')
    gv.add_argument('--dmac', default='02:00:00:00:00:01', help='destination MAC (default %(default)s)')
    gv.add_argument('--src', default='10.0.1.2', help='IPv4 source (default %(default)s)')
    gv.add_argument('--dst', action='append', help='IPv4 destination, repeatable; packets cycle over '
                    'them (default 10.0.2.2, 10.0.3.2, 10.0.4.2)')
    gv.add_argument('--src6', default='2001:db8:1::2', help='IPv6 source (default %(default)s)')
    gv.add_argument('--dst6', default='2001:db8:2::2', help='IPv6 destination (default %(default)s)')
    gv.add_argument('--qps', type=int, default=4, help='QPs (flows) per destination (default 4)')
    gv.add_argument('--ttl', type=int, default=64, help='TTL / hop limit (default 64)')
    gv.add_argument('--dscp', type=int, default=26, help='DSCP of RoCE packets (default 26)')
    gv.add_argument('--ecn', type=int, default=2, help='ECN of RoCE packets (default 2 = ECT(0))')
    gv.add_argument('--udp-dscp', type=int, default=0, help='DSCP of plain UDP packets (default 0)')
    gv.add_argument('--udp-dport', type=int, default=5001, help='dport of plain UDP packets (default 5001)')
    gv.add_argument('--vlan', type=int, metavar='PCP', help='add one 802.1Q tag with this PCP')
    gv.add_argument('--vid', type=int, default=0, help='VLAN id with --vlan (default 0 = priority tag)')
    gv.add_argument('--seed', type=int, default=1, help='random seed (default 1)')
    gv.set_defaults(func=cmd_gen_valid)
