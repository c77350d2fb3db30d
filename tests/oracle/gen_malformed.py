"""`gen malformed`: one malformed frame per case, written byte-exact, and FILE.cases.json naming
the case of every frame and the first defect the oracle's own parser finds in it."""

import json
import os
import random
import struct

from frames import build_roce_frame, ip_datagram, pad60, roce_l4
from pcap_tools import write_pcap
from wire import (ETH_QINQ, ETH_VLAN, MIN_FRAME, OP_SEND_ONLY, ROCE_PORT, fix_ipv4_csum,
                  mac_bytes, parse_frame)

L3 = 14


def set_at(fr, off, val, fmt='!B'):
    b = bytearray(fr)
    struct.pack_into(fmt, b, off, val)
    return bytes(b)


def _cases(dmac, smac, rng):
    """[(name, frame bytes, description)], the empty frame not included."""
    payload = bytes(rng.getrandbits(8) for _ in range(32))
    l4 = roce_l4(OP_SEND_ONLY, 0x000123, 0x000456, payload)
    tos = (26 << 2) | 2
    src, dst, src6, dst6 = '10.0.1.2', '10.0.2.2', '2001:db8:1::2', '2001:db8:2::2'
    sport = 0xC123
    A = build_roce_frame(dmac, smac, 4, src, dst, sport, l4, tos, 64, ident=1)   # 90 bytes
    V = build_roce_frame(dmac, smac, 4, src, dst, sport, l4, tos, 64, ident=2,
                         vlans=[(ETH_VLAN, (3 << 13) | 0)])                        # 94 bytes
    S6 = build_roce_frame(dmac, smac, 6, src6, dst6, sport, l4, tos, 64, flow=0x12345)  # 110 bytes
    cases = []

    def add(name, fr, desc):
        cases.append((name, bytes(fr), desc))

    # Ethernet header cut (0 bytes is written last, by the caller)
    for k in range(1, 14):
        add('eth_cut_%d' % k, A[:k], 'frame of %d bytes, Ethernet header incomplete' % k)
    # VLAN tag cut
    for k in range(0, 4):
        add('vlan_cut_%d' % k, V[:14 + k], 'TPID 0x8100 followed by %d of 4 tag bytes' % k)
    # IPv4 header cut (raw truncation)
    for k in (0, 1, 10, 19):
        add('ipv4_cut_%d' % k, A[:L3 + k], 'IPv4 header cut after %d of 20 bytes' % k)
    add('vlan_ipv4_cut_10', V[:18 + 10], 'VLAN-tagged, IPv4 header cut after 10 bytes')
    # raw truncation of a whole RoCE frame at and inside each later header (IP length now
    # claims more than the frame holds)
    for off, what in ((L3 + 20, 'end_of_ipv4'), (L3 + 24, 'mid_udp'), (L3 + 28, 'end_of_udp'),
                      (L3 + 34, 'mid_bth'), (L3 + 40, 'end_of_bth'), (len(A) - 2, 'mid_icrc')):
        add('cut_at_%s' % what, A[:off], 'RoCE frame truncated to %d bytes (%s); IPv4 total '
            'length still says %d' % (off, what, len(A) - L3))
    # bad IHL
    for ihl in (0, 4):
        fr = fix_ipv4_csum(set_at(A, L3, 0x40 | ihl), L3, 20)
        add('ipv4_ihl_%d' % ihl, fr, 'IHL %d < 5 (checksum over 20 bytes valid)' % ihl)
    fr = bytearray(A[:MIN_FRAME])          # 46 bytes of IP
    fr[L3] = 0x4F                          # IHL 15 = 60 bytes > 46
    struct.pack_into('!H', fr, L3 + 2, len(fr) - L3)
    add('ipv4_ihl_gt_data', fix_ipv4_csum(bytes(fr), L3, 20),
        'IHL 15 (60 bytes) but only 46 bytes of IP; total length 46')
    # total length
    add('ipv4_totlen_gt_frame', fix_ipv4_csum(set_at(A, L3 + 2, len(A) - L3 + 100, '!H'), L3),
        'IPv4 total length %d > %d bytes in the frame' % (len(A) - L3 + 100, len(A) - L3))
    for tl in (16, 0):
        add('ipv4_totlen_%d_lt_ihl' % tl, fix_ipv4_csum(set_at(A, L3 + 2, tl, '!H'), L3),
            'IPv4 total length %d < IHL*4 (20)' % tl)
    add('ipv4_totlen_cuts_udp', fix_ipv4_csum(set_at(A, L3 + 2, 24, '!H'), L3),
        'IPv4 total length 24: only 4 bytes of UDP header inside the datagram (frame is longer)')
    # bad version
    for ver in (6, 0):
        add('ipv4_version_%d' % ver, fix_ipv4_csum(set_at(A, L3, (ver << 4) | 5), L3, 20),
            'version %d in an EtherType 0x0800 frame' % ver)
    add('ipv4_bad_checksum', set_at(A, L3 + 10, struct.unpack_from('!H', A, L3 + 10)[0] ^ 0x0101, '!H'),
        'IPv4 header checksum wrong (otherwise valid RoCE)')
    # UDP header cut with consistent IP length, padded to 60 bytes
    for k in (0, 4, 7):
        add('udp_cut_%d' % k, pad60(ip_datagram(dmac, smac, 4, src, dst, A[L3 + 20:L3 + 20 + k],
                                                tos=tos, ident=3)),
            'IPv4 datagram holds %d of 8 UDP header bytes (frame padded to 60)' % k)
    # UDP length
    for ul in (0, 7):
        add('udp_len_%d' % ul, set_at(A, L3 + 24, ul, '!H'), 'UDP length %d < 8' % ul)
    ulen_real = len(A) - L3 - 20
    add('udp_len_gt_remaining', set_at(A, L3 + 24, ulen_real + 10, '!H'),
        'UDP length %d > %d bytes left in the datagram' % (ulen_real + 10, ulen_real))
    # BTH cut / no room for ICRC, with consistent IP and UDP lengths
    for k in (0, 6, 11, 12, 15):
        udp = struct.pack('!HHHH', sport, ROCE_PORT, 8 + k, 0) + A[L3 + 28:L3 + 28 + k]
        name = ('bth_cut_%d' % k) if k < 12 else ('bth_no_icrc_%d' % k)
        add(name, pad60(ip_datagram(dmac, smac, 4, src, dst, udp, tos=tos, ident=4)),
            'UDP dport 4791 with %d bytes after the UDP header (%s)' %
            (k, 'BTH incomplete' if k < 12 else 'BTH but no room for the 4-byte ICRC'))
    # IPv6
    for k in (0, 20, 39):
        add('ipv6_cut_%d' % k, S6[:L3 + k], 'IPv6 header cut after %d of 40 bytes' % k)
    plen = len(S6) - L3 - 40
    add('ipv6_paylen_gt_frame', set_at(S6, L3 + 4, plen + 100, '!H'),
        'IPv6 payload length %d > %d bytes in the frame' % (plen + 100, plen))
    add('ipv6_version_4', set_at(S6, L3, (4 << 4) | (S6[L3] & 0xF)),
        'version 4 in an EtherType 0x86dd frame')
    add('ipv6_cut_at_mid_bth', S6[:L3 + 40 + 8 + 6],
        'IPv6 RoCE frame truncated inside the BTH; payload length still says %d' % plen)
    udp6 = struct.pack('!HHHH', sport, ROCE_PORT, 8 + 6, 0) + A[L3 + 28:L3 + 28 + 6]
    add('ipv6_bth_cut_6', pad60(ip_datagram(dmac, smac, 6, src6, dst6, udp6)),
        'IPv6/UDP dport 4791 with 6 bytes of BTH, lengths consistent')
    # stacked VLANs (otherwise valid RoCE)
    add('vlan_stacked_8100_8100', build_roce_frame(dmac, smac, 4, src, dst, sport, l4, tos, 64, ident=5,
                                                   vlans=[(ETH_VLAN, 100), (ETH_VLAN, 200)]),
        'two 802.1Q tags (0x8100, 0x8100), valid RoCE inside')
    add('vlan_stacked_88a8_8100', build_roce_frame(dmac, smac, 4, src, dst, sport, l4, tos, 64, ident=6,
                                                   vlans=[(ETH_QINQ, 100), (ETH_VLAN, 200)]),
        '802.1ad 0x88a8 outer + 0x8100 inner tag, valid RoCE inside')
    return cases


