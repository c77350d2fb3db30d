"""The oracle's own checks of one frame: the RoCEv2 ICRC recomputed by its own code (with
scapy.contrib.roce's as a second opinion), and what a router may and may not change between an
input frame and its output (TTL decrement, DSCP, ECN, headers, payload, MACs).

The IPv4 header checksum is verified by the parser itself (wire.parse_frame reports
`bad_ipv4_checksum`); everything here works on parsed wire.Frame objects.
"""

import ipaddress
import struct
import zlib

from wire import mac_bytes, mac_str

# --------------------------------------------------------------------------------------
# ICRC: own implementation (from the InfiniBand spec, annex A17) and scapy's


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


def scapy_view(f):
    """Dissect the datagram (trailer padding removed) with scapy; returns the packet."""
    from scapy.layers.l2 import Ether
    import scapy.contrib.roce  # noqa: F401  (binds UDP port 4791 to BTH)
    return Ether(f.datagram())


def scapy_bth():
    from scapy.contrib.roce import BTH
    return BTH


def scapy_bth_of(f):
    """scapy's BTH layer of a parsed frame, or None when scapy does not see one."""
    BTH = scapy_bth()
    pkt = scapy_view(f)
    return pkt[BTH] if BTH in pkt else None


def icrc_scapy(f, pkt=None):
    """ICRC computed by scapy.contrib.roce (IPv4 only); None when scapy cannot."""
    if f.ipver != 4:
        return None
    BTH = scapy_bth()
    if pkt is None:
        pkt = scapy_view(f)
    if BTH not in pkt:
        return None
    return bytes(pkt[BTH].compute_icrc(None))


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
# destination MACs by prefix


def parse_dmac_map(items):
    """[(network, mac bytes)] from 'PFX=MAC[,PFX=MAC...]' strings, longest prefix first."""
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


# --------------------------------------------------------------------------------------
# an output frame against the input frame it came from


def match_key(f):
    """How an output frame finds its input: RoCE by flow and PSN, other IP by payload."""
    if f.roce:
        return ('roce', f.src, f.dst, f.udp[0], f.bth['psn'], f.bth['dqpn'])
    return ('ip', f.src, f.dst, f.proto, f.ip_payload)


def _masked_iphdr(f):
    """The IP header with TOS/traffic class, TTL/hop limit and checksum zeroed."""
    h = bytearray(f.iphdr)
    if f.ipver == 4:
        h[1] = h[8] = 0
        h[10:12] = b'\0\0'
    else:
        h[0] &= 0xF0
        h[1] &= 0x0F
        h[7] = 0
    return bytes(h)


def compare_routed(f, o, o_index, ttl_dec, ignore_dscp):
    """Errors of output frame f against its input o (input frame number o_index), as a router
    rewrites it: TTL/hop limit - ttl_dec, DSCP unchanged, ECN unchanged or ECT -> CE, the rest of
    the IP header, the UDP header, BTH, payload and ICRC byte-identical.
    Returns (errors, ce_marked)."""
    errs = []
    ce = False
    if f.ttl != o.ttl - ttl_dec:
        errs.append('%s %d, expected %d (input frame %d)' %
                    ('TTL' if f.ipver == 4 else 'hop limit', f.ttl, o.ttl - ttl_dec, o_index))
    if not ignore_dscp and (f.tos >> 2) != (o.tos >> 2):
        errs.append('DSCP %d, input had %d' % (f.tos >> 2, o.tos >> 2))
    fe, oe = f.tos & 3, o.tos & 3
    if fe != oe:
        if oe in (1, 2) and fe == 3:
            ce = True
        else:
            errs.append('ECN %d, input had %d' % (fe, oe))
    fh, oh = _masked_iphdr(f), _masked_iphdr(o)
    if fh != oh:
        errs.append('IP header differs beyond TOS/TTL/checksum: %s vs input %s' % (fh.hex(), oh.hex()))
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
    return errs, ce


def compare_macs(f, smac, dmap):
    """Errors of f's MACs against the expected source MAC and destination-MAC map."""
    errs = []
    if smac is not None and f.smac != smac:
        errs.append('src MAC %s, expected %s' % (mac_str(f.smac), mac_str(smac)))
    if dmap:
        want = lookup_dmac(dmap, f.dst)
        if want is None:
            errs.append('dst IP %s not covered by --dmac-map' % f.dst)
        elif f.dmac != want:
            errs.append('dst MAC %s, expected %s for %s' % (mac_str(f.dmac), mac_str(want), f.dst))
    return errs
