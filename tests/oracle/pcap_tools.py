"""pcap files for the tests, read and written with scapy (RawPcapReader / PcapWriter, so frames
come back byte-exact, truncated and empty ones included), and the small commands the
integration scripts use on them:

  count  FILE                       number of frames
  empty  FILE                       a valid pcap with no frames (an rx side that delivers nothing)
  split  IN PREFIX INSIDE OUTSIDE   frames whose IP destination is inside PREFIX to INSIDE, all
                                    others to OUTSIDE; prints "inside outside"
  merge  OUT IN...                  the frames of several pcaps, concatenated
  ecmp   PREFIX PORT=FILE...        for frames to PREFIX in each port's output, map every flow
                                    (src, dst, UDP sport, dport, BTH dest QP) to the (port, dst
                                    MAC) it left on; prints JSON {flows, members, split_flows,
                                    per_port}
"""

import ipaddress
import json

from scapy.error import Scapy_Exception
from scapy.utils import PcapWriter, RawPcapReader

from wire import parse_frame

DLT_EN10MB = 1


class Record:
    """One frame of a pcap with its capture time (seconds and fraction in the file's units)."""

    __slots__ = ('data', 'sec', 'frac')

    def __init__(self, data, sec, frac):
        self.data, self.sec, self.frac = data, sec, frac


def read_records(path):
    """(nano, [Record]) of a pcap or pcapng file of Ethernet frames."""
    try:
        rdr = RawPcapReader(path)
    except (OSError, Scapy_Exception) as e:
        raise SystemExit('%s: cannot read as pcap: %s' % (path, e))
    nano = getattr(rdr, 'nano', False)
    recs = []
    try:
        lt = getattr(rdr, 'linktype', DLT_EN10MB)
        for data, meta in rdr:
            lt = getattr(meta, 'linktype', lt)    # pcapng: per interface
            if lt != DLT_EN10MB:
                raise SystemExit('%s: link type %s is not Ethernet' % (path, lt))
            if hasattr(meta, 'sec'):
                recs.append(Record(bytes(data), meta.sec, meta.usec))
            else:                                 # pcapng: one timestamp in tsresol units
                ts = (meta.tshigh << 32) | meta.tslow
                recs.append(Record(bytes(data), ts // meta.tsresol,
                                   (ts % meta.tsresol) * 1000000 // meta.tsresol))
    finally:
        rdr.close()
    return nano, recs


def read_pcap(path):
    """List of raw frame bytes (pcap or pcapng, Ethernet link type)."""
    return [r.data for r in read_records(path)[1]]


def write_records(path, recs, nano=False):
    w = PcapWriter(path, linktype=DLT_EN10MB, nano=nano)
    try:
        w.write_header(None)       # also when there is no frame at all
        for r in recs:
            w.write_packet(r.data, sec=r.sec, usec=r.frac)
    finally:
        w.close()


def write_pcap(path, frames, t0=1700000000, step_us=1):
    """Frames (bytes) to a microsecond pcap, one step_us apart from t0, written byte-exact."""
    recs = []
    t = 0
    for fr in frames:
        recs.append(Record(bytes(fr), t0 + t // 1000000, t % 1000000))
        t += step_us
    write_records(path, recs)


# --------------------------------------------------------------------------------------
# commands


def cmd_count(a):
    print(len(read_records(a.file)[1]))
    return 0


def cmd_empty(a):
    write_records(a.file, [])
    return 0


def _dst(data):
    """IP destination of a frame, or None (a frame the parser rejects has none)."""
    return parse_frame(data, allow_stacked=True).dst


def cmd_split(a):
    net = ipaddress.ip_network(a.prefix, strict=False)
    nano, recs = read_records(a.inp)
    inside, outside = [], []
    for r in recs:
        d = _dst(r.data)
        (inside if d is not None and d.version == net.version and d in net else outside).append(r)
    write_records(a.inside, inside, nano)
    write_records(a.outside, outside, nano)
    print('%d %d' % (len(inside), len(outside)))
    return 0


def cmd_merge(a):
    nano, recs = None, []
    for p in a.inputs:
        n, r = read_records(p)
        if nano is None:
            nano = n
        elif n != nano:                  # keep one precision: convert the fraction
            for x in r:
                x.frac = x.frac * 1000 if nano else x.frac // 1000
        recs += r
    write_records(a.out, recs, bool(nano))
    print(len(recs))
    return 0


def cmd_ecmp(a):
    net = ipaddress.ip_network(a.prefix, strict=False)
    flows, per_port = {}, {}
    for spec in a.ports:
        if '=' not in spec:
            raise SystemExit('bad PORT=FILE: %r' % spec)
        port, path = spec.split('=', 1)
        per_port[port] = 0
        for fr in read_pcap(path):
            f = parse_frame(fr, allow_stacked=True)
            if f.dst is None or f.dst.version != net.version or f.dst not in net:
                continue
            per_port[port] += 1
            sport, dport = (f.udp[0], f.udp[1]) if f.udp else (0, 0)
            qp = f.bth['dqpn'] if f.roce else 0
            key = '%s>%s:%d>%d/qp%d' % (f.src, f.dst, sport, dport, qp)
            member = '%s@%s' % (port, fr[0:6].hex(':'))
            flows.setdefault(key, set()).add(member)
    members = sorted({m for s in flows.values() for m in s})
    split = {k: sorted(v) for k, v in flows.items() if len(v) > 1}
    print(json.dumps({'flows': len(flows), 'members': members, 'split_flows': split,
                      'per_port': per_port}))
    return 0


def add_commands(sub):
    """The subcommands above, on an argparse subparsers object."""
    p = sub.add_parser('count', help='number of frames in a pcap')
    p.add_argument('file')
    p.set_defaults(func=cmd_count)
    p = sub.add_parser('empty', help='write a valid pcap with no frames')
    p.add_argument('file')
    p.set_defaults(func=cmd_empty)
    p = sub.add_parser('split', help='split a pcap by IP destination prefix', description=(
        'Write the frames whose IP destination is inside PREFIX to INSIDE and all others '
        '(other prefixes, other IP version, not IP, malformed) to OUTSIDE; print both counts.'))
    p.add_argument('inp', metavar='IN')
    p.add_argument('prefix', metavar='PREFIX')
    p.add_argument('inside', metavar='INSIDE')
    p.add_argument('outside', metavar='OUTSIDE')
    p.set_defaults(func=cmd_split)
    p = sub.add_parser('merge', help='concatenate the frames of several pcaps')
    p.add_argument('out', metavar='OUT')
    p.add_argument('inputs', metavar='IN', nargs='+')
    p.set_defaults(func=cmd_merge)
    p = sub.add_parser('ecmp', help='which (port, dst MAC) every flow to PREFIX left on',
                       description=(
                           'For frames to PREFIX in each port\'s output, map every flow (src, dst, '
                           'UDP sport, dport, BTH dest QP) to the (port, dst MAC) it left on; print '
                           'JSON {flows, members, split_flows, per_port}.'))
    p.add_argument('prefix', metavar='PREFIX')
    p.add_argument('ports', metavar='PORT=FILE', nargs='+')
    p.set_defaults(func=cmd_ecmp)
