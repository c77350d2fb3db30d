#!/usr/bin/python3
"""roce_pcap: generate and check RoCEv2 pcaps, independently of roceswitch's C++ code.

Subcommands
  gen valid      well-formed RoCEv2 (IPv4/IPv6) and plain UDP packets
  gen malformed  one malformed frame per case, plus FILE.cases.json
  check          compare a switch's output pcap against its input pcap
  icrc           verify the RoCE ICRC of every packet of a pcap
  mutate         a tiny reference "switch" (TTL decrement, MAC rewrite, ECN CE,
                 corruption) used to self-test `check`

Decoding is done twice, independently: by a small byte-level parser in this file and by
scapy (scapy.contrib.roce; its BTH.compute_icrc is the reference ICRC for IPv4, scapy has
none for IPv6). `check --tshark` adds Wireshark's decoders as a third opinion.

Run with Debian's /usr/bin/python3 (it has scapy).
"""

import argparse
import ipaddress
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import zlib

ROCE_PORT = 4791
ETH_IPV4 = 0x0800
ETH_IPV6 = 0x86DD
ETH_VLAN = 0x8100
ETH_QINQ = 0x88A8
ETH_VLAN_9100 = 0x9100
VLAN_TPIDS = (ETH_VLAN, ETH_QINQ, ETH_VLAN_9100)

OP_SEND_ONLY = 0x04
OP_WRITE_ONLY = 0x0A

MIN_FRAME = 60  # without FCS

# --------------------------------------------------------------------------------------
# small helpers


