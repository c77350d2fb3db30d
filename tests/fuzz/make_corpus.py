#!/usr/bin/python3
"""Writes the fuzz targets' seed corpora and dictionaries (never third-party captures): frames
built with scapy, the repository's own configs and P4 program, and control requests.

    tests/fuzz/make_corpus.py OUT_DIR      -> OUT_DIR/<target>/seed-*, OUT_DIR/<target>.dict
"""

import json
import logging
import os
import struct
import sys
import zlib

logging.getLogger('scapy').setLevel(logging.ERROR)  # its ICRC for IPv6 is ours to write
from scapy.all import ARP, ICMP, IP, TCP, UDP, Dot1Q, Ether, IPv6, Raw  # noqa: E402
from scapy.layers.inet6 import (ICMPv6DestUnreach, ICMPv6EchoRequest, ICMPv6ND_NA, ICMPv6ND_NS,  # noqa: E402
                                ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr, ICMPv6TimeExceeded, IPv6ExtHdrFragment,
                                IPv6ExtHdrHopByHop)
from scapy.contrib.roce import BTH  # noqa: E402

from corpus_requests import BMV2, CONTROL  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SWITCH_MAC = '02:00:00:00:00:10'


def roce(dst, opcode=0x0a, dscp=26, ecn=2, payload=256, v6=False, vlan=None, sport=0xc000):
    l3 = (IPv6(dst=dst, src='2001:db8:0:9::2', tc=dscp << 2 | ecn) if v6 else
          IP(dst=dst, src='10.0.9.2', tos=dscp << 2 | ecn, ttl=64))
    pkt = Ether(dst=SWITCH_MAC, src='02:aa:00:00:00:09')
    if vlan is not None:
        pkt = pkt / Dot1Q(vlan=vlan, prio=3)
    # The harness writes the ICRC (the last 4 bytes) before the switch sees the frame.
    return bytes(pkt / l3 / UDP(sport=sport, dport=4791) / BTH(opcode=opcode, dqpn=0x100, psn=1) / Raw(b'\0' * payload + b'\0' * 4))


def pfc(enable, quanta, opcode=0x0101):
    body = struct.pack('!HH', opcode, enable) + b''.join(struct.pack('!H', q) for q in quanta)
    return bytes(Ether(dst='01:80:c2:00:00:01', src='02:aa:00:00:00:01', type=0x8808) / Raw(body.ljust(46, b'\0')))


def pause(quanta):
    return bytes(Ether(dst='01:80:c2:00:00:01', src='02:aa:00:00:00:01', type=0x8808) /
                 Raw(struct.pack('!HH', 1, quanta).ljust(46, b'\0')))


def records(frames):
    """fuzz_frames' input: [port][length, 2 bytes][frame] for each (port, frame)."""
    return b''.join(struct.pack('!BH', port, len(f)) + f for port, f in frames)


def frames_seeds():
    incast = [(p, roce(f'10.0.0.{p + 2}', payload=1024)) for p in (1, 2, 3) for _ in range(20)]
    return {
        'roce_v4': records([(0, roce('10.0.1.2')), (1, roce('10.0.2.2', opcode=0x81, payload=16))]),
        'roce_v6': records([(2, roce('2001:db8:0:1::2', v6=True)), (0, roce('2001:db8:0:3::7', v6=True, vlan=5))]),
        'incast_lossless': records(incast),
        'lossy_and_spread': records([(0, roce(f'10.9.{i}.1', dscp=0, sport=0xc000 + i)) for i in range(32)]),
        'pfc_in': records([(1, pfc(0x18, [0, 0, 0, 0xffff, 0xffff, 0, 0, 0])), (0, roce('10.0.1.2', payload=2000)),
                           (1, pfc(0x18, [0] * 8))]),
        'pause_in': records([(2, pause(500)), (0, roce('10.0.2.2'))]),
        'default_route': records([(1, roce('192.168.1.1', dscp=10))]),
        'non_ip': records([(0, bytes(Ether(dst='ff:ff:ff:ff:ff:ff') / ARP(pdst='10.0.0.1'))),
                           (1, bytes(Ether(dst=SWITCH_MAC) / IP(dst='10.0.2.2', ttl=1) / ICMP())),
                           (2, bytes(Ether(dst=SWITCH_MAC) / IP(dst='10.0.3.2') / TCP(dport=80)))]),
        'truncated': records([(0, roce('10.0.1.2')[:40]), (1, b''), (2, roce('10.0.3.2')[:14])]),
    }



