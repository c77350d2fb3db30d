"""What every part of perf/route_install shares: its name and directory, its failures,
its log lines and the formatting of its figures."""

import math
import os
import sys


PROG = 'perf/route_install'
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # perf/ (route_install_lib/..)

NAN = float('nan')


class Failure(Exception):
    """The run failed: message printed, exit 1."""


class Timeout(Failure):
    pass


class SwitchError(Failure):
    """The switch refused a request."""

    def __init__(self, reason, field='', index=None):
        super().__init__('%s: %s' % (field, reason) if field else reason)
        self.reason, self.field, self.index = reason, field, index


def log(msg):
    print('route_install: ' + msg, flush=True)


def note(msg):
    print('route_install: ' + msg, file=sys.stderr, flush=True)


def fmt_int(x):
    return 'nan' if x is None or (isinstance(x, float) and math.isnan(x)) else '%d' % round(x)


def fmt_num(x, spec='%.1f'):
    return 'nan' if x is None or (isinstance(x, float) and math.isnan(x)) else spec % x


def percentile(values, q):
    """Nearest-rank percentile (q in 0..100) of a list; nan when empty."""
    if not values:
        return NAN
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(math.ceil(q / 100.0 * len(s))) - 1))]
