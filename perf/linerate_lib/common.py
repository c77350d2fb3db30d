"""What every part of perf/linerate shares: the Failure that ends a run with exit status 1,
the "linerate: " log line on stdout, and how figures are divided and printed (a missing or
nan figure prints as "nan", a ratio with a nan or zero side is nan)."""

import math

NAN = float('nan')


class Failure(Exception):
    """A run failed: message printed, exit 1."""


def log(msg):
    print('linerate: ' + msg, flush=True)


def fmt(x, spec='%.3f'):
    return 'nan' if x is None or math.isnan(x) else spec % x


def ratio(a, b):
    return a / b if b and not math.isnan(a) and not math.isnan(b) else NAN