# fuzz_bridge_frames' switch: p0 routed (10.0.1.1/24, 2001:db8:1::1/64), p1 access VLAN 10, p2
# tagged [10, 20], p3 access VLAN 20; VLAN 10's interface 10.0.10.1/24, 2001:db8:10::1/64.
P0_MAC, SVI_MAC = '02:00:00:00:00:10', '02:00:00:00:01:0a'
HOST_A, HOST_B, HOST_E = '02:aa:00:00:0a:02', '02:aa:00:00:0a:03', '02:aa:00:00:0a:05'  # VLAN 10: p1, p2, p2
HOST_C, HOST_D, HOST_H0 = '02:aa:00:00:14:03', '02:aa:00:00:14:04', '02:aa:00:00:01:02'  # VLAN 20: p2, p3; p0


def bridge_records(frames):
    """fuzz_bridge_frames' input: records whose port byte also holds a delay, (steps << 2) | port."""
    return records([(port | delay << 2, bytes(f)) for port, delay, f in frames])


def vlan10(src, dst=SVI_MAC, tagged=False, vid=10):
    eth = Ether(dst=dst, src=src)
    return eth / Dot1Q(vlan=vid) if tagged else eth


def bridge_frames_seeds():
    bcast = 'ff:ff:ff:ff:ff:ff'
    sn = 'ff02::1:ff00:1'

    def ns(src_mac, src_ip, tagged):
        return (vlan10(src_mac, '33:33:ff:00:00:01', tagged) / IPv6(src=src_ip, dst=sn, hlim=255) /
                ICMPv6ND_NS(tgt='2001:db8:10::1') / ICMPv6NDOptSrcLLAddr(lladdr=src_mac))

    udp = UDP(sport=40000, dport=33434) / Raw(b'\0' * 32)
    from_h0 = Ether(dst=P0_MAC, src=HOST_H0)
    return {
        'arp_svi': bridge_records([
            (1, 0, Ether(dst=bcast, src=HOST_A) / ARP(op=1, hwsrc=HOST_A, psrc='10.0.10.2', pdst='10.0.10.1')),
            (2, 1, vlan10(HOST_B, bcast, True) / ARP(op=1, hwsrc=HOST_B, psrc='10.0.10.3', pdst='10.0.10.1'))]),
        'ns_svi': bridge_records([(1, 0, ns(HOST_A, '2001:db8:10::2', False)), (2, 1, ns(HOST_B, '2001:db8:10::3', True))]),
        'ping_svi': bridge_records([
            (1, 0, vlan10(HOST_A) / IP(src='10.0.10.2', dst='10.0.10.1') / ICMP(type=8, id=1, seq=1) / Raw(b'ping' * 8)),
            (2, 0, vlan10(HOST_B, tagged=True) / IPv6(src='2001:db8:10::3', dst='2001:db8:10::1') /
             ICMPv6EchoRequest(id=2, seq=1, data=b'ping' * 8))]),
        # Routed into the VLAN to a host it does not know: held, probed (flooded in VLAN 10 from the
        # interface), answered tagged on the trunk, released there; the next packet goes straight.
        'glean': bridge_records([
            (0, 0, from_h0 / IP(src='10.0.1.2', dst='10.0.10.5') / udp),
            (2, 1, vlan10(HOST_E, tagged=True) / ARP(op=2, hwsrc=HOST_E, psrc='10.0.10.5', hwdst=SVI_MAC, pdst='10.0.10.1')),
            (0, 4, from_h0 / IP(src='10.0.1.2', dst='10.0.10.5') / udp),
            (0, 0, from_h0 / IPv6(src='2001:db8:1::2', dst='2001:db8:10::5') / udp),
            (2, 1, vlan10(HOST_E, tagged=True) / IPv6(src='2001:db8:10::5', dst='2001:db8:10::1', hlim=255) /
             ICMPv6ND_NA(tgt='2001:db8:10::5', R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr=HOST_E))]),
        # A next hop by IP on the VLAN (10.7.0.0/16 via 10.0.10.9), answered from the access port.
        'via_svi': bridge_records([
            (1, 0, vlan10(HOST_A) / IP(src='10.0.10.2', dst='10.7.1.1') / udp),
            (1, 1, Ether(dst=SVI_MAC, src='02:aa:00:00:0a:09') /
             ARP(op=2, hwsrc='02:aa:00:00:0a:09', psrc='10.0.10.9', hwdst=SVI_MAC, pdst='10.0.10.1'))]),
        'bridged_unicast': bridge_records([
            (2, 0, vlan10(HOST_B, HOST_A, True) / IP(src='10.0.10.3', dst='10.0.10.2') / udp),
            (1, 0, vlan10(HOST_A, HOST_B) / IP(src='10.0.10.2', dst='10.0.10.3') / udp),
            (2, 1, vlan10(HOST_B, HOST_A, True) / IP(src='10.0.10.3', dst='10.0.10.2') / UDP(dport=4791) / Raw(b'\0' * 64)),
            (1, 0, Ether(dst=HOST_B, src=HOST_A) / Dot1Q(vlan=0, prio=3) / Raw(b'priority tagged' * 4))]),
        'vlan20_broadcast': bridge_records([
            (3, 0, Ether(dst=bcast, src=HOST_D) / ARP(op=1, hwsrc=HOST_D, psrc='10.0.20.4', pdst='10.0.20.3')),
            (2, 0, Ether(dst=bcast, src=HOST_C) / Dot1Q(vlan=20) / Raw(b'broadcast' * 6)),
            (2, 1, Ether(dst=HOST_D, src=HOST_C) / Dot1Q(vlan=20) / IP(src='10.0.20.3', dst='10.0.20.4') / udp)]),
        # p0 is routed: a tagged frame is routed with its tag, into the VLAN (re-tagged or popped)
        # or back out of p0.
        'routed_tagged_p0': bridge_records([
            (0, 0, from_h0 / Dot1Q(vlan=5, prio=3) / IP(src='10.0.1.2', dst='10.0.10.3') / udp),
            (1, 0, vlan10(HOST_A) / IP(src='10.0.10.2', dst='10.0.1.2', ttl=1) / udp),
            (0, 0, from_h0 / Dot1Q(vlan=7) / IP(src='10.0.1.2', dst='10.8.0.1') / udp),
            (0, 1, Ether(dst=P0_MAC, src='02:aa:00:00:01:09') / Dot1Q(vlan=7) /
             ARP(op=2, hwsrc='02:aa:00:00:01:09', psrc='10.0.1.9', hwdst=P0_MAC, pdst='10.0.1.1'))]),
        'garbage': records([(0, b'\xff' * 13), (1, bytes(Ether(dst=SVI_MAC, src=HOST_A) / Dot1Q(vlan=10))[:16]),
                            (2, bytes(Ether(dst=HOST_A, src=HOST_B) / Dot1Q(vlan=10) / Dot1Q(vlan=20) / Raw(b'x' * 40))),
                            (2, bytes(Ether(dst=bcast, src=HOST_B) / Dot1Q(vlan=30) / Raw(b'x' * 40))),
                            (3, bytes(Ether(dst=bcast, src=HOST_D, type=0x88a8) / Raw(b'\0\x14\x08\x00' + b'x' * 40))),
                            (1, bytes(range(256)) * 2)]),
    }


