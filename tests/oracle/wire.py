"""The oracle's own reading of the wire: constants, MAC helpers, the Internet checksum and a
byte-level parser for Ethernet / 802.1Q / IPv4 / IPv6 / UDP / BTH.

Written from the RFCs and the InfiniBand spec, sharing no code with roceswitch or with scapy:
scapy (and tshark) are the second and third opinions that `check` compares against it.
"""

import argparse
import ipaddress
import struct

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
    """RFC 1071 Internet checksum (0 when computed over a header holding a valid one)."""
    if len(data) % 2:
        data += b'\x00'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def fix_ipv4_csum(frame, l3off, ihl_bytes=None):
    """The frame with its IPv4 header checksum recomputed (own code, for mutate and the
    malformed cases that must differ from a valid frame in one defect only)."""
    b = bytearray(frame)
    ihl = ihl_bytes if ihl_bytes is not None else (b[l3off] & 0xF) * 4
    ihl = max(20, min(ihl, len(b) - l3off))
    b[l3off + 10:l3off + 12] = b'\x00\x00'
    struct.pack_into('!H', b, l3off + 10, csum16(bytes(b[l3off:l3off + ihl])))
    return bytes(b)


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

    @property
    def is_ip(self):
        return self.ipver in (4, 6) and self.err in (None, 'bad_ipv4_checksum')

    def datagram(self):
        """The frame without Ethernet trailer padding."""
        return self.data[:self.l3off + self.ip_total]


def _parse_ipv4(f, b, off, avail):
    vihl = b[off]
    if vihl >> 4 != 4:
        return 'malformed_ipv4', 'IP version %d in an IPv4 frame' % (vihl >> 4)
    ihl = (vihl & 0xF) * 4
    if ihl < 20:
        return 'bad_ipv4_ihl', 'IHL %d < 5' % (ihl // 4)
    if ihl > avail:
        return 'bad_ipv4_ihl', 'IHL %d bytes > %d bytes left' % (ihl, avail)
    tot = struct.unpack_from('!H', b, off + 2)[0]
    if tot < ihl:
        return 'bad_ipv4_length', 'total length %d < IHL*4 %d' % (tot, ihl)
    if tot > avail:
        return 'bad_ipv4_length', 'total length %d > %d bytes left' % (tot, avail)
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
        # reported, but parsing goes on: the rest is still meaningful
        return 'bad_ipv4_checksum', 'header checksum 0x%04x wrong' % \
            struct.unpack_from('!H', b, off + 10)[0]
    return None, ''


def _parse_ipv6(f, b, off, avail):
    if b[off] >> 4 != 6:
        return 'malformed_ipv6', 'IP version %d in an IPv6 frame' % (b[off] >> 4)
    plen = struct.unpack_from('!H', b, off + 4)[0]
    if 40 + plen > avail:
        return 'bad_ipv6_length', 'payload length %d > %d bytes left' % (plen, avail - 40)
    f.iphdr = b[off:off + 40]
    f.ip_total = 40 + plen
    f.tos = ((b[off] & 0xF) << 4) | (b[off + 1] >> 4)
    f.proto = b[off + 6]
    f.ttl = b[off + 7]
    f.src = ipaddress.IPv6Address(b[off + 8:off + 24])
    f.dst = ipaddress.IPv6Address(b[off + 24:off + 40])
    f.ip_payload = b[off + 40:off + 40 + plen]
    return None, ''


def _parse_udp_bth(f):
    l4 = f.ip_payload
    if len(l4) < 8:
        return 'malformed_udp', 'UDP header cut (%d of 8 bytes)' % len(l4)
    sport, dport, ulen, ucs = struct.unpack_from('!HHHH', l4, 0)
    if ulen < 8:
        return 'malformed_udp', 'UDP length %d < 8' % ulen
    if ulen > len(l4):
        return 'malformed_udp', 'UDP length %d > %d bytes left' % (ulen, len(l4))
    f.udp = (sport, dport, ulen, ucs)
    f.udp_payload = l4[8:ulen]
    if dport != ROCE_PORT:
        return None, ''
    p = f.udp_payload
    if len(p) < 12:
        return 'malformed_bth', 'BTH cut (%d of 12 bytes)' % len(p)
    if len(p) < 16:
        return 'malformed_bth', 'no room for the ICRC (%d bytes after UDP)' % len(p)
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
    return None, ''


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
        f.err, f.detail = _parse_ipv4(f, b, off, avail)
        if f.err not in (None, 'bad_ipv4_checksum'):
            return f
    elif et == ETH_IPV6:
        f.ipver = 6
        if avail < 40:
            f.err, f.detail = 'malformed_ipv6', 'IPv6 header cut (%d of 40 bytes)' % avail
            return f
        f.err, f.detail = _parse_ipv6(f, b, off, avail)
        if f.err is not None:
            return f
    else:
        f.err, f.detail = 'non_ip', 'EtherType 0x%04x' % et
        return f

    if f.proto != 17 or f.fragment:
        return f
    err, detail = _parse_udp_bth(f)
    if err is not None:
        f.err, f.detail = err, detail   # a UDP/BTH defect outranks a bad IPv4 checksum, as before
    return f


# How Linux (rxe, mlx5) derives a RoCEv2 UDP source port from a QP pair: the ECMP entropy.
# perf/linerate loads these from here too (one copy).
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
