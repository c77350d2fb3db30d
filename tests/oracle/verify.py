"""`check` (a switch's output pcap against its input pcap) and `icrc` (the ICRC of every frame).

Each output frame is parsed by the oracle's own parser, matched to the input frame it came from
and judged by checks.py; the ICRC is recomputed by the own code and, for IPv4, by
scapy.contrib.roce; `--tshark` adds Wireshark's decoders as a third opinion.
"""

import tshark
from checks import (compare_macs, compare_routed, icrc_verdict, match_key, parse_dmac_map,
                    scapy_bth_of)
from pcap_tools import read_pcap
from wire import mac_bytes, parse_frame


def _index_input(inp):
    """{match key: [[input index, frame, seen]]} of the well-formed IP input frames, and the
    number of input frames left out."""
    index, skipped = {}, 0
    for i, fr in enumerate(inp):
        f = parse_frame(fr)
        if f.err is not None or not f.is_ip:
            skipped += 1
            continue
        index.setdefault(match_key(f), []).append([i, f, False])
    return index, skipped


class _Tally:
    def __init__(self):
        self.ok = self.bad = self.ignored = self.ce_marked = self.roce = self.tshark = 0
        self.fails = []


def _judge(a, i, fr, index, smac, dmap, ts, use_scapy, n):
    """Errors of output frame i (0-based); None when the frame is ignored."""
    errs = []
    f = parse_frame(fr)
    if f.ipver not in (4, 6) and a.ignore_non_ip and f.err in (None, 'non_ip', 'stacked_vlan'):
        return None
    if f.err is not None:
        errs.append('%s: %s' % (f.err, f.detail))
    if not (f.ipver in (4, 6) and f.err in (None, 'bad_ipv4_checksum')):
        return errs
    # --- the input frame it came from (the IPv4 checksum was verified by the parser)
    cand = index.get(match_key(f), [])
    orig = next((c for c in cand if not c[2]), None)
    if orig is None:
        errs.append('duplicate of input frame %d' % (cand[0][0] + 1) if cand else
                    'no matching input packet')
    else:
        orig[2] = True
        e, ce = compare_routed(f, orig[1], orig[0] + 1, a.ttl_dec, a.ignore_dscp)
        errs += e
        n.ce_marked += ce
    # --- MACs, size
    errs += compare_macs(f, smac, dmap)
    if a.min_frame and len(fr) < a.min_frame:
        errs.append('frame of %d bytes < %d' % (len(fr), a.min_frame))
    # --- ICRC
    if f.roce:
        n.roce += 1
        okc, msg = icrc_verdict(f, use_scapy=use_scapy)
        if not okc:
            errs.append(msg)
    # --- tshark vs own parser and scapy
    if ts is not None:
        t = ts.get(i + 1)
        if t is None:
            errs.append('tshark did not report this frame')
        else:
            n.tshark += 1
            errs += tshark.compare(f, t, scapy_bth_of)
    return errs


def cmd_check(a):
    inp = read_pcap(a.inp)
    out = read_pcap(a.out)
    smac = mac_bytes(a.smac) if a.smac else None
    dmap = parse_dmac_map(a.dmac_map)
    use_scapy = not a.no_scapy
    index, in_skipped = _index_input(inp)
    ts = tshark.run_tshark(a.out) if a.tshark else None

    n = _Tally()
    for i, fr in enumerate(out):
        errs = _judge(a, i, fr, index, smac, dmap, ts, use_scapy, n)
        if errs is None:
            n.ignored += 1
        elif errs:
            n.bad += 1
            n.fails.append('frame %d: %s' % (i + 1, '; '.join(errs)))
        else:
            n.ok += 1

    missing = sum(1 for lst in index.values() for c in lst if not c[2])
    n_seen = n.ok + n.bad
    if a.expect_count is not None and n_seen != a.expect_count:
        if n_seen < a.expect_count:
            n.fails.append('expected %d packets, got %d: %d missing counted as bad' %
                           (a.expect_count, n_seen, a.expect_count - n_seen))
            n.bad += a.expect_count - n_seen
        else:
            n.fails.append('expected %d packets, got %d: %d extra' % (a.expect_count, n_seen,
                                                                    n_seen - a.expect_count))
    for line in n.fails[:20]:
        print(line)
    if len(n.fails) > 20:
        print('... %d more failure lines' % (len(n.fails) - 20))
    print('info: %d out frames (%d RoCE), %d in frames (%d not indexed), %d input packets not seen '
          'in out, %d ECN CE-marked, %d non-IP ignored%s' %
          (len(out), n.roce, len(inp), in_skipped, missing, n.ce_marked, n.ignored,
           (', tshark checked %d' % n.tshark) if a.tshark else ''))
    print('roce_pcap check: %d packets ok, %d bad' % (n.ok, n.bad))
    return 1 if (n.bad or (a.expect_count is not None and n_seen != a.expect_count)) else 0