def mac_control_seeds():
    return {
        'pfc_xoff': pfc(0x08, [0, 0, 0, 0xffff, 0, 0, 0, 0]),
        'pfc_xon': pfc(0xff, [0] * 8),
        'pause': pause(0xffff),
        'bad_opcode': pfc(0x08, [1] * 8, opcode=0x0202),
        'reserved_bits': pfc(0x1ff, [1] * 8),
        'short': pfc(0x08, [1] * 8)[:30],
    }


def local_frames_seeds():
    """fuzz_local_frames' input: one frame, as a host sends the switch (ARP, ND, ping, expiring)."""
    host, us = '02:aa:00:00:01:02', SWITCH_MAC
    eth = Ether(dst=us, src=host)
    sn = 'ff02::1:ff00:1'
    return {
        'arp_request': Ether(dst='ff:ff:ff:ff:ff:ff', src=host) / ARP(op=1, hwsrc=host, psrc='10.0.1.2', pdst='10.0.1.1'),
        'arp_reply': eth / ARP(op=2, hwsrc=host, psrc='10.0.1.2', hwdst=us, pdst='10.0.1.1'),
        'arp_gratuitous': Ether(dst='ff:ff:ff:ff:ff:ff', src=host) / ARP(op=1, hwsrc=host, psrc='10.0.1.2', pdst='10.0.1.2'),
        'arp_vlan': Ether(dst='ff:ff:ff:ff:ff:ff', src=host) / Dot1Q(vlan=5) / ARP(op=1, hwsrc=host, psrc='10.0.1.2',
                                                                                   pdst='10.0.1.1'),
        'ns': Ether(dst='33:33:ff:00:00:01', src=host) / IPv6(src='2001:db8:1::2', dst=sn, hlim=255) /
        ICMPv6ND_NS(tgt='2001:db8:1::1') / ICMPv6NDOptSrcLLAddr(lladdr=host),
        'ns_dad': Ether(dst='33:33:ff:00:00:01', src=host) / IPv6(src='::', dst=sn, hlim=255) / ICMPv6ND_NS(tgt='2001:db8:1::1'),
        'ns_unicast_vlan': eth / Dot1Q(vlan=5) / IPv6(src='2001:db8:1::2', dst='2001:db8:1::1', hlim=255) /
        ICMPv6ND_NS(tgt='2001:db8:1::1') / ICMPv6NDOptSrcLLAddr(lladdr=host),
        'na': eth / IPv6(src='2001:db8:1::2', dst='2001:db8:1::1', hlim=255) /
        ICMPv6ND_NA(tgt='2001:db8:1::2', R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr=host),
        'ping': eth / IP(src='10.0.1.2', dst='10.0.1.1') / ICMP(type=8, id=0x1234, seq=1) / Raw(b'abcdefgh' * 4),
        'ping_options': eth / IP(src='10.0.1.2', dst='10.0.1.1', options=b'\x01\x01\x01\x00') / ICMP(type=8) / Raw(b'x' * 8),
        'ping6': eth / IPv6(src='2001:db8:1::2', dst='2001:db8:1::1') / ICMPv6EchoRequest(id=7, seq=2, data=b'abcdefgh' * 4),
        'ttl1_udp': eth / IP(src='10.0.1.2', dst='10.8.0.5', ttl=1) / UDP(sport=40000, dport=33434) / Raw(b'\0' * 32),
        'ttl1_big': eth / IP(src='10.0.1.2', dst='10.8.0.5', ttl=1) / UDP(dport=33434) / Raw(b'\0' * 1400),
        'ttl1_icmp_error': eth / IP(src='10.0.1.2', dst='10.8.0.5', ttl=1) / ICMP(type=3, code=1) /
        IP(src='10.8.0.5', dst='10.0.1.2') / UDP(),
        'hlim1_udp': eth / IPv6(src='2001:db8:1::2', dst='2001:db8:8::5', hlim=1) / UDP(dport=33434) / Raw(b'\0' * 16),
        'hlim1_ext': eth / IPv6(src='2001:db8:1::2', dst='2001:db8:8::5', hlim=1) / IPv6ExtHdrHopByHop() /
        IPv6ExtHdrFragment(offset=0, m=1) / ICMPv6EchoRequest(),
        'hlim1_error': eth / IPv6(src='2001:db8:1::2', dst='2001:db8:8::5', hlim=1) / ICMPv6TimeExceeded() /
        IPv6(src='2001:db8:8::5', dst='2001:db8:1::2') / UDP(),
        'unreach6': eth / IPv6(src='2001:db8:1::2', dst='2001:db8:77::1') / ICMPv6DestUnreach() / IPv6() / UDP(),
    }


