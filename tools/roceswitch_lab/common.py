"""The names every module of roceswitch-lab shares: the program's name, the checkout it belongs to,
the lab's tunables and its two errors (exit 2 and exit 1)."""

import os


HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tools/, beside the package
REPO = os.path.dirname(HERE)
PROG = 'roceswitch-lab'


SERIES_SMOOTH_MS = 50   # rates in plots are averaged over this much time at least
RUN_SLACK_S = 60        # the timeout of a run past its duration
REALTIME_WARN = 0.93
CPU_SHARE_WARN = 0.9


class UsageError(Exception):
    """Bad usage or bad input: exit 2, nothing run."""


class RunError(Exception):
    """A run failed: exit 1."""
