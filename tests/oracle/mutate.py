"""`mutate`: a tiny reference "switch" in the oracle's own byte-level code (TTL decrement with
the IPv4 checksum fixed, MAC rewrite, ECN CE, DSCP remark, and on request a corrupted payload
byte or a stale checksum), used to self-test `check`: what it writes must pass or fail `check`
exactly as a correct or a broken switch would."""

from checks import lookup_dmac, parse_dmac_map
from pcap_tools import read_pcap, write_pcap
from wire import fix_ipv4_csum, mac_bytes, parse_frame


def _rewrite(a, i, fr, smac, dmap, corrupt):
    """The frame as the reference switch sends it, or None when it is not well-formed IP."""
    f = parse_frame(fr)
    if f.err is not None or f.ipver not in (4, 6):
        return None
    b = bytearray(fr)
    o = f.l3off
    if f.ipver == 4:
        b[o + 8] = (b[o + 8] - a.ttl_dec) & 0xFF
        if a.ce and (b[o + 1] & 3) in (1, 2):
            b[o + 1] |= 3
        if a.dscp is not None:
            b[o + 1] = (a.dscp << 2) | (b[o + 1] & 3)
        if not a.keep_checksum:
            b = bytearray(fix_ipv4_csum(bytes(b), o))
    else:
        b[o + 7] = (b[o + 7] - a.ttl_dec) & 0xFF
        if a.ce and ((b[o + 1] >> 4) & 3) in (1, 2):
            b[o + 1] |= 0x30
    if smac is not None:
        b[6:12] = smac
    if dmap:
        m = lookup_dmac(dmap, f.dst)
        if m is not None:
            b[0:6] = m
    if (i + 1) in corrupt:
        # flip one byte of the RoCE payload (or last byte of the IP payload)
        pos = o + f.ip_total - 5 if f.roce else o + f.ip_total - 1
        b[pos] ^= 0x01
    return bytes(b)


def cmd_mutate(a):
    frames = read_pcap(a.inp)
    smac = mac_bytes(a.smac) if a.smac else None
    dmap = parse_dmac_map(a.dmac_map)
    corrupt = set(a.flip_payload or [])
    out = []
    changed = 0
    for i, fr in enumerate(frames):
        r = _rewrite(a, i, fr, smac, dmap, corrupt)
        if r is not None:
            changed += 1
        out.append(fr if r is None else r)
    write_pcap(a.out, out)
    print('mutate: wrote %d frames to %s (%d IP frames rewritten, ttl-dec %d%s%s)' %
          (len(out), a.out, changed, a.ttl_dec, ', CE marked' if a.ce else '',
           ', flipped payload of frames %s' % sorted(corrupt) if corrupt else ''))
    return 0


def add_command(sub):
    mu = sub.add_parser('mutate', help='reference rewrite, to self-test check', description=(
        'Rewrite well-formed IP frames as a router would (TTL decrement with checksum fix, MACs), '
        'optionally mark CE or corrupt a payload byte; used to self-test `check`.'))
    mu.add_argument('--in', dest='inp', required=True)
    mu.add_argument('--out', required=True)
    mu.add_argument('--ttl-dec', type=int, default=1, help='default 1')
    mu.add_argument('--smac')
    mu.add_argument('--dmac-map', action='append', metavar='PFX=MAC[,PFX=MAC...]')
    mu.add_argument('--ce', action='store_true', help='set ECN CE on ECT packets')
    mu.add_argument('--dscp', type=int, help='remark DSCP (IPv4)')
    mu.add_argument('--flip-payload', type=int, action='append', metavar='FRAME',
                    help='flip the low bit of the last byte before the ICRC (RoCE) or of the last '
                    'IP payload byte, in this 1-based frame (repeatable)')
    mu.add_argument('--keep-checksum', action='store_true', help='do not fix the IPv4 checksum')
    mu.set_defaults(func=cmd_mutate)