# fuzz_nic_frames' NIC: 10.0.0.2, its requester QP 0x11 sending messages of 3 packets to 10.0.0.3
# (6 in these seeds; at most 4 PSNs outstanding); both ends start a QP's PSNs at first_psn(qpn).
NIC_IP, NIC_PEER = '10.0.0.2', '10.0.0.3'


def first_psn(qpn):
    return (qpn * 2654435761) & 0xFFFFFF


def icrc(ip):
    """The RoCEv2 ICRC of an IPv4 datagram (ip: header through the ICRC's 4 bytes), as stored."""
    hdr = bytearray(ip[:20 + 8 + 12])
    hdr[1] = hdr[8] = hdr[10] = hdr[11] = 0xFF  # TOS, TTL, header checksum
    hdr[26] = hdr[27] = 0xFF  # UDP checksum
    hdr[32] = 0xFF  # BTH byte 4
    return struct.pack('<I', zlib.crc32(bytes(ip[40:-4]), zlib.crc32(bytes(hdr), zlib.crc32(b'\xff' * 8))))


def nic_roce(opcode, psn, dqpn=0x11, src=NIC_PEER, dst=NIC_IP, ext=b'', payload=0, ack_req=False, dscp=26, ecn=2):
    """A RoCEv2 frame as dataplane/nic/roce_wire.cc writes them, with its ICRC."""
    pad = -payload % 4
    bth = bytes([opcode, pad << 4, 0xFF, 0xFF, 0]) + dqpn.to_bytes(3, 'big') + bytes([0x80 if ack_req else 0]) + \
        (psn & 0xFFFFFF).to_bytes(3, 'big')
    body = bth + ext + bytes([psn & 0xFF]) * (payload + pad)
    ip = bytes(IP(src=src, dst=dst, tos=dscp << 2 | ecn, ttl=64, flags='DF') / UDP(sport=0xC000, dport=4791, chksum=0) /
               Raw(body + b'\0' * 4))
    return bytes(Ether(dst='02:00:00:00:00:aa', src='02:00:00:00:00:10')) + ip[:-4] + icrc(ip)


