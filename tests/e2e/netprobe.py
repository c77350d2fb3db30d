#!/usr/bin/python3
"""Traffic endpoints for the e2e tests, run inside the hosts' network namespaces (root needed for
the raw ICMP socket). No ping/nc/socat on the test machines, so this is the whole toolbox.

  ping DST COUNT [TIMEOUT_S]            ICMP echo; prints one line per reply with its TTL and a
                                        JSON summary last; exit 0 if every echo was answered
  udp-recv BIND_IP PORT N TIMEOUT_S OUT wait for N numbered datagrams (or the timeout), write a
                                        JSON summary to OUT (atomically), exit 0 if all arrived
                                        intact and in order
  udp-send DST PORT N SIZE              send N numbered datagrams of SIZE bytes, paced
"""
import json
import os
import select
import socket
import struct
import sys
import time


def csum(data):
    if len(data) % 2:
        data += b'\0'
    s = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping(dst, count, timeout=2.0):
    sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident = os.getpid() & 0xFFFF
    ttls, lost = [], 0
    for seq in range(1, count + 1):
        payload = struct.pack('!d', time.time()) + bytes(range(48))
        hdr = struct.pack('!BBHHH', 8, 0, 0, ident, seq)
        pkt = struct.pack('!BBHHH', 8, 0, csum(hdr + payload), ident, seq) + payload
        sock.sendto(pkt, (dst, 0))
        deadline = time.time() + timeout
        got = None
        while got is None and time.time() < deadline:
            r, _, _ = select.select([sock], [], [], max(0.0, deadline - time.time()))
            if not r:
                break
            data, addr = sock.recvfrom(2048)
            ihl = (data[0] & 0x0F) * 4
            typ, _, _, rid, rseq = struct.unpack('!BBHHH', data[ihl:ihl + 8])
            # Only our echo reply counts; the raw socket also sees other ICMP.
            if typ == 0 and rid == ident and rseq == seq and addr[0] == dst and data[ihl + 8:] == payload:
                got = data[8]  # IPv4 TTL of the reply as it arrived here
        if got is None:
            lost += 1
            print('seq=%d no reply' % seq)
        else:
            ttls.append(got)
            print('%d bytes from %s: icmp_seq=%d ttl=%d' % (len(payload) + 8, dst, seq, got))
        time.sleep(0.2)
    print(json.dumps({'sent': count, 'received': len(ttls), 'lost': lost, 'ttls': ttls}))
    return 0 if lost == 0 else 1


def pattern(i, size):
    head = struct.pack('!I', i)
    body = bytes((i * 7 + k) & 0xFF for k in range(size - 4))
    return head + body


def udp_recv(bind_ip, port, n, timeout, out):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((bind_ip, port))
    # Tell the script we are listening before the sender starts.
    open(out + '.ready', 'w').close()
    seen, corrupt, dup, reordered, last = set(), 0, 0, 0, -1
    deadline = time.time() + timeout
    while len(seen) < n and time.time() < deadline:
        r, _, _ = select.select([sock], [], [], max(0.0, deadline - time.time()))
        if not r:
            break
        data, _ = sock.recvfrom(65535)
        i = struct.unpack('!I', data[:4])[0]
        if data != pattern(i, len(data)):
            corrupt += 1
            continue
        if i in seen:
            dup += 1
        if i < last:
            reordered += 1
        last = max(last, i)
        seen.add(i)
    res = {'expected': n, 'received': len(seen), 'missing': n - len(seen), 'corrupt': corrupt,
           'duplicates': dup, 'reordered': reordered}
    with open(out + '.tmp', 'w') as f:
        json.dump(res, f)
    os.rename(out + '.tmp', out)
    print(json.dumps(res))
    return 0 if len(seen) == n and corrupt == 0 and dup == 0 else 1


def udp_send(dst, port, n, size):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(n):
        sock.sendto(pattern(i, size), (dst, port))
        # Paced (about 10k datagrams/s at most) so neither the kernel nor the af_packet rings
        # overflow on a busy test machine: this test is about correctness, not rate.
        if i % 20 == 19:
            time.sleep(0.002)
    print('sent %d datagrams of %d bytes to %s:%d' % (n, size, dst, port))
    return 0


if __name__ == '__main__':
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == 'ping':
        sys.exit(ping(a[0], int(a[1]), float(a[2]) if len(a) > 2 else 2.0))
    if cmd == 'udp-recv':
        sys.exit(udp_recv(a[0], int(a[1]), int(a[2]), float(a[3]), a[4]))
    if cmd == 'udp-send':
        sys.exit(udp_send(a[0], int(a[1]), int(a[2]), int(a[3])))
    sys.exit(__doc__)
