"""The traffic of perf/route_install: perf/linerate loaded as a module (its switch
configuration, frame fields and EAL arguments) and its frames, built with the standard
library, written to a pcap."""

import importlib.machinery
import importlib.util
import os
import socket
import struct
import zlib

from .common import HERE


def linerate_module():
    """perf/linerate as a module: its switch configuration, frame fields and EAL arguments."""
    path = os.path.join(HERE, 'linerate')
    loader = importlib.machinery.SourceFileLoader('rs_linerate', path)
    spec = importlib.util.spec_from_loader('rs_linerate', loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def ip_checksum(hdr):
    s = sum(struct.unpack('!%dH' % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def roce_frame(lr, i):
    """perf/linerate's frame i, byte for byte as scapy builds it: Eth/IPv4 (DF, TTL 64, id i)/
    UDP 4791 (checksum 0)/BTH RC SEND_ONLY/ICRC (CRC-32 of the masked headers, as
    dataplane/proto/icrc.cc computes it), padded to 60 bytes."""
    dst, sport, dqpn, psn = lr.frame_fields(i)
    mac = lambda m: bytes(int(x, 16) for x in m.split(':'))  # noqa: E731
    eth = mac(lr.DMAC) + mac(lr.SMAC) + b'\x08\x00'
    udp_len = 8 + 12 + 4
    ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, lr.TOS, 20 + udp_len, i & 0xFFFF, 0x4000,
                               64, 17, 0, socket.inet_aton(lr.SRC_IP), socket.inet_aton(dst)))
    struct.pack_into('!H', ip, 10, ip_checksum(bytes(ip)))
    udp = struct.pack('!HHHH', sport, 4791, udp_len, 0)
    bth = struct.pack('!BBHII', 0x04, 0, 0xFFFF, dqpn & 0xFFFFFF, psn & 0xFFFFFF)
    masked = bytearray(ip + udp + bth)
    masked[1] = 0xFF                      # TOS
    masked[8] = 0xFF                      # TTL
    masked[10:12] = b'\xff\xff'           # header checksum
    masked[26:28] = b'\xff\xff'           # UDP checksum
    masked[28 + 4] = 0xFF                 # BTH FECN/BECN/reserved
    icrc = zlib.crc32(bytes(masked), zlib.crc32(b'\xff' * 8))
    frame = eth + bytes(ip) + udp + bth + struct.pack('<I', icrc)
    return frame + b'\x00' * (lr.FRAME_LEN - len(frame))


def write_pcap(path, frames):
    with open(path, 'wb') as fh:
        fh.write(struct.pack('<IHHiIII', 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for n, f in enumerate(frames):
            fh.write(struct.pack('<IIII', 1700000000 + n // 1000000, n % 1000000, len(f), len(f)))
            fh.write(f)