def cmd_icrc(a):
    frames = read_pcap(a.file)
    nv = ni = nn = 0
    for i, fr in enumerate(frames):
        f = parse_frame(fr, allow_stacked=True)
        if f.roce and f.err in (None, 'bad_ipv4_checksum'):
            ok, msg = icrc_verdict(f, use_scapy=not a.no_scapy)
            b = f.bth
            desc = 'IPv%d opcode 0x%02x qp 0x%06x psn %d' % (f.ipver, b['opcode'], b['dqpn'], b['psn'])
            if ok:
                nv += 1
                if not a.quiet:
                    print('frame %d: valid   %s, %s' % (i + 1, desc, msg))
            else:
                ni += 1
                print('frame %d: INVALID %s, %s' % (i + 1, desc, msg))
        elif f.err == 'malformed_bth':
            ni += 1
            print('frame %d: INVALID %s' % (i + 1, f.detail))
        else:
            nn += 1
            if not a.quiet:
                print('frame %d: not roce (%s)' % (i + 1, f.detail or (
                    'UDP dport %d' % f.udp[1] if f.udp else 'IP proto %s' % f.proto)))
    print('icrc: %d valid, %d invalid, %d not roce' % (nv, ni, nn))
    return 1 if ni else 0


def add_commands(sub):
    c = sub.add_parser('check', help="check a switch's output against its input", description=(
        'For every packet of OUT: IPv4/IPv6 and well-formed; IPv4 header checksum valid; matched to '
        'an input packet by (src, dst, UDP sport, PSN, dest QP) for RoCE, by (src, dst, proto, '
        'IP payload) otherwise; TTL/hop limit = input - ttl-dec; DSCP unchanged; ECN unchanged or '
        'ECT->CE; IP header otherwise unchanged; UDP header, BTH, payload and ICRC byte-identical; '
        'ICRC valid (own implementation, and scapy.contrib.roce for IPv4); MACs as given. '
        'Exit 0 if all pass, 1 otherwise.'))
    c.add_argument('--in', dest='inp', required=True, help='pcap sent into the switch')
    c.add_argument('--out', required=True, help='pcap captured from the switch')
    c.add_argument('--smac', help='expected source MAC of every output packet')
    c.add_argument('--dmac-map', action='append', metavar='PFX=MAC[,PFX=MAC...]',
                   help='expected destination MAC by destination prefix (longest match), repeatable')
    c.add_argument('--ttl-dec', type=int, default=1, help='expected TTL decrement (default 1)')
    c.add_argument('--expect-count', type=int, help='expected number of output packets; '
                   'missing ones count as bad')
    c.add_argument('--tshark', action='store_true', help='also decode OUT with tshark and compare')
    c.add_argument('--ignore-non-ip', action='store_true', help='skip non-IP frames (e.g. PFC) in OUT '
                   'instead of counting them bad')
    c.add_argument('--ignore-dscp', action='store_true', help='allow DSCP remarking')
    c.add_argument('--min-frame', type=int, default=0, help='flag output frames shorter than this '
                   '(e.g. 60); default 0 = off')
    c.add_argument('--no-scapy', action='store_true', help='skip the scapy ICRC cross-check (faster)')
    c.set_defaults(func=cmd_check)

    ic = sub.add_parser('icrc', help='verify the ICRC of every RoCE packet', description=(
        'Print, per frame, whether its RoCEv2 ICRC is valid (own implementation; IPv4 also '
        'cross-checked with scapy.contrib.roce). A UDP dport 4791 frame too short for BTH+ICRC '
        'counts as invalid. Exit 1 if any is invalid.'))
    ic.add_argument('file', help='pcap or pcapng')
    ic.add_argument('--quiet', '-q', action='store_true', help='print only invalid frames and the summary')
    ic.add_argument('--no-scapy', action='store_true', help='skip the scapy cross-check')
    ic.set_defaults(func=cmd_icrc)
