#!/usr/bin/python3
"""Small byte-level pcap helpers for the integration tests (no scapy, no switch code).

  split  IN PREFIX INSIDE OUTSIDE   write the frames whose IPv4 destination is inside PREFIX to
                                   INSIDE and all others to OUTSIDE
  ecmp   PREFIX PORT=FILE...        for frames to PREFIX in each port's output, map every flow
                                   (src, dst, UDP sport, dport, BTH dest QP) to the (port, dst MAC)
                                   it left on; print JSON {flows, members, split_flows, per_port}
  merge  OUT IN...                  concatenate the frames of several pcaps into one
"""
import ipaddress
import json
import struct
import sys


def read(path):
    data = open(path, 'rb').read()
    if len(data) < 24:
        return b'', '<', []
    endian = '<' if data[:4] in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1') else '>'
    recs, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack(endian + 'IIII', data[off:off + 16])[2]
        recs.append((data[off:off + 16], data[off + 16:off + 16 + incl]))
        off += 16 + incl
    return data[:24], endian, recs


def write(path, header, recs):
    with open(path, 'wb') as f:
        f.write(header or struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for h, fr in recs:
            f.write(h + fr)


def ipv4(frame):
    """(src, dst, l4 offset, proto) of an untagged or single-tagged IPv4 frame, or None."""
    off = 12
    et = int.from_bytes(frame[off:off + 2], 'big')
    if et == 0x8100:
        off += 4
        et = int.from_bytes(frame[off:off + 2], 'big')
    off += 2
    if et != 0x0800 or len(frame) < off + 20:
        return None
    ihl = (frame[off] & 0x0F) * 4
    return (ipaddress.IPv4Address(frame[off + 12:off + 16]), ipaddress.IPv4Address(frame[off + 16:off + 20]),
            off + ihl, frame[off + 9])


def cmd_split(inp, prefix, inside, outside):
    net = ipaddress.ip_network(prefix)
    header, _, recs = read(inp)
    a, b = [], []
    for r in recs:
        ip = ipv4(r[1])
        (a if ip and ip[1] in net else b).append(r)
    write(inside, header, a)
    write(outside, header, b)
    print('%d %d' % (len(a), len(b)))


def cmd_ecmp(prefix, specs):
    net = ipaddress.ip_network(prefix)
    flows, per_port = {}, {}
    for spec in specs:
        port, path = spec.split('=', 1)
        per_port[port] = 0
        for _, fr in read(path)[2]:
            ip = ipv4(fr)
            if not ip or ip[1] not in net:
                continue
            per_port[port] += 1
            src, dst, l4, proto = ip
            sport = dport = qp = 0
            if proto == 17 and len(fr) >= l4 + 8:
                sport, dport = struct.unpack('>HH', fr[l4:l4 + 4])
                if dport == 4791 and len(fr) >= l4 + 20:
                    qp = int.from_bytes(fr[l4 + 13:l4 + 16], 'big')
            key = '%s>%s:%d>%d/qp%d' % (src, dst, sport, dport, qp)
            member = '%s@%s' % (port, fr[0:6].hex(':'))
            flows.setdefault(key, set()).add(member)
    members = sorted({m for s in flows.values() for m in s})
    split = {k: sorted(v) for k, v in flows.items() if len(v) > 1}
    print(json.dumps({'flows': len(flows), 'members': members, 'split_flows': split, 'per_port': per_port}))


def cmd_merge(out, inputs):
    header, recs = b'', []
    for p in inputs:
        h, _, r = read(p)
        header = header or h
        recs += r
    write(out, header, recs)
    print(len(recs))


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'split':
        cmd_split(*args)
    elif cmd == 'ecmp':
        cmd_ecmp(args[0], args[1:])
    elif cmd == 'merge':
        cmd_merge(args[0], args[1:])
    else:
        sys.exit(__doc__)