def nic_ack(k, syndrome=0x1F, msn=0):
    """An ACK (or NAK) from the peer for the requester's k-th PSN."""
    return nic_roce(0x11, (first_psn(0x11) + k) & 0xFFFFFF, ext=bytes([syndrome]) + msn.to_bytes(3, 'big'))


def nic_records(recs, options=0, messages=6):
    """fuzz_nic_frames' input: a byte of options (1: placement, 2: SENDs, messages - 1 << 2), then
    records [ctl][length, 2 bytes][frame], ctl = mode << 6 | delay (see the target)."""
    return bytes([options | (messages - 1) << 2]) + b''.join(struct.pack('!BH', mode << 6 | delay, len(f)) + f for mode, delay, f in recs)


def nic_frames_seeds():
    wait = (3, 20, b'')  # 20 us with nothing received: the requester sends its window
    reth = lambda va, n: struct.pack('!QII', va, 0x1000, n)  # noqa: E731
    q, p = 0x22, first_psn(0x22)
    return {
        'acks': nic_records([wait, (1, 2, nic_ack(1)), (1, 2, nic_ack(3, msn=1)), (1, 4, nic_ack(5)), (1, 4, nic_ack(8)),
                             (1, 8, nic_ack(11)), (1, 8, nic_ack(14)), (1, 8, nic_ack(17))]),
        'nak': nic_records([wait, (1, 2, nic_ack(1)), (1, 1, nic_ack(2, 0x60)), (1, 1, nic_ack(2, 0x60)), (1, 4, nic_ack(5))]),
        # Placement and SENDs: a NAK resends only the PSN it names, a later ACK covers the rest.
        'placement_sends': nic_records([wait, (1, 2, nic_ack(1)), (1, 1, nic_ack(2, 0x60)), (1, 2, nic_ack(5)),
                                        (1, 8, nic_ack(8)), (1, 8, nic_ack(11)), (1, 8, nic_ack(14)),
                                        (1, 8, nic_ack(16, 0x60)), (1, 8, nic_ack(17))], options=3),
        'cnp': nic_records([wait, (1, 1, nic_roce(0x81, 0, dscp=48, ecn=0, ext=b'\0' * 16)), (1, 40, nic_ack(3)),
                            (1, 63, nic_roce(0x81, 0, dscp=48, ecn=0, ext=b'\0' * 16)), (1, 63, b'')]),
        # A listening QP: a WRITE of two packets (the first CE-marked: a CNP back), a SEND, a gap
        # (a NAK), a duplicate asking for an ACK.
        'listening_qp': nic_records(options=1, recs=[
            (0, 1, nic_roce(0x06, p, q, src='10.0.0.9', ext=reth(1 << 32, 1500), payload=1024, ecn=3)),
            (0, 1, nic_roce(0x08, p + 1, q, src='10.0.0.9', payload=476, ack_req=True)),
            (0, 1, nic_roce(0x04, p + 2, q, src='10.0.0.9', payload=61, ack_req=True)),
            (0, 1, nic_roce(0x04, p + 5, q, src='10.0.0.9', payload=8)),
            (0, 1, nic_roce(0x0A, p + 1, q, src='10.0.0.9', ext=reth(0, 4), payload=4, ack_req=True))]),
        # The peer writing to QP 0x11's responder half.
        'peer_send': nic_records([(1, 0, nic_roce(0x00, first_psn(0x11), payload=1024)),
                                  (1, 0, nic_roce(0x01, first_psn(0x11) + 1, payload=1024)),
                                  (1, 0, nic_roce(0x02, first_psn(0x11) + 2, payload=3, ack_req=True))]),
        'ack_far_ahead': nic_records([wait, (1, 1, nic_ack(0x400000)), (1, 1, nic_ack(0x7FFFFF)), (1, 1, nic_ack(-1)),
                                      (1, 63, nic_ack(0x800000, 0x60))]),
        'icrc_only_and_raw': nic_records([wait, (2, 1, nic_ack(2)), (3, 1, nic_ack(3)), (3, 1, nic_ack(4)[:-1] + b'\0')]),
        'garbage': nic_records([(3, 0, b'\xff' * 13), (0, 0, bytes(range(60))), (1, 5, bytes(range(256)) * 2),
                                (2, 0, nic_ack(1)[:50]), (3, 63, b'\x08\x00' * 40)]),
    }


