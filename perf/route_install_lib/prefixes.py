"""The routes perf/route_install installs: seeded, duplicate-free IPv4 and IPv6 prefixes
shaped as a fabric's (long prefixes clustered, so the tbl8 groups last), and the
address ranges that carry no traffic."""

import ipaddress
import re

from .common import Failure


V4_EXCLUDED_FIRST_OCTETS = {0, 10, 127}       # 10/8 carries the traffic; 224+ is not unicast
CHURN_V4 = (0xC6120000, 15)                   # 198.18.0.0/15
CHURN_V6 = (0x20010002 << 96, 48)             # 2001:2::/48
BARRIER_V4 = '198.19.255.255/32'              # the barrier transaction's prefix (churn range)
TBL8_GROUPS = 4096                            # RouteLimits::v4_tbl8 / v6_tbl8


class Exhausted(Failure):
    pass


def parse_depths(text, maxbits):
    """'16-32' or '24' or '16,24,32' -> sorted list of depths."""
    out = set()
    for part in text.split(','):
        m = re.fullmatch(r'\s*(\d+)\s*(?:-\s*(\d+)\s*)?', part)
        if not m:
            raise ValueError('%r: expected DEPTH, LOW-HIGH or a list of them' % text)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) else lo
        if not 1 <= lo <= hi <= maxbits:
            raise ValueError('%r: depths run from 1 to %d' % (text, maxbits))
        out.update(range(lo, hi + 1))
    return sorted(out)


def v6_level_bits(d):
    """The prefix length above rte_lpm6's level holding a /d's last bit (0: tbl24)."""
    return 0 if d <= 24 else 24 + 8 * ((d - 25) // 8)


class PrefixGen:
    """Seeded, duplicate-free prefixes of one family (see DESCRIPTION for their shape)."""

    FILL = 0.75  # a depth takes no more once this share of its room is used (sampling stays cheap)

    def __init__(self, rng, v6, depths, clusters):
        self.rng, self.v6, self.depths = rng, v6, list(depths)
        self.bits = 128 if v6 else 32
        self.used = set()
        self.count = {d: 0 for d in self.depths}
        self.tbl8 = set()
        if v6:
            sites = set()
            while len(sites) < 4:
                s = (0x2000 << 16 | rng.getrandbits(29)) & 0xFFFFFFFF   # 2000::/3
                if s >> 16 != 0x2001 or (s & 0xFFFF) != 0x0002:       # not the churn range
                    sites.add(s)
            sites = sorted(sites)
            self.trunks = [rng.choice(sites) << 96 | rng.getrandbits(96) for _ in range(clusters)]
        else:
            subnets = set()
            while len(subnets) < clusters:
                subnets.add(self._random_v4() >> 8)
            self.subnets = sorted(subnets)
        self.clusters = clusters
        self.room = {d: self._room(d) for d in self.depths}

    def _random_v4(self):
        while True:
            a = self.rng.getrandbits(32)
            first = a >> 24
            if first < 224 and first not in V4_EXCLUDED_FIRST_OCTETS and a >> 17 != CHURN_V4[0] >> 17:
                return a

    def _room(self, d):
        if self.v6:
            if self.clusters and d > 24:
                return self.clusters * (1 << (d - v6_level_bits(d)))
            return 1 << max(d - 3, 0)
        if self.clusters and d > 24:
            return self.clusters * (1 << (d - 24))
        return int((1 << d) * 218 / 256)

    def _draw(self, d):
        rng, bits = self.rng, self.bits
        if self.v6:
            if self.clusters and d > 24:
                top = v6_level_bits(d)
                t = rng.choice(self.trunks)
                a = (t >> (128 - top) << (128 - top)) | rng.getrandbits(d - top) << (128 - d)
            else:
                a = (0x2000 << 112 | rng.getrandbits(125)) >> (128 - d) << (128 - d)
            return a
        if self.clusters and d > 24:
            return rng.choice(self.subnets) << 8 | rng.getrandbits(d - 24) << (32 - d)
        return self._random_v4() >> (bits - d) << (bits - d)

    def take(self):
        """One new prefix: (address as int, depth)."""
        while True:
            open_ = [d for d in self.depths if self.count[d] < self.room[d] * self.FILL]
            if not open_:
                raise Exhausted('no room left for more IPv%d prefixes of depths %s'
                                % (6 if self.v6 else 4, depth_text(self.depths)))
            d = self.rng.choice(open_)
            for _ in range(64):
                a = self._draw(d)
                if (a, d) not in self.used:
                    break
            else:
                self.count[d] = self.room[d]  # crowded: close this depth
                continue
            self.used.add((a, d))
            self.count[d] += 1
            self._count_tbl8(a, d)
            return a, d

    def _count_tbl8(self, a, d):
        if d <= 24:
            return
        if not self.v6:
            self.tbl8.add(a >> 8)
            return
        for level in range(1, (d - 24 + 7) // 8 + 1):
            k = 24 + 8 * (level - 1)
            self.tbl8.add((k, a >> (128 - k)))


def depth_text(depths):
    out, run = [], []
    for d in depths + [None]:
        if run and (d is None or d != run[-1] + 1):
            out.append('%d' % run[0] if len(run) == 1 else '%d-%d' % (run[0], run[-1]))
            run = []
        if d is not None:
            run.append(d)
    return ','.join(out)


def prefix_text(v6, a, d):
    if v6:
        return '%s/%d' % (ipaddress.IPv6Address(a).compressed, d)
    return '%d.%d.%d.%d/%d' % (a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255, d)


class Route:
    __slots__ = ('v6', 'prefix', 'group')

    def __init__(self, v6, prefix, group):
        self.v6, self.prefix, self.group = v6, prefix, group


def make_routes(gens, n4, n6, groups, rng):
    """n4 IPv4 and n6 IPv6 routes, shuffled together, each to a random group."""
    out = []
    for v6, n in ((False, n4), (True, n6)):
        g = gens[v6]
        for _ in range(n):
            a, d = g.take()
            out.append(Route(v6, prefix_text(v6, a, d), rng.choice(groups)))
    rng.shuffle(out)
    return out


def split_mix(n, mix):
    a, b = mix
    n4 = int(round(n * a / (a + b))) if a + b else 0
    return n4, n - n4
