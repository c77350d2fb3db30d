"""roceswitch as perf/linerate drives it: finding the binary in a build directory, asking it
which routing policies it has, having it check a configuration, running it for a number of
seconds with --stats-json, and turning that JSON into figures (packets sent a second after
the first second, from its once-a-second samples, and what it counted besides)."""

import json
import os
import re
import subprocess
import sys

from .common import Failure, log
from .procs import EAL_COMMON, remove_runtime_dir, run_bounded, tail


def find_switch(build):
    for sub in ('app', 'control'):
        p = os.path.join(build, sub, 'roceswitch')
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def registered_policies(switch):
    """The routing policy names `roceswitch -- --help-policies` lists (None if it cannot)."""
    try:
        r = subprocess.run([switch, '--', '--help-policies'], capture_output=True, text=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0 or 'routing policies' not in r.stdout:
        return None
    return [m.group(1) for m in re.finditer(r'^([a-z][a-z0-9_]*)\b', r.stdout, re.M)
            if m.group(1) != 'routing']


def check_config(switch, conf, work):
    logf = os.path.join(work, 'check-config.log')
    with open(logf, 'w') as out:
        rc, timed_out = run_bounded([switch, '--', '--config', conf, '--check-config'], 60,
                                    stdout=out)
    text = tail(logf, 1000)
    if rc != 0 or timed_out:
        raise Failure('%s rejected %s (exit %s%s):\n%s' % (switch, conf, rc,
                      ', timed out' if timed_out else '', text.rstrip()))
    sys.stdout.write(text)
    sys.stdout.flush()


def switch_figures(j):
    """(tx Mpps, rx Mpps, description) from a --stats-json file's contents."""
    el = j['elapsed_s']
    tx = sum(p['tx_packets'] for p in j['ports'])
    rx = sum(p['rx_packets'] for p in j['ports'])
    # Rates as testpmd's are taken: over the one-second samples, the first second (start-up)
    # left out; the whole-run average is printed too.
    s = j.get('samples', [])
    whole_tx, whole_rx = tx / el / 1e6, rx / el / 1e6
    if len(s) >= 3:
        span = s[-1]['t_s'] - s[0]['t_s']
        rate_tx = (s[-1]['sent'] - s[0]['sent']) / span / 1e6
        rate_rx = (s[-1]['received'] - s[0]['received']) / span / 1e6
        how = 'after the first second, over %d one-second samples; whole run %.3f Mpps' % (
            len(s) - 1, whole_tx)
    else:
        rate_tx, rate_rx, how = whole_tx, whole_rx, 'whole run'
    t = j['totals']
    drops = ({k: v for k, v in j['drops'].items() if v} if isinstance(j['drops'], dict)
             else j['drops'])
    marked = sum(q.get('ecn_marked', 0) for p in j['ports'] for q in p['queues'])
    pfc = sum(p.get('pfc', {}).get('frames_sent', 0) for p in j['ports'])
    line = ('received=%d transmitted=%d (%.3f Mpps %s) dropped=%d queued=%d in %.2f s; '
            'CE marked %d, PFC frames %d; drops: %s'
            % (rx, tx, rate_tx, how, t['dropped'], t['queued'], el, marked, pfc, drops or 'none'))
    return rate_tx, rate_rx, line


def run_switch(switch, conf, tag, duration, work):
    """One roceswitch run; returns (Mpps forwarded, Mpps received, description)."""
    js = os.path.join(work, 'roceswitch-%s.json' % tag)
    logf = os.path.join(work, 'roceswitch-%s.log' % tag)
    prefix = 'rs-linerate-%s-%d' % (tag, os.getpid())
    argv = [switch] + EAL_COMMON + ['--file-prefix', prefix,
                                    '--', '--config', conf, '--duration', '%g' % duration,
                                    '--stats-json', js, '--quiet', '--log-level', 'warn']
    try:
        with open(logf, 'w') as out:
            rc, timed_out = run_bounded(argv, duration + 60, stdout=out)
    finally:
        remove_runtime_dir(prefix)
    if timed_out:
        log('warning: %s ran past %g s and was stopped' % (switch, duration + 60))
    if not os.path.exists(js) or os.path.getsize(js) == 0:
        raise Failure('roceswitch failed (exit %s); its output:\n%s' % (rc, tail(logf).rstrip()))
    if rc != 0:
        log('warning: roceswitch exited %s (counters not balanced?)' % rc)
    with open(js) as fh:
        return switch_figures(json.load(fh))