SMALL_CONFIG = """
switch: {workers: 1, seed: 3}
qos: {dscp_to_tc: {26: 3}, pfc_enable: [3, 4], cnp_queue: 6}
buffer: {cable_length_m: 100}
ports:
  - {name: a, speed_gbps: 25, host: {ip: 10.0.0.2, mac: "02:00:00:00:00:aa", flows: [{dst: 10.0.1.2, rate_gbps: 1, dscp: 26}]}}
  - {name: b, devargs: net_null0, speed_gbps: 100, worker: 0}
nexthop_groups:
  - {name: g, policy: {name: flowlet_quality, idle_time_us: 64}, members: [{port: b, mac: "02:00:00:00:00:bb", weight: 2}]}
mirror_sessions:
  - {name: span, dst_port: b, rx_ports: [a], truncate: 128}
link_events:
  - {port: b, at_s: 0.5, state: down}
limits: {routes_v4: 1000, routes_v6: 100, prefault: false}
routes:
  - {prefix: 10.0.1.0/24, group: g}
  - {prefix: "2001:db8::/32", port: b, mac: "02:00:00:00:00:bb"}
  - {prefix: 0.0.0.0/0, nexthops: [{port: a, mac: "02:00:00:00:00:aa"}, {port: b, mac: "02:00:00:00:00:bb"}]}
"""

# VLANs bridged on an access port and a trunk, VLAN 10 with an interface (SVI) routing to a plain
# port, a next hop by IP on the VLAN.
SVI_CONFIG = """
switch: {workers: 2}
ports:
  - {name: r, devargs: net_null0, ipv4: 10.0.1.1/24, ipv6: "2001:db8:1::1/64", icmp_unreachable: true}
  - {name: a, devargs: net_null1, vlan: {access: 10}}
  - {name: t, devargs: net_null2, vlan: {tagged: [10, 20]}}
  - {name: b, devargs: net_null3, vlan: {access: 20}}
vlans:
  - {id: 10, ipv4: 10.0.10.1/24, ipv6: "2001:db8:10::1/64", mac: "02:00:00:00:01:0a"}
  - 20
bridge: {ageing_s: 60, flood_pps: 20000, flood_burst: 32, fdb_size: 1024}
neighbours: {retrans_s: 0.5, hold_packets: 4, max_entries: 256}
routes:
  - {prefix: 10.7.0.0/16, via: 10.0.10.9}
  - {prefix: "2001:db8:7::/48", via: "2001:db8:10::9"}
"""


def config_seeds():
    seeds = {'small': SMALL_CONFIG, 'minimal': 'ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: "02:00:00:00:00:aa"}}\n',
             'faults': 'ports:\n  - {name: a, host: {ip: 10.0.0.2, mac: "02:00:00:00:00:aa"},\n'
                       '     faults: {direction: rx, drop: 0.1, corrupt: 0.01, corrupt_offset: 22, duplicate: 0.01,\n'
                       '              delay_us: 5, jitter_us: 2, stuck: {start_s: 0.1, stop_s: 0.2, pfc: [3]}}}\n'}
    with open(os.path.join(TOP, 'configs/demo_incast.yaml')) as f:
        seeds['demo_incast'] = f.read()
    seeds['svi'] = SVI_CONFIG
    return seeds


FABRIC_CUT = """fabric:
  leaf_spine: {spines: 3, leaves: 2, hosts_per_leaf: 1, links_per_pair: 2, loss: 0.001}
  policy: {name: flowlet_quality, idle_time_us: 64}
  cable_events: [{cable: leaf1.up1, at_ms: 1, state: down}, {cable: spine2.down3, at_ms: 2, state: up}]
  convergence_ms: 0.5
switch_defaults: {switch: {mbufs: 4096}}
flows: [{from: leaf1.h1, to: leaf2.h1, rate_gbps: 5, start_ms: 1}]
"""

