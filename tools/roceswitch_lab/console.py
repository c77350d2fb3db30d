"""What roceswitch-lab prints while it runs: progress lines and the live ETA line (Out), and the
formats of its numbers, byte counts and durations."""

import math
import sys


# --------------------------------------------------------------------------------------
# output


class Out:
    """Progress to stdout, or to stderr when stdout carries --json; a live line on a terminal."""

    def __init__(self, json_mode):
        self.stream = sys.stderr if json_mode else sys.stdout
        self.live = self.stream.isatty()
        self.live_len = 0

    def line(self, text=''):
        self.clear_live()
        self.stream.write(text + '\n')
        self.stream.flush()

    def status(self, text):
        if not self.live:
            return
        pad = max(0, self.live_len - len(text))
        self.stream.write('\r' + text + ' ' * pad)
        self.stream.flush()
        self.live_len = len(text)

    def clear_live(self):
        if self.live and self.live_len:
            self.stream.write('\r' + ' ' * self.live_len + '\r')
            self.live_len = 0


def fmt_num(x, spec='%.3f'):
    return 'n/a' if x is None or (isinstance(x, float) and math.isnan(x)) else spec % x


def fmt_bytes(n):
    if n is None:
        return 'n/a'
    for unit, k in (('MB', 1e6), ('KB', 1e3)):
        if n >= k:
            return '%.1f%s' % (n / k, unit)
    return '%dB' % n


def fmt_secs(s):
    s = max(0, int(round(s)))
    return '%dm%02ds' % (s // 60, s % 60) if s >= 60 else '%ds' % s
