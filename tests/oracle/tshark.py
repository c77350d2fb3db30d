"""Wireshark's decoders as a third opinion for `check --tshark`: per frame, the IPv4 checksum
status, TTL / hop limit, and the BTH (opcode, destination QP, PSN) as its InfiniBand
dissector reads them."""

import shutil
import subprocess

from wire import ROCE_PORT

FIELDS = ['frame.number', 'ip.checksum.status', 'ip.ttl', 'ipv6.hlim',
          'infiniband.bth.opcode', 'infiniband.bth.destqp', 'infiniband.bth.psn', '_ws.malformed']


def run_tshark(path):
    """{frame number (1-based): {field: value}} for every frame of the pcap."""
    tshark = shutil.which('tshark') or '/usr/bin/tshark'
    # rpcordma: Wireshark's RPC-over-RDMA heuristic claims SEND payloads and throws
    # "Malformed" on short ones; it is not RoCE's business.
    cmd = [tshark, '-n', '-r', path, '-d', 'udp.port==%d,infiniband' % ROCE_PORT,
           '--disable-protocol', 'rpcordma',
           '-o', 'ip.check_checksum:TRUE', '-T', 'fields', '-E', 'separator=/t',
           '-E', 'occurrence=f']
    for fl in FIELDS:
        cmd += ['-e', fl]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise SystemExit('tshark failed (rc %d): %s' % (r.returncode, r.stderr.strip()[-500:]))
    res = {}
    for line in r.stdout.splitlines():
        cols = line.split('\t')
        cols += [''] * (len(FIELDS) - len(cols))
        res[int(cols[0])] = dict(zip(FIELDS[1:], cols[1:]))
    return res


def compare(f, t, bth_of):
    """Errors of tshark's view `t` of parsed frame f against the own parser and, for the BTH,
    scapy's (bth_of(f) returns scapy's BTH layer or None)."""
    errs = []
    if t['_ws.malformed']:
        errs.append('tshark: malformed packet')
    if f.ipver == 4 and t['ip.checksum.status'] != '1':
        errs.append('tshark: IPv4 checksum status %r (1 = good)' % t['ip.checksum.status'])
    tt = t['ip.ttl'] if f.ipver == 4 else t['ipv6.hlim']
    if tt != str(f.ttl):
        errs.append('tshark: TTL/hop limit %r, own parser %d' % (tt, f.ttl))
    if f.roce:
        sb = bth_of(f)
        if sb is None:
            errs.append('scapy does not see a BTH')
        else:
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
    return errs
