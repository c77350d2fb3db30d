"""The workload perf/linerate measures: the 64-byte RoCEv2 frames (byte for byte those the
bash harness wrote: destinations over 1000 /24 routes, UDP source ports derived from each QP
pair's flow label as Linux derives them, DSCP 26 and ECT(0), the ICRC computed by scapy),
the looping pcap they are written to, and the switch configuration that routes them (one
net_pcap input, eight net_null outputs, eight 8-way groups; or its lossless variant).
perf/route_install reads the frame constants, frame_fields() and config_text() through
perf/linerate, which re-exports them."""

import importlib.util
import os

from .common import Failure

# Linux's flow label and UDP source port, from the test oracle's scapy-free wire module (one
# copy in the tree), loaded by path so its own module names stay out of sys.path.
_spec = importlib.util.spec_from_file_location(
    'oracle_wire', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'oracle', 'wire.py'))
_wire = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_wire)
linux_flow_label, linux_udp_sport = _wire.linux_flow_label, _wire.linux_udp_sport

# Frame constants (the same frames the bash harness wrote).
DMAC, SMAC = '02:52:53:00:00:00', '02:00:00:00:aa:01'
SRC_IP = '10.200.0.2'
TOS = (26 << 2) | 2  # DSCP 26 (RoCE, lossless TC3), ECT(0)
ROUTES = 1000
FRAME_LEN = 60       # 58 bytes of RoCEv2 + Ethernet padding, 64 on the wire with the FCS


# --------------------------------------------------------------------------------------
# frames


def frame_fields(i):
    """Destination, UDP source port, destination QP and PSN of frame i."""
    route = (i * 7919) % ROUTES                    # route r covers 10.(r>>8).(r&255).0/24
    dst = '10.%d.%d.%d' % (route >> 8, route & 255, 2 + i % 250)
    dqpn = 0x100 + i
    sport = linux_udp_sport(linux_flow_label(0x20000 + i, dqpn))
    return dst, sport, dqpn, i & 0xFFFFFF


def scapy_layers():
    import logging
    logging.getLogger('scapy.runtime').setLevel(logging.ERROR)
    from scapy.layers.l2 import Ether
    from scapy.layers.inet import IP, UDP
    from scapy.contrib.roce import BTH
    return Ether, IP, UDP, BTH


def build_frames(count):
    """The frames as bytes: Eth/IPv4 (DF, TTL 64, id i)/UDP 4791 (checksum 0, as RoCE NICs
    send)/BTH RC SEND_ONLY without payload/ICRC (scapy computes it), padded to 60 bytes."""
    Ether, IP, UDP, BTH = scapy_layers()
    frames = []
    for i in range(count):
        dst, sport, dqpn, psn = frame_fields(i)
        pkt = (Ether(dst=DMAC, src=SMAC) /
               IP(src=SRC_IP, dst=dst, tos=TOS, ttl=64, id=i & 0xFFFF, flags='DF') /
               UDP(sport=sport, dport=4791, chksum=0) /
               BTH(opcode=0x04, dqpn=dqpn, psn=psn))
        b = bytes(pkt)
        frames.append(b + b'\x00' * (FRAME_LEN - len(b)))
    bad = sorted({len(f) for f in frames if len(f) != FRAME_LEN})
    if bad:
        raise Failure('frames of %s bytes, expected %d' % (bad, FRAME_LEN))
    return frames


def write_pcap(path, frames):
    from scapy.utils import RawPcapWriter
    w = RawPcapWriter(path, linktype=1, snaplen=65535)  # Ethernet
    try:
        w.write_header(None)
        for n, f in enumerate(frames):  # one microsecond apart (net_pcap ignores the times)
            w.write_packet(f, sec=1700000000 + n // 1000000, usec=n % 1000000)
    finally:
        w.close()


# --------------------------------------------------------------------------------------
# switch configuration


def config_text(pcap, variant, policy='ecmp'):
    """The foundation pipeline, or (lossless) the same plus PFC, ECN and a congested egress;
    `policy` is every group's routing policy."""
    lossless = variant == 'lossless'
    out0_speed, in_tx = ('0.1', ',tx_pcap=/dev/null') if lossless else ('400', '')
    lines = ['switch: {workers: 1, seed: 7, mbufs: 65536}']
    if lossless:
        lines += ['qos: {trust: dscp, dscp_to_tc: {26: 3}, pfc_enable: [3]}',
                  'buffer:',
                  '  profiles: {lossless: {xoff: 262144, xon: 131072, headroom: 1048576}}',
                  '  pg: {3: lossless}',
                  'wred_profiles:',
                  '  ROCE: {wred_green_enable: true, ecn: ecn_all, green_min_threshold: 65536,',
                  '         green_max_threshold: 524288, green_drop_probability: 20}',
                  'queue_wred: {3: ROCE}']
    else:
        lines.append('qos: {trust: dscp, dscp_to_tc: {26: 3}}')
    queues = '     queues: {limit_packets: 4096, limit_bytes: 16777216}}'
    lines.append('ports:')
    lines.append('  - {name: in0, kind: ethdev, devargs: "net_pcap0,rx_pcap=%s,infinite_rx=1%s", '
                 'speed_gbps: 400,' % (pcap, in_tx))
    lines.append(queues)
    for p in range(8):
        lines.append('  - {name: out%d, kind: ethdev, devargs: "net_null%d,no-rx=1", speed_gbps: %s,'
                     % (p, p, out0_speed if p == 0 else '400'))
        lines.append(queues)
    lines.append('nexthop_groups:')
    for g in range(8):
        lines += ['  - name: g%d' % g, '    policy: %s' % policy, '    members:']
        lines += ['      - {port: out%d, mac: "02:aa:00:00:0%d:0%d"}' % (p, g, p) for p in range(8)]
    lines.append('routes:')
    lines += ['  - {prefix: 10.%d.%d.0/24, group: g%d}' % (r >> 8, r & 255, r % 8)
              for r in range(ROUTES)]
    return '\n'.join(lines) + '\n'