def cmd_gen_malformed(a):
    cases = _cases(mac_bytes(a.dmac), mac_bytes(a.smac), random.Random(a.seed))
    # empty frame last, so that a reader that skips it does not shift the other indices
    if not a.no_empty:
        cases.append(('eth_cut_0', b'', 'empty frame (0 bytes)'))

    frames = [c[1] for c in cases]
    write_pcap(a.out, frames)
    meta = []
    for i, (name, fr, desc) in enumerate(cases):
        f = parse_frame(fr)
        cat = f.err or 'ok'
        if cat == 'ok':
            raise SystemExit('internal error: malformed case %s parses as valid' % name)
        meta.append({'index': i, 'frame': i + 1, 'case': name, 'length': len(fr),
                     'reference_category': cat, 'reference_detail': f.detail, 'description': desc})
    side = a.out + '.cases.json'
    with open(side, 'w') as fh:
        json.dump({'file': os.path.basename(a.out), 'count': len(frames),
                   'note': 'index is 0-based, frame is 1-based (tshark numbering); '
                           'reference_category is the first defect found by roce_pcap.py\'s own '
                           'parser, in Ethernet/VLAN/IP/UDP/BTH order',
                   'cases': meta}, fh, indent=1)
        fh.write('\n')
    for m in meta:
        print('%3d %-26s %4dB  %-18s %s' % (m['index'], m['case'], m['length'],
                                            m['reference_category'], m['description']))
    cats = {}
    for m in meta:
        cats[m['reference_category']] = cats.get(m['reference_category'], 0) + 1
    print('gen malformed: wrote %d frames to %s (+ %s); categories: %s' %
          (len(frames), a.out, os.path.basename(side),
           ', '.join('%s %d' % kv for kv in sorted(cats.items()))))
    return 0


def add_command(gs):
    gm = gs.add_parser('malformed', help='one malformed frame per case', description=(
        'Write one malformed frame per case (truncations at and inside every header, bad IHL, '
        'bad IPv4/IPv6 lengths, bad versions, bad UDP lengths, short BTH, stacked VLANs, ...), '
        'written byte-exact, and FILE.cases.json naming the case of every frame.'))
    gm.add_argument('--out', required=True, help='output pcap')
    gm.add_argument('--smac', default='02:00:00:00:aa:01', help='source MAC (default %(default)s)')
    gm.add_argument('--dmac', default='02:00:00:00:00:01', help='destination MAC (default %(default)s)')
    gm.add_argument('--seed', type=int, default=1, help='random seed for payload bytes (default 1)')
    gm.add_argument('--no-empty', action='store_true', help='leave out the 0-byte frame (written last)')
    gm.set_defaults(func=cmd_gen_malformed)