FABRIC_RING = """fabric:
  defaults: {host_gbps: 10, link_gbps: 40, cable_m: 10}
  switches: [{name: n, hosts: 2}, {name: e, hosts: 1}, {name: s, hosts: 2, host_gbps: 25}]
  links: [{a: n, b: e}, {a: e.west, b: s.east, gbps: 100, cable_m: 200}, {a: s, b: n, loss: 0.01}]
flows: [{from: n.h1, to: s.h2, rate_gbps: 1}]
"""

FABRIC_NIC = """fabric:
  leaf_spine: {spines: 2, leaves: 2, hosts_per_leaf: 2}
hosts: {nic: {mtu: 4096, reorder: placement, cc: dcqcn}}
flows: [{pattern: permutation, rate_gbps: 1, seed: 2}]
traffic: [{pattern: incast, hosts: [leaf1], receiver: leaf2.h1, messages: 3}, {pattern: permutation, hosts: [all], seed: 4}]
collectives: [{op: allreduce, hosts: [leaf1.h1, leaf2.h1, leaf1.h2], size_bytes: 65536, slices: 2}]
"""


# Words the targets' parsers look for: libFuzzer splices them in (-dict).
WORDS = {
    'config': ['switch', 'workers', 'qos', 'dscp_to_tc', 'pfc_enable', 'tc_to_pg', 'ports', 'name', 'devargs',
               'speed_gbps', 'host', 'flows', 'nexthop_groups', 'members', 'policy', 'policy_by_tc', 'routes',
               'prefix', 'nexthops', 'drop', 'buffer', 'wred_profiles', 'queue_wred', 'pfcwd', 'load_view', 'link_events',
               'limits', 'prefault', 'mirror_sessions', 'rx_ports', 'tx_ports', 'truncate', 'dst_port', 'pipeline', 'faults',
               'corrupt_offset', 'duplicate', 'jitter_us', 'stuck', ': ', '- ', '{', '}'],
    'control': ['"op"', '"ops"', '"id"', '"drop"', 'route.add', 'route.del', 'group.add', 'group.set', 'group.del', 'port.set',
                'qos.set', 'mirror.set', 'mirror.del', 'p4.cli', 'buffer.set', 'buffer.get', 'speed_gbps', 'queues',
                'limit_packets', 'wred_profiles', 'queue_wred', 'pfcwd', 'pfc_quanta', 'yaml', 'route.list', 'config.dump', 'state.hash',
                '"prefix"', '"group"', '"members"', '"port"', '"mac"', '"weight"', '"policy"', '"nexthops"',
                '"replace"', '"admin"', '"lines"', '::/0', '/32', 'h0', 'h1', 'h2', 'h3', 'system.set', 'system.get', '"ipv4"',
                '"ipv6"', '"icmp_unreachable"', '"lldp"', '"vlan"', '"vlans"', '"copp"', '"neighbours"', '"bridge"', '"access"',
                '"tagged"'],
    'fabric_config': ['fabric', 'leaf_spine', 'spines', 'leaves', 'hosts_per_leaf', 'links_per_pair', 'host_gbps',
                      'uplink_gbps', 'cable_m', 'loss', 'policy', 'step_ns', 'max_jump_us', 'duration_ms', 'seed',
                      'cable_events', 'cable', 'at_ms', 'state', 'convergence_ms', 'never', 'switch_defaults', 'flows', 'from', 'to', 'leaf1.h1',
                      'leaf2.h1', 'spine1.down1', 'hosts', 'nic', 'reorder', 'placement', 'traffic', 'collectives',
                      'pattern', 'permutation', 'incast', 'receiver', 'allreduce', 'all', 'leaf1', 'switches', 'links',
                      'defaults', 'name', 'config', 'a', 'b', 'gbps', 'threads', 'n.h1', ': ', '- ', '{', '}'],
    'bmv2': ['table_add', 'table_delete', 'table_modify', 'table_dump', 'table_clear', 'table_set_default',
             'act_prof_create_member', 'act_prof_create_group', 'act_prof_add_member_to_group',
             'table_indirect_add', 'table_indirect_add_with_group', 'mirroring_add', 'mirroring_delete',
             'ipv4_lpm', 'ipv6_lpm', 'nexthop_selector', 'set_nexthop', 'dscp_to_tc', 'tc_to_queue',
             'mirror_ingress', 'mirror_in', 'mirror_egress', 'mirror_out', '=>', 'NoAction', 'set_queue_depth',
             'set_queue_rate'],
    'p4': ['table', 'action', 'key', 'actions', 'exact', 'lpm', 'ternary', 'selector', 'bit<', 'control',
           'apply', 'default_action', 'implementation', 'action_selector', 'size', 'const', '{', '}', ';'],
}

