"""The lab tests' judging of a run's --json (the python snippets in tests/lab/*.sh): each
claim printed as ok or FAIL, and the exit status from them."""
import math
import sys

fail = []


def check(ok, what):
    print('    %s %s' % ('ok  ' if ok else 'FAIL', what))
    if not ok:
        fail.append(what)


def num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def done():
    sys.exit(1 if fail else 0)
