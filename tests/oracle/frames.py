"""Building frames with scapy: Ether / 802.1Q / IPv4 or IPv6 / UDP, and RoCEv2 with
scapy.contrib.roce's BTH (plus a RETH layer, which scapy does not have) and the ICRC.

scapy fills in lengths and checksums, and the ICRC for IPv4 (BTH.post_build). Every RoCE frame
built here is read back by the oracle's own parser and its ICRC recomputed by the own code
(checks.icrc_own): for IPv4 the two must agree, for IPv6 (where scapy has no ICRC) the own
one is inserted and scapy then computes the UDP checksum over it.
"""

from scapy.contrib.roce import BTH
from scapy.fields import IntField, XIntField, XLongField
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Packet, Raw

from checks import icrc_own
from wire import ETH_IPV4, ETH_IPV6, MIN_FRAME, ROCE_PORT, linux_flow_label, linux_udp_sport, mac_str, parse_frame  # noqa: F401 (gen_valid reads the two here)


class RETH(Packet):
    """RDMA extended transport header (IBA 9.3.3): virtual address, R_Key, DMA length."""
    name = 'RETH'
    fields_desc = [XLongField('va', 0), XIntField('rkey', 0), IntField('dmalen', 0)]


def pad60(fr):
    """Ethernet padding (zeros after the IP datagram) up to the 60-byte minimum."""
    return fr + b'\x00' * max(0, MIN_FRAME - len(fr))


def ether(dmac, smac, ethertype, vlans=()):
    """Ether with VLAN tags, outermost first, each (tpid, tci), ending in ethertype. MACs are
    6-byte strings."""
    types = [tpid for tpid, _ in vlans] + [ethertype]
    pkt = Ether(dst=mac_str(dmac), src=mac_str(smac), type=types[0])
    for (_, tci), inner in zip(vlans, types[1:]):
        pkt = pkt / Dot1Q(prio=tci >> 13, id=(tci >> 12) & 1, vlan=tci & 0xFFF, type=inner)
    return pkt


def ip_layer(ipver, src, dst, tos=0, ttl=64, ident=0, flow=0, proto=17):
    """IPv4 (DF set, checksum by scapy) or IPv6 header; tos is the IPv6 traffic class too."""
    if ipver == 4:
        return IP(src=str(src), dst=str(dst), tos=tos, ttl=ttl, id=ident & 0xFFFF, flags='DF',
                  proto=proto)
    return IPv6(src=str(src), dst=str(dst), tc=tos, fl=flow, hlim=ttl, nh=proto)


def ip_datagram(dmac, smac, ipver, src, dst, payload, tos=0, ident=0, vlans=()):
    """Ether / IP (UDP protocol number) / raw bytes: for headers cut on purpose."""
    et = ETH_IPV4 if ipver == 4 else ETH_IPV6
    return bytes(ether(dmac, smac, et, vlans) / ip_layer(ipver, src, dst, tos=tos, ident=ident) /
                 Raw(payload))


def build_udp_frame(dmac, smac, ipver, src, dst, sport, dport, payload, tos, ttl, ident=0,
                    flow=0, vlans=(), udp_checksum=True, pad=True):
    et = ETH_IPV4 if ipver == 4 else ETH_IPV6
    pkt = (ether(dmac, smac, et, vlans) / ip_layer(ipver, src, dst, tos, ttl, ident, flow) /
           UDP(sport=sport, dport=dport, chksum=None if udp_checksum else 0) / Raw(payload))
    fr = bytes(pkt)
    return pad60(fr) if pad else fr


def roce_l4(opcode, dqpn, psn, payload=b'', padcnt=0, ackreq=0, se=0, pkey=0xFFFF, reth=None):
    """BTH [/ RETH] / payload (pad bytes included): the UDP payload but the ICRC.
    reth: (va, rkey, dmalen) or None."""
    pkt = BTH(opcode=opcode, solicited=se, padcount=padcnt & 3, pkey=pkey, dqpn=dqpn & 0xFFFFFF,
              ackreq=ackreq & 1, psn=psn & 0xFFFFFF)
    if reth is not None:
        pkt = pkt / RETH(va=reth[0], rkey=reth[1], dmalen=reth[2])
    return pkt / Raw(payload)


def build_roce_frame(dmac, smac, ipver, src, dst, sport, l4, tos, ttl, ident=0, flow=0,
                     vlans=(), pad=True):
    """l4: roce_l4(...). UDP checksum: 0 for IPv4 (as RoCE NICs send), computed for IPv6.
    The ICRC is computed, and cross-checked against the own implementation."""
    et = ETH_IPV4 if ipver == 4 else ETH_IPV6
    l4 = l4.copy()
    l4.icrc = None if ipver == 4 else 0
    pkt = (ether(dmac, smac, et, vlans) / ip_layer(ipver, src, dst, tos, ttl, ident, flow) /
           UDP(sport=sport, dport=ROCE_PORT, chksum=0 if ipver == 4 else None) / l4)
    fr = bytes(pkt)
    f = parse_frame(fr, allow_stacked=True)
    if not f.roce or f.err is not None:
        raise SystemExit('internal error: built RoCE frame parses as %s (%s)' % (f.err, f.detail))
    own = icrc_own(f)
    if ipver == 4:
        if f.icrc_wire != own:
            raise SystemExit('internal error: own ICRC %s != scapy ICRC %s' %
                             (own.hex(), f.icrc_wire.hex()))
    else:
        pkt[BTH].icrc = int.from_bytes(own, 'big')   # scapy's FCSField: wire bytes, big-endian
        fr = bytes(pkt)                              # the UDP checksum now covers the ICRC
        if parse_frame(fr, allow_stacked=True).icrc_wire != own:
            raise SystemExit('internal error: ICRC not inserted as %s' % own.hex())
    return pad60(fr) if pad else fr