def mac_bytes(s):
    parts = s.replace('-', ':').split(':')
    if len(parts) != 6:
        raise argparse.ArgumentTypeError('bad MAC address: %r' % s)
    try:
        return bytes(int(p, 16) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError('bad MAC address: %r' % s)


def mac_str(b):
    return ':'.join('%02x' % x for x in b)


def csum16(data):
    if len(data) % 2:
        data += b'\x00'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def linux_flow_label(lqpn, rqpn):
    """rdma_calc_flow_label() of the Linux kernel."""
    fl = (lqpn * rqpn) & 0xFFFFFFFFFFFFFFFF
    fl ^= fl >> 20
    fl ^= fl >> 40
    return fl & 0xFFFFF


def linux_udp_sport(fl):
    """rdma_flow_label_to_udp_sport() of the Linux kernel."""
    fl_low = fl & 0x03FFF
    fl_high = fl & 0xFC000
    fl_low ^= fl_high >> 14
    return fl_low | 0xC000


# --------------------------------------------------------------------------------------
# independent byte-level parser


class Frame:
    """Result of parse_frame(). `err` is None for a well-formed frame, else a category
    name (the first defect found in parse order)."""

    def __init__(self, data):
        self.data = bytes(data)
        self.err = None
        self.detail = ''
        self.dmac = self.smac = None
        self.vlans = []          # list of (tpid, tci)
        self.ethertype = None
        self.l3off = None
        self.ipver = None
        self.iphdr = b''         # IPv4 header incl. options / IPv6 fixed header
        self.ip_total = 0        # IP datagram length (IPv4 total length, IPv6 40+paylen)
        self.src = self.dst = None
        self.proto = None
        self.ttl = None          # TTL / hop limit
        self.tos = None          # IPv4 TOS / IPv6 traffic class
        self.ip_csum_ok = None
        self.ip_payload = b''
        self.fragment = False
        self.udp = None          # (sport, dport, length, checksum)
        self.udp_payload = b''
        self.roce = False
        self.bth = None          # dict
        self.icrc_wire = None    # 4 bytes as on the wire

    # convenient
    @property
    def is_ip(self):
        return self.ipver in (4, 6) and self.err in (None, 'bad_ipv4_checksum')

    def datagram(self):
        """The frame without Ethernet trailer padding."""
        return self.data[:self.l3off + self.ip_total]


def parse_frame(data, allow_stacked=False):
    f = Frame(data)
    b = f.data
    n = len(b)
    if n < 14:
        f.err, f.detail = 'malformed_eth', 'frame of %d bytes < 14' % n
        return f
    f.dmac, f.smac = b[0:6], b[6:12]
    et = struct.unpack_from('!H', b, 12)[0]
    off = 14
    while et in VLAN_TPIDS:
        if n < off + 4:
            f.err, f.detail = 'malformed_vlan', 'VLAN tag cut (%d of 4 bytes)' % (n - off)
            return f
        tci, inner = struct.unpack_from('!HH', b, off)
        f.vlans.append((et, tci))
        off += 4
        et = inner
    f.ethertype = et
    f.l3off = off
    if len(f.vlans) > 1 and not allow_stacked:
        f.err, f.detail = 'stacked_vlan', 'TPIDs %s' % ','.join('0x%04x' % t for t, _ in f.vlans)
        return f
    avail = n - off
    if et == ETH_IPV4:
        f.ipver = 4
        if avail < 20:
            f.err, f.detail = 'malformed_ipv4', 'IPv4 header cut (%d of 20 bytes)' % avail
            return f
        vihl = b[off]
        if vihl >> 4 != 4:
            f.err, f.detail = 'malformed_ipv4', 'IP version %d in an IPv4 frame' % (vihl >> 4)
            return f
        ihl = (vihl & 0xF) * 4
        if ihl < 20:
            f.err, f.detail = 'bad_ipv4_ihl', 'IHL %d < 5' % (ihl // 4)
            return f
        if ihl > avail:
            f.err, f.detail = 'bad_ipv4_ihl', 'IHL %d bytes > %d bytes left' % (ihl, avail)
            return f
        tot = struct.unpack_from('!H', b, off + 2)[0]
        if tot < ihl:
            f.err, f.detail = 'bad_ipv4_length', 'total length %d < IHL*4 %d' % (tot, ihl)
            return f
        if tot > avail:
            f.err, f.detail = 'bad_ipv4_length', 'total length %d > %d bytes left' % (tot, avail)
            return f
        f.iphdr = b[off:off + ihl]
        f.ip_total = tot
        f.tos = b[off + 1]
        f.ttl = b[off + 8]
        f.proto = b[off + 9]
        f.src = ipaddress.IPv4Address(b[off + 12:off + 16])
        f.dst = ipaddress.IPv4Address(b[off + 16:off + 20])
        fl = struct.unpack_from('!H', b, off + 6)[0]
        f.fragment = (fl & 0x3FFF) != 0
        f.ip_csum_ok = csum16(f.iphdr) == 0
        f.ip_payload = b[off + ihl:off + tot]
        if not f.ip_csum_ok:
            f.err, f.detail = 'bad_ipv4_checksum', 'header checksum 0x%04x wrong' % \
                struct.unpack_from('!H', b, off + 10)[0]
            # keep parsing: the rest is still meaningful
    elif et == ETH_IPV6:
        f.ipver = 6
        if avail < 40:
            f.err, f.detail = 'malformed_ipv6', 'IPv6 header cut (%d of 40 bytes)' % avail
            return f
        if b[off] >> 4 != 6:
            f.err, f.detail = 'malformed_ipv6', 'IP version %d in an IPv6 frame' % (b[off] >> 4)
            return f
        plen = struct.unpack_from('!H', b, off + 4)[0]
        if 40 + plen > avail:
            f.err, f.detail = 'bad_ipv6_length', 'payload length %d > %d bytes left' % (plen, avail - 40)
            return f
        f.iphdr = b[off:off + 40]
        f.ip_total = 40 + plen
        f.tos = ((b[off] & 0xF) << 4) | (b[off + 1] >> 4)
        f.proto = b[off + 6]
        f.ttl = b[off + 7]
        f.src = ipaddress.IPv6Address(b[off + 8:off + 24])
        f.dst = ipaddress.IPv6Address(b[off + 24:off + 40])
        f.ip_payload = b[off + 40:off + 40 + plen]
    else:
        f.err, f.detail = 'non_ip', 'EtherType 0x%04x' % et
        return f

    if f.proto != 17 or f.fragment:
        return f
    l4 = f.ip_payload
    if len(l4) < 8:
        f.err, f.detail = 'malformed_udp', 'UDP header cut (%d of 8 bytes)' % len(l4)
        return f
    sport, dport, ulen, ucs = struct.unpack_from('!HHHH', l4, 0)
    if ulen < 8:
        f.err, f.detail = 'malformed_udp', 'UDP length %d < 8' % ulen
        return f
    if ulen > len(l4):
        f.err, f.detail = 'malformed_udp', 'UDP length %d > %d bytes left' % (ulen, len(l4))
        return f
    f.udp = (sport, dport, ulen, ucs)
    f.udp_payload = l4[8:ulen]
    if dport != ROCE_PORT:
        return f
    p = f.udp_payload
    if len(p) < 12:
        f.err, f.detail = 'malformed_bth', 'BTH cut (%d of 12 bytes)' % len(p)
        return f
    if len(p) < 16:
        f.err, f.detail = 'malformed_bth', 'no room for the ICRC (%d bytes after UDP)' % len(p)
        return f
    f.roce = True
    f.bth = {
        'opcode': p[0],
        'se': p[1] >> 7, 'm': (p[1] >> 6) & 1, 'padcnt': (p[1] >> 4) & 3, 'tver': p[1] & 0xF,
        'pkey': struct.unpack_from('!H', p, 2)[0],
        'fecn': p[4] >> 7, 'becn': (p[4] >> 6) & 1,
        'dqpn': struct.unpack_from('!I', p, 4)[0] & 0xFFFFFF,
        'ackreq': p[8] >> 7,
        'psn': struct.unpack_from('!I', p, 8)[0] & 0xFFFFFF,
    }
    f.icrc_wire = p[-4:]
    return f


# --------------------------------------------------------------------------------------
# ICRC: own implementation (from the spec) and scapy's


def icrc_own(f):
    """ICRC as 4 wire bytes (little-endian CRC-32) for a parsed RoCE frame."""
    h = bytearray(f.iphdr)
    if f.ipver == 4:
        h[1] = 0xFF             # TOS
        h[8] = 0xFF             # TTL
        h[10:12] = b'\xff\xff'  # header checksum
    else:
        h[0] |= 0x0F            # traffic class (low nibble of byte 0) ...
        h[1:4] = b'\xff\xff\xff'  # ... rest of traffic class + flow label
        h[7] = 0xFF             # hop limit
    u = bytearray(f.ip_payload[:8])
    u[6:8] = b'\xff\xff'        # UDP checksum
    bth = bytearray(f.udp_payload[:-4])
    bth[4] = 0xFF               # FECN, BECN, reserved
    crc = zlib.crc32(b'\xff' * 8 + bytes(h) + bytes(u) + bytes(bth)) & 0xFFFFFFFF
    return struct.pack('<I', crc)


_scapy = None


def scapy_mods():
    global _scapy
    if _scapy is None:
        import logging
        logging.getLogger('scapy.runtime').setLevel(logging.ERROR)
        from scapy.layers.l2 import Ether
        from scapy.layers.inet import IP, UDP
        from scapy.contrib.roce import BTH
        from scapy.utils import RawPcapReader
        _scapy = {'Ether': Ether, 'IP': IP, 'UDP': UDP, 'BTH': BTH, 'RawPcapReader': RawPcapReader}
    return _scapy


def scapy_view(f):
    """Dissect the datagram (trailer padding removed) with scapy; returns the packet."""
    return scapy_mods()['Ether'](f.datagram())


def icrc_scapy(f, pkt=None):
    """ICRC computed by scapy.contrib.roce (IPv4 only); None when scapy cannot."""
    m = scapy_mods()
    if f.ipver != 4:
        return None
    if pkt is None:
        pkt = scapy_view(f)
    if m['BTH'] not in pkt:
        return None
    return bytes(pkt[m['BTH']].compute_icrc(None))


def icrc_verdict(f, use_scapy=True):
    """Returns (ok, message). Uses the own implementation and, for IPv4, scapy's; a
    disagreement between the two is reported as a failure."""
    own = icrc_own(f)
    sc = icrc_scapy(f) if use_scapy else None
    if sc is not None and sc != own:
        return False, 'ICRC implementations disagree (own %s, scapy %s)' % (own.hex(), sc.hex())
    if own != f.icrc_wire:
        return False, 'ICRC %s on the wire, expected %s' % (f.icrc_wire.hex(), own.hex())
    return True, 'ICRC %s' % own.hex() + (' (own+scapy)' if sc is not None else ' (own)')


# --------------------------------------------------------------------------------------
# pcap I/O (writer is our own so that truncated and empty frames are written exactly)


def write_pcap(path, frames, t0=1700000000, step_us=1):
    with open(path, 'wb') as fh:
        fh.write(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        t = 0
        for fr in frames:
            sec, usec = t0 + t // 1000000, t % 1000000
            fh.write(struct.pack('<IIII', sec, usec, len(fr), len(fr)))
            fh.write(fr)
            t += step_us


def read_pcap(path):
    """List of raw frame bytes (pcap or pcapng, Ethernet link type)."""
    rdr = scapy_mods()['RawPcapReader'](path)
    frames = []
    try:
        lt = getattr(rdr, 'linktype', 1)
        if lt != 1:
            raise SystemExit('%s: link type %s is not Ethernet' % (path, lt))
        for data, _meta in rdr:
            frames.append(bytes(data))
    finally:
        rdr.close()
    return frames


# --------------------------------------------------------------------------------------
# builders


def eth_hdr(dmac, smac, ethertype, vlans=()):
    """vlans: sequence of (tpid, tci), outermost first."""
    h = dmac + smac
    for tpid, tci in vlans:
        h += struct.pack('!HH', tpid, tci)
    return h + struct.pack('!H', ethertype)


def ipv4_hdr(src, dst, payload_len, proto=17, tos=0, ttl=64, ident=0, df=True):
    h = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, tos, 20 + payload_len, ident & 0xFFFF,
                              0x4000 if df else 0, ttl, proto, 0,
                              ipaddress.IPv4Address(src).packed, ipaddress.IPv4Address(dst).packed))
    struct.pack_into('!H', h, 10, csum16(bytes(h)))
    return bytes(h)


def fix_ipv4_csum(frame, l3off, ihl_bytes=None):
    b = bytearray(frame)
    ihl = ihl_bytes if ihl_bytes is not None else (b[l3off] & 0xF) * 4
    ihl = max(20, min(ihl, len(b) - l3off))
    b[l3off + 10:l3off + 12] = b'\x00\x00'
    struct.pack_into('!H', b, l3off + 10, csum16(bytes(b[l3off:l3off + ihl])))
    return bytes(b)


def ipv6_hdr(src, dst, payload_len, nh=17, tc=0, flow=0, hlim=64):
    w0 = (6 << 28) | ((tc & 0xFF) << 20) | (flow & 0xFFFFF)
    return struct.pack('!IHBB16s16s', w0, payload_len, nh, hlim,
                       ipaddress.IPv6Address(src).packed, ipaddress.IPv6Address(dst).packed)


def udp_csum(ipver, src, dst, udp):
    if ipver == 4:
        ph = ipaddress.IPv4Address(src).packed + ipaddress.IPv4Address(dst).packed + \
            struct.pack('!BBH', 0, 17, len(udp))
    else:
        ph = ipaddress.IPv6Address(src).packed + ipaddress.IPv6Address(dst).packed + \
            struct.pack('!IxxxB', len(udp), 17)
    c = csum16(ph + udp)
    return c if c else 0xFFFF


def bth_bytes(opcode, dqpn, psn, padcnt=0, pkey=0xFFFF, ackreq=0, se=0):
    return struct.pack('!BBHII', opcode, (se << 7) | ((padcnt & 3) << 4), pkey,
                       dqpn & 0xFFFFFF, ((ackreq & 1) << 31) | (psn & 0xFFFFFF))


def build_udp_frame(dmac, smac, ipver, src, dst, sport, dport, payload, tos, ttl, ident=0,
                    flow=0, vlans=(), udp_checksum=True, pad=True):
    ulen = 8 + len(payload)
    udp = bytearray(struct.pack('!HHHH', sport, dport, ulen, 0) + payload)
    if udp_checksum:
        struct.pack_into('!H', udp, 6, udp_csum(ipver, src, dst, bytes(udp)))
    if ipver == 4:
        l3 = ipv4_hdr(src, dst, ulen, tos=tos, ttl=ttl, ident=ident) + bytes(udp)
        et = ETH_IPV4
    else:
        l3 = ipv6_hdr(src, dst, ulen, tc=tos, flow=flow, hlim=ttl) + bytes(udp)
        et = ETH_IPV6
    fr = eth_hdr(dmac, smac, et, vlans) + l3
    if pad and len(fr) < MIN_FRAME:
        fr += b'\x00' * (MIN_FRAME - len(fr))
    return fr


def build_roce_frame(dmac, smac, ipver, src, dst, sport, l4_without_icrc, tos, ttl, ident=0,
                     flow=0, vlans=(), pad=True, check_scapy=True):
    """l4_without_icrc: BTH + extension headers + payload + pad. UDP checksum: 0 for IPv4
    (as RoCE NICs send), computed for IPv6. ICRC is computed and cross-checked."""
    body = l4_without_icrc + b'\x00\x00\x00\x00'
    fr = build_udp_frame(dmac, smac, ipver, src, dst, sport, ROCE_PORT, body, tos, ttl, ident,
                         flow, vlans, udp_checksum=(ipver == 6), pad=False)
    f = parse_frame(fr, allow_stacked=True)
    assert f.roce, f.detail
    ic = icrc_own(f)
    if check_scapy and ipver == 4:
        sc = icrc_scapy(f)
        if sc != ic:
            raise SystemExit('internal error: own ICRC %s != scapy ICRC %s' % (ic.hex(), sc))
    if ipver == 6:
        # the UDP checksum covers the ICRC: recompute it with the final ICRC in place
        fr = fr[:-4] + ic
        l4off = f.l3off + 40
        udp = bytearray(fr[l4off:])
        udp[6:8] = b'\x00\x00'
        struct.pack_into('!H', udp, 6, udp_csum(6, src, dst, bytes(udp)))
        fr = fr[:l4off] + bytes(udp)
    else:
        fr = fr[:-4] + ic
    if pad and len(fr) < MIN_FRAME:
        fr += b'\x00' * (MIN_FRAME - len(fr))
    return fr


# --------------------------------------------------------------------------------------
# gen valid


def det_bytes(rng, n):
    return bytes(rng.getrandbits(8) for _ in range(n))


def cmd_gen_valid(a):
    rng = random.Random(a.seed)
    dmac, smac = mac_bytes(a.dmac), mac_bytes(a.smac)
    dsts = a.dst or ['10.0.2.2', '10.0.3.2', '10.0.4.2']
    for d in dsts + [a.src]:
        ipaddress.IPv4Address(d)
    tos = ((a.dscp & 0x3F) << 2) | (a.ecn & 3)
    vlans = [] if a.vlan is None else [(ETH_VLAN, ((a.vlan & 7) << 13) | (a.vid & 0xFFF))]
    psn0 = {}

    def flow_state(key, dqpn):
        if key not in psn0:
            psn0[key] = rng.randrange(0, 1 << 24)
        p = psn0[key]
        psn0[key] = (p + 1) & 0xFFFFFF
        return p

    forced_sizes = [0, 256, 1, 2, 3]

    def roce_l4(i, dqpn, psn, size):
        padcnt = (-size) % 4
        payload = det_bytes(rng, size)
        op = OP_SEND_ONLY if rng.random() < 0.5 else OP_WRITE_ONLY
        ack = 1 if rng.random() < 0.25 else 0
        l4 = bth_bytes(op, dqpn, psn, padcnt=padcnt, ackreq=ack)
        if op == OP_WRITE_ONLY:
            l4 += struct.pack('!QII', 0x7F0000000000 + (psn << 12), 0x1000 + (dqpn & 0xFFF), size)
        return l4 + payload + b'\x00' * padcnt, op

    v4, v6, udp = [], [], []
    ops = {OP_SEND_ONLY: 0, OP_WRITE_ONLY: 0}
    for i in range(a.count):
        di = i % len(dsts)
        q = (i // len(dsts)) % a.qps
        fidx = di * a.qps + q
        dqpn = 0x000100 + fidx * 0x11
        lqpn = 0x000200 + fidx * 0x13
        fl = linux_flow_label(lqpn, dqpn)
        sport = linux_udp_sport(fl)
        psn = flow_state(('4', fidx), dqpn)
        size = forced_sizes[i] if i < len(forced_sizes) else rng.randint(0, 256)
        l4, op = roce_l4(i, dqpn, psn, size)
        ops[op] += 1
        v4.append(build_roce_frame(dmac, smac, 4, a.src, dsts[di], sport, l4, tos, a.ttl,
                                   ident=(a.seed * 7919 + i), vlans=vlans))
    for i in range(a.ipv6_count):
        q = i % a.qps
        dqpn = 0x000600 + q * 0x11
        lqpn = 0x000700 + q * 0x13
        fl = linux_flow_label(lqpn, dqpn)
        sport = linux_udp_sport(fl)
        psn = flow_state(('6', q), dqpn)
        size = rng.randint(0, 256) if i else 0
        l4, op = roce_l4(i, dqpn, psn, size)
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


# --------------------------------------------------------------------------------------
# gen malformed


def cmd_gen_malformed(a):
    dmac, smac = mac_bytes(a.dmac), mac_bytes(a.smac)
    rng = random.Random(a.seed)
    payload = det_bytes(rng, 32)
    l4 = bth_bytes(OP_SEND_ONLY, 0x000123, 0x000456) + payload
    tos = (26 << 2) | 2
    src, dst = '10.0.1.2', '10.0.2.2'
    sport = 0xC123
    A = build_roce_frame(dmac, smac, 4, src, dst, sport, l4, tos, 64, ident=1)   # 90 bytes
    V = build_roce_frame(dmac, smac, 4, src, dst, sport, l4, tos, 64, ident=2,
                         vlans=[(ETH_VLAN, (3 << 13) | 0)])                        # 94 bytes
    S6 = build_roce_frame(dmac, smac, 6, '2001:db8:1::2', '2001:db8:2::2', sport, l4, tos, 64,
                          flow=0x12345)                                            # 110 bytes
    L3 = 14
    cases = []

    def add(name, fr, desc):
        cases.append((name, bytes(fr), desc))

    def pad60(fr):
        return fr + b'\x00' * max(0, MIN_FRAME - len(fr))

    def set_at(fr, off, val, fmt='!B'):
        b = bytearray(fr)
        struct.pack_into(fmt, b, off, val)
        return bytes(b)

    # Ethernet header cut (0 bytes is written last, see below)
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
        ip = ipv4_hdr(src, dst, k, tos=tos, ident=3)
        add('udp_cut_%d' % k, pad60(eth_hdr(dmac, smac, ETH_IPV4) + ip + A[L3 + 20:L3 + 20 + k]),
            'IPv4 datagram holds %d of 8 UDP header bytes (frame padded to 60)' % k)
    # UDP length
    for ul in (0, 7):
        fr = set_at(A, L3 + 24, ul, '!H')
        add('udp_len_%d' % ul, fr, 'UDP length %d < 8' % ul)
    ulen_real = len(A) - L3 - 20
    add('udp_len_gt_remaining', set_at(A, L3 + 24, ulen_real + 10, '!H'),
        'UDP length %d > %d bytes left in the datagram' % (ulen_real + 10, ulen_real))
    # BTH cut / no room for ICRC, with consistent IP and UDP lengths
    for k in (0, 6, 11, 12, 15):
        ul = 8 + k
        udp = struct.pack('!HHHH', sport, ROCE_PORT, ul, 0) + A[L3 + 28:L3 + 28 + k]
        ip = ipv4_hdr(src, dst, ul, tos=tos, ident=4)
        name = ('bth_cut_%d' % k) if k < 12 else ('bth_no_icrc_%d' % k)
        add(name, pad60(eth_hdr(dmac, smac, ETH_IPV4) + ip + udp),
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
    add('ipv6_bth_cut_6', pad60(eth_hdr(dmac, smac, ETH_IPV6) +
                                ipv6_hdr('2001:db8:1::2', '2001:db8:2::2', len(udp6)) + udp6),
        'IPv6/UDP dport 4791 with 6 bytes of BTH, lengths consistent')
    # stacked VLANs (otherwise valid RoCE)
    add('vlan_stacked_8100_8100', build_roce_frame(dmac, smac, 4, src, dst, sport, l4, tos, 64, ident=5,
                                                   vlans=[(ETH_VLAN, 100), (ETH_VLAN, 200)]),
        'two 802.1Q tags (0x8100, 0x8100), valid RoCE inside')
    add('vlan_stacked_88a8_8100', build_roce_frame(dmac, smac, 4, src, dst, sport, l4, tos, 64, ident=6,
                                                   vlans=[(ETH_QINQ, 100), (ETH_VLAN, 200)]),
        '802.1ad 0x88a8 outer + 0x8100 inner tag, valid RoCE inside')
    # empty frame last, so that a reader that skips it does not shift the other indices
    if not a.no_empty:
        add('eth_cut_0', b'', 'empty frame (0 bytes)')

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


# --------------------------------------------------------------------------------------
# icrc


def cmd_icrc(a):
    frames = read_pcap(a.file)
    nv = ni = nn = 0
    for i, fr in enumerate(frames):
        f = parse_frame(fr, allow_stacked=True)
        if f.roce and f.err in (None, 'bad_ipv4_checksum'):
            ok, msg = icrc_verdict(f, use_scapy=not a.no_scapy)
            b = f.bth
            desc = 'IPv%d opcode 0x%02x qp 0x%06x psn %d' % (f.ipver, b['opcode'], b['dqpn'], b['psn'])
            if ok:
                nv += 1
                if not a.quiet:
                    print('frame %d: valid   %s, %s' % (i + 1, desc, msg))
            else:
                ni += 1
                print('frame %d: INVALID %s, %s' % (i + 1, desc, msg))
        elif f.err == 'malformed_bth':
            ni += 1
            print('frame %d: INVALID %s' % (i + 1, f.detail))
        else:
            nn += 1
            if not a.quiet:
                print('frame %d: not roce (%s)' % (i + 1, f.detail or (
                    'UDP dport %d' % f.udp[1] if f.udp else 'IP proto %s' % f.proto)))
    print('icrc: %d valid, %d invalid, %d not roce' % (nv, ni, nn))
    return 1 if ni else 0


# --------------------------------------------------------------------------------------
# check


def parse_dmac_map(items):
    out = []
    for item in items or []:
        for ent in item.split(','):
            ent = ent.strip()
            if not ent:
                continue
            if '=' not in ent:
                raise SystemExit('bad --dmac-map entry %r (want PREFIX=MAC)' % ent)
            p, m = ent.split('=', 1)
            out.append((ipaddress.ip_network(p.strip(), strict=False), mac_bytes(m.strip())))
    out.sort(key=lambda t: -t[0].prefixlen)
    return out


def lookup_dmac(dmap, ip):
    for net, mac in dmap:
        if net.version == ip.version and ip in net:
            return mac
    return None


def match_key(f):
    if f.roce:
        return ('roce', f.src, f.dst, f.udp[0], f.bth['psn'], f.bth['dqpn'])
    return ('ip', f.src, f.dst, f.proto, f.ip_payload)


def run_tshark(path):
    tshark = shutil.which('tshark') or '/usr/bin/tshark'
    fields = ['frame.number', 'ip.checksum.status', 'ip.ttl', 'ipv6.hlim',
              'infiniband.bth.opcode', 'infiniband.bth.destqp', 'infiniband.bth.psn', '_ws.malformed']
    # rpcordma: Wireshark's RPC-over-RDMA heuristic claims SEND payloads and throws
    # "Malformed" on short ones; it is not RoCE's business.
    cmd = [tshark, '-n', '-r', path, '-d', 'udp.port==%d,infiniband' % ROCE_PORT,
           '--disable-protocol', 'rpcordma',
           '-o', 'ip.check_checksum:TRUE', '-T', 'fields', '-E', 'separator=/t',
           '-E', 'occurrence=f']
    for fl in fields:
        cmd += ['-e', fl]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit('tshark failed (rc %d): %s' % (r.returncode, r.stderr.strip()[-500:]))
    res = {}
    for line in r.stdout.splitlines():
        cols = line.split('\t')
        cols += [''] * (len(fields) - len(cols))
        res[int(cols[0])] = dict(zip(fields[1:], cols[1:]))
    return res


def cmd_check(a):
    inp = read_pcap(a.inp)
    out = read_pcap(a.out)
    smac = mac_bytes(a.smac) if a.smac else None
    dmap = parse_dmac_map(a.dmac_map)
    use_scapy = not a.no_scapy
    BTH = scapy_mods()['BTH'] if (use_scapy or a.tshark) else None

    index = {}
    in_skipped = 0
    for i, fr in enumerate(inp):
        f = parse_frame(fr)
        if f.err is not None or not f.is_ip:
            in_skipped += 1
            continue
        index.setdefault(match_key(f), []).append([i, f, False])

    ts = run_tshark(a.out) if a.tshark else None
    ok = bad = ignored = ce_marked = roce_n = tshark_checked = 0
    fails = []
    for i, fr in enumerate(out):
        errs = []
        f = parse_frame(fr)
        if f.ipver not in (4, 6) and a.ignore_non_ip and f.err in (None, 'non_ip', 'stacked_vlan'):
            ignored += 1
            continue
        if f.err is not None:
            errs.append('%s: %s' % (f.err, f.detail))
        if f.ipver in (4, 6) and f.err in (None, 'bad_ipv4_checksum'):
            # --- match the original
            cand = index.get(match_key(f), [])
            orig = next((c for c in cand if not c[2]), None)
            if orig is None:
                errs.append('duplicate of input frame %d' % (cand[0][0] + 1) if cand else
                            'no matching input packet')
            else:
                orig[2] = True
                o = orig[1]
                if f.ttl != o.ttl - a.ttl_dec:
                    errs.append('%s %d, expected %d (input frame %d)' %
                                ('TTL' if f.ipver == 4 else 'hop limit', f.ttl, o.ttl - a.ttl_dec,
                                 orig[0] + 1))
                if not a.ignore_dscp and (f.tos >> 2) != (o.tos >> 2):
                    errs.append('DSCP %d, input had %d' % (f.tos >> 2, o.tos >> 2))
                fe, oe = f.tos & 3, o.tos & 3
                if fe != oe:
                    if oe in (1, 2) and fe == 3:
                        ce_marked += 1
                    else:
                        errs.append('ECN %d, input had %d' % (fe, oe))
                # other IP header fields: identical apart from TOS/TTL/checksum
                fh, oh = bytearray(f.iphdr), bytearray(o.iphdr)
                if f.ipver == 4:
                    for h in (fh, oh):
                        h[1] = h[8] = 0
                        h[10:12] = b'\0\0'
                else:
                    for h in (fh, oh):
                        h[0] &= 0xF0
                        h[1] &= 0x0F
                        h[7] = 0
                    # keep DSCP/ECN differences out of this comparison (checked above)
                if fh != oh:
                    errs.append('IP header differs beyond TOS/TTL/checksum: %s vs input %s' %
                                (bytes(fh).hex(), bytes(oh).hex()))
                if f.ip_payload[:8] != o.ip_payload[:8] and f.udp:
                    errs.append('UDP header %s, input %s' % (f.ip_payload[:8].hex(), o.ip_payload[:8].hex()))
                if f.roce:
                    if f.udp_payload[:12] != o.udp_payload[:12]:
                        errs.append('BTH %s, input %s' % (f.udp_payload[:12].hex(), o.udp_payload[:12].hex()))
                    if f.udp_payload[12:] != o.udp_payload[12:]:
                        errs.append('RoCE payload/ICRC differs from input (%d vs %d bytes)' %
                                    (len(f.udp_payload) - 12, len(o.udp_payload) - 12))
                elif f.ip_payload != o.ip_payload:
                    errs.append('IP payload differs from input')
            # --- IPv4 checksum recomputed (parse_frame records bad_ipv4_checksum already)
            # --- MACs
            if smac is not None and f.smac != smac:
                errs.append('src MAC %s, expected %s' % (mac_str(f.smac), mac_str(smac)))
            if dmap:
                want = lookup_dmac(dmap, f.dst)
                if want is None:
                    errs.append('dst IP %s not covered by --dmac-map' % f.dst)
                elif f.dmac != want:
                    errs.append('dst MAC %s, expected %s for %s' % (mac_str(f.dmac), mac_str(want), f.dst))
            if a.min_frame and len(fr) < a.min_frame:
                errs.append('frame of %d bytes < %d' % (len(fr), a.min_frame))
            # --- ICRC
            pkt = None
            if f.roce:
                roce_n += 1
                okc, msg = icrc_verdict(f, use_scapy=use_scapy)
                if not okc:
                    errs.append(msg)
            # --- tshark vs scapy
            if ts is not None:
                t = ts.get(i + 1)
                if t is None:
                    errs.append('tshark did not report this frame')
                else:
                    tshark_checked += 1
                    if t['_ws.malformed']:
                        errs.append('tshark: malformed packet')
                    if f.ipver == 4 and t['ip.checksum.status'] != '1':
                        errs.append('tshark: IPv4 checksum status %r (1 = good)' % t['ip.checksum.status'])
                    tt = t['ip.ttl'] if f.ipver == 4 else t['ipv6.hlim']
                    if tt != str(f.ttl):
                        errs.append('tshark: TTL/hop limit %r, own parser %d' % (tt, f.ttl))
                    if f.roce:
                        pkt = scapy_view(f)
                        if BTH not in pkt:
                            errs.append('scapy does not see a BTH')
                        else:
                            sb = pkt[BTH]
                            try:
                                got = (int(t['infiniband.bth.opcode']), int(t['infiniband.bth.destqp'], 0),
                                       int(t['infiniband.bth.psn']))
                            except ValueError:
                                got = None
                            want = (sb.opcode, sb.dqpn, sb.psn)
                            if got is None:
                                errs.append('tshark does not decode it as InfiniBand: %r' % t)
                            elif got != want:
                                errs.append('tshark opcode/qp/psn %s, scapy %s' % (got, want))
        if errs:
            bad += 1
            fails.append('frame %d: %s' % (i + 1, '; '.join(errs)))
        else:
            ok += 1

    missing = sum(1 for lst in index.values() for c in lst if not c[2])
    n_seen = ok + bad
    if a.expect_count is not None and n_seen != a.expect_count:
        if n_seen < a.expect_count:
            fails.append('expected %d packets, got %d: %d missing counted as bad' %
                         (a.expect_count, n_seen, a.expect_count - n_seen))
            bad += a.expect_count - n_seen
        else:
            fails.append('expected %d packets, got %d: %d extra' % (a.expect_count, n_seen,
                                                                  n_seen - a.expect_count))
    for line in fails[:20]:
        print(line)
    if len(fails) > 20:
        print('... %d more failure lines' % (len(fails) - 20))
    print('info: %d out frames (%d RoCE), %d in frames (%d not indexed), %d input packets not seen '
          'in out, %d ECN CE-marked, %d non-IP ignored%s' %
          (len(out), roce_n, len(inp), in_skipped, missing, ce_marked, ignored,
           (', tshark checked %d' % tshark_checked) if a.tshark else ''))
    print('roce_pcap check: %d packets ok, %d bad' % (ok, bad))
    return 1 if (bad or (a.expect_count is not None and n_seen != a.expect_count)) else 0


# --------------------------------------------------------------------------------------
# mutate: a reference software switch for self-tests


def cmd_mutate(a):
    frames = read_pcap(a.inp)
    smac = mac_bytes(a.smac) if a.smac else None
    dmap = parse_dmac_map(a.dmac_map)
    corrupt = set(a.flip_payload or [])
    out = []
    changed = 0
    for i, fr in enumerate(frames):
        f = parse_frame(fr)
        b = bytearray(fr)
        if f.err is None and f.ipver in (4, 6):
            o = f.l3off
            if f.ipver == 4:
                b[o + 8] = (b[o + 8] - a.ttl_dec) & 0xFF
                if a.ce and (b[o + 1] & 3) in (1, 2):
                    b[o + 1] |= 3
                if a.dscp is not None:
                    b[o + 1] = (a.dscp << 2) | (b[o + 1] & 3)
                if not a.keep_checksum:
                    b = bytearray(fix_ipv4_csum(bytes(b), o))
            else:
                b[o + 7] = (b[o + 7] - a.ttl_dec) & 0xFF
                if a.ce and ((b[o + 1] >> 4) & 3) in (1, 2):
                    b[o + 1] |= 0x30
            if smac is not None:
                b[6:12] = smac
            if dmap:
                m = lookup_dmac(dmap, f.dst)
                if m is not None:
                    b[0:6] = m
            if (i + 1) in corrupt:
                # flip one byte of the RoCE payload (or last byte of the IP payload)
                pos = o + f.ip_total - 5 if f.roce else o + f.ip_total - 1
                b[pos] ^= 0x01
            changed += 1
        out.append(bytes(b))
    write_pcap(a.out, out)
    print('mutate: wrote %d frames to %s (%d IP frames rewritten, ttl-dec %d%s%s)' %
          (len(out), a.out, changed, a.ttl_dec, ', CE marked' if a.ce else '',
           ', flipped payload of frames %s' % sorted(corrupt) if corrupt else ''))
    return 0


# --------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(prog='roce_pcap.py', description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)

    g = sub.add_parser('gen', help='generate a pcap', description='Generate a pcap.')
    gs = g.add_subparsers(dest='kind', required=True)

    gv = gs.add_parser('valid', help='well-formed RoCEv2 / UDP packets', description=(
        'Write well-formed RoCEv2 packets: Ether/IPv4/UDP(dport 4791)/BTH[/RETH]/payload/pad/ICRC, '
        'RC SEND_ONLY or RDMA WRITE_ONLY, payload 0..256 bytes, UDP source port derived from the '
        'QP pair as Linux does, PSN incrementing per QP, IPv4 UDP checksum 0. Optional IPv6 RoCEv2 '
        'and plain UDP packets are interleaved evenly. Frames shorter than 60 bytes get Ethernet '
        'padding after the IP datagram (outside the ICRC).'))
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

    c = sub.add_parser('check', help="check a switch's output against its input", description=(
        'For every packet of OUT: IPv4/IPv6 and well-formed; IPv4 header checksum valid; matched to '
        'an input packet by (src, dst, UDP sport, PSN, dest QP) for RoCE, by (src, dst, proto, '
        'IP payload) otherwise; TTL/hop limit = input - ttl-dec; DSCP unchanged; ECN unchanged or '
        'ECT->CE; IP header otherwise unchanged; UDP header, BTH, payload and ICRC byte-identical; '
        'ICRC valid (own implementation, and scapy.contrib.roce for IPv4); MACs as given. '
        'Exit 0 if all pass, 1 otherwise.'))
    c.add_argument('--in', dest='inp', required=True, help='pcap sent into the switch')
    c.add_argument('--out', required=True, help='pcap captured from the switch')
    c.add_argument('--smac', help='expected source MAC of every output packet')
    c.add_argument('--dmac-map', action='append', metavar='PFX=MAC[,PFX=MAC...]',
                   help='expected destination MAC by destination prefix (longest match), repeatable')
    c.add_argument('--ttl-dec', type=int, default=1, help='expected TTL decrement (default 1)')
    c.add_argument('--expect-count', type=int, help='expected number of output packets; '
                   'missing ones count as bad')
    c.add_argument('--tshark', action='store_true', help='also decode OUT with tshark and compare')
    c.add_argument('--ignore-non-ip', action='store_true', help='skip non-IP frames (e.g. PFC) in OUT '
                   'instead of counting them bad')
    c.add_argument('--ignore-dscp', action='store_true', help='allow DSCP remarking')
    c.add_argument('--min-frame', type=int, default=0, help='flag output frames shorter than this '
                   '(e.g. 60); default 0 = off')
    c.add_argument('--no-scapy', action='store_true', help='skip the scapy ICRC cross-check (faster)')
    c.set_defaults(func=cmd_check)

    ic = sub.add_parser('icrc', help='verify the ICRC of every RoCE packet', description=(
        'Print, per frame, whether its RoCEv2 ICRC is valid (own implementation; IPv4 also '
        'cross-checked with scapy.contrib.roce). A UDP dport 4791 frame too short for BTH+ICRC '
        'counts as invalid. Exit 1 if any is invalid.'))
    ic.add_argument('file', help='pcap or pcapng')
    ic.add_argument('--quiet', '-q', action='store_true', help='print only invalid frames and the summary')
    ic.add_argument('--no-scapy', action='store_true', help='skip the scapy cross-check')
    ic.set_defaults(func=cmd_icrc)

    mu = sub.add_parser('mutate', help='reference rewrite, to self-test check', description=(
        'Rewrite well-formed IP frames as a router would (TTL decrement with checksum fix, MACs), '
        'optionally mark CE or corrupt a payload byte; used to self-test `check`.'))
    mu.add_argument('--in', dest='inp', required=True)
    mu.add_argument('--out', required=True)
    mu.add_argument('--ttl-dec', type=int, default=1, help='default 1')
    mu.add_argument('--smac')
    mu.add_argument('--dmac-map', action='append', metavar='PFX=MAC[,PFX=MAC...]')
    mu.add_argument('--ce', action='store_true', help='set ECN CE on ECT packets')
    mu.add_argument('--dscp', type=int, help='remark DSCP (IPv4)')
    mu.add_argument('--flip-payload', type=int, action='append', metavar='FRAME',
                    help='flip the low bit of the last byte before the ICRC (RoCE) or of the last IP payload byte, in this 1-based frame (repeatable)')
    mu.add_argument('--keep-checksum', action='store_true', help='do not fix the IPv4 checksum')
    mu.set_defaults(func=cmd_mutate)

    a = ap.parse_args(argv)
    return a.func(a)


if __name__ == '__main__':
    sys.exit(main())