# Byte strings for the binary targets, written as libFuzzer's "\xNN" escapes (JSON's \u and \b
# escapes are not its syntax): EtherTypes, the ARP header for Ethernet/IPv4, ICMP / ICMPv6 types
# with code 0, IPv4 and IPv6 header starts, next header 58 with hop limit 255.
BINARY_WORDS = {
    'local_frames': [b'\x08\x06', b'\x86\xdd', b'\x08\x00', b'\x81\x00', b'\x00\x01\x08\x00\x06\x04', b'\xff\x02',
                     b'\x33\x33', b'\x87\x00', b'\x88\x00', b'\x80\x00', b'\x0b\x00', b'\x03\x00', b'\x45\x00',
                     b'\x60\x00\x00\x00', b'\x3a\xff'],
    # ... and for bridge_frames: 802.1Q tags for VLANs 10, 20 and 0 (priority), VLAN 10's
    # interface's MAC and p0's, broadcast, IPv6 multicast, the SVI's IPv4 address.
    'bridge_frames': [b'\x81\x00\x00\x0a', b'\x81\x00\x00\x14', b'\x81\x00\x60\x00', b'\x02\x00\x00\x00\x01\x0a',
                      b'\x02\x00\x00\x00\x00\x10', b'\xff\xff\xff\xff\xff\xff', b'\x33\x33\xff\x00\x00\x01',
                      b'\x08\x06', b'\x86\xdd', b'\x08\x00', b'\x88\xa8', b'\x0a\x00\x0a\x01'],
    # ... and for nic_frames: the RoCEv2 port, the NIC's and its peer's addresses, QP 0x11 and its
    # first PSN, AETH syndromes (ACK, NAK PSN sequence error), BTH opcodes with their flags byte.
    'nic_frames': [b'\x12\xb7', b'\x0a\x00\x00\x02', b'\x0a\x00\x00\x03', b'\x00\x00\x11', b'\xaf\x14\xc1',
                   b'\x1f\x00\x00\x00', b'\x60\x00\x00\x00', b'\x11\x00\xff\xff', b'\x81\x00\xff\xff',
                   b'\x06\x00\xff\xff', b'\x04\x00\xff\xff', b'\x80'],
}


def write(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'seed-' + name), 'wb') as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ('-h', '--help'):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    out = sys.argv[1]
    for n, d in frames_seeds().items():
        write(out, 'frames', n, d)
    for n, d in mac_control_seeds().items():
        write(out, 'mac_control', n, d)
    for n, d in local_frames_seeds().items():
        write(out, 'local_frames', n, bytes(d))
    for n, d in bridge_frames_seeds().items():
        write(out, 'bridge_frames', n, d)
    for n, d in nic_frames_seeds().items():
        write(out, 'nic_frames', n, d)
    for n, d in config_seeds().items():
        write(out, 'config', n, d)
    with open(os.path.join(TOP, 'configs/fabric_leafspine.yaml')) as f:
        write(out, 'fabric_config', 'leafspine', f.read())
    write(out, 'fabric_config', 'cut', FABRIC_CUT)
    write(out, 'fabric_config', 'nic', FABRIC_NIC)
    write(out, 'fabric_config', 'ring', FABRIC_RING)
    for n, d in CONTROL.items():
        write(out, 'control', n, json.dumps(d))
    for n, d in BMV2.items():
        write(out, 'bmv2', n, d)
    with open(os.path.join(TOP, 'p4/roceswitch.p4')) as f:
        write(out, 'p4', 'roceswitch', f.read())
    for target, words in WORDS.items():
        with open(os.path.join(out, target + '.dict'), 'w') as f:
            for w in words:
                f.write(json.dumps(w) + '\n')
    for target, words in BINARY_WORDS.items():
        with open(os.path.join(out, target + '.dict'), 'w') as f:
            for w in words:
                f.write('"' + ''.join(f'\\x{b:02x}' for b in w) + '"\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
