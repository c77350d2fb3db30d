"""The run of perf/route_install: --churn-only against a running switch, or the switch
started, benchmarked and stopped; the messages and the exit codes."""

import os
import shutil
import signal
import sys
import tempfile
import time

from .benchmark import benchmark
from .churn import churn
from .cli import parse_args
from .common import Failure, log
from .frames import linerate_module
from .perf_profile import Profiler
from .report import emit_json
from .switch import Switch, tail


def on_signal(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    deadline = time.monotonic() + a.timeout
    if a.churn_only is not None:
        try:
            res = churn(a.socket, a.churn, a.churn_only, a.mix, a.seed,
                        deadline=min(deadline, time.monotonic() + a.churn_only + 60), log_fn=log)
        except Failure as e:
            print('route_install: %s' % e, file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print('route_install: interrupted', file=sys.stderr)
            return 130
        if a.json:
            emit_json(a.json, {'churn': res})
        print('churn_updates_per_s=%d target=%g' % (round(res['updates_per_s']), a.churn))
        return 0
    if not (os.path.isfile(a.roceswitch) and os.access(a.roceswitch, os.X_OK)):
        print('route_install: no roceswitch at %s: build first (ninja -C build) or give '
              '--roceswitch PATH' % a.roceswitch, file=sys.stderr)
        return 2
    if a.profile:
        if shutil.which('perf') is None:
            print('route_install: --profile: perf not found (apt-get install linux-perf)',
                  file=sys.stderr)
            return 2
        os.makedirs(a.profile, exist_ok=True)
    work = tempfile.mkdtemp(prefix='rs-route-install.')
    if a.keep:
        log('files kept in %s' % work)
    sw, prof = None, None
    try:
        lr = linerate_module()
        sw = Switch(a, lr, work, deadline)
        if a.profile:
            prof = Profiler(sw.pid, a.profile)
        return benchmark(a, sw, prof, deadline)
    except Failure as e:
        print('route_install: %s' % e, file=sys.stderr)
        if sw is not None and sw.proc is not None and sw.proc.poll() is not None:
            print('route_install: roceswitch exited %s; its output:\n%s'
                  % (sw.proc.returncode, tail(sw.logf).rstrip()), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print('route_install: interrupted', file=sys.stderr)
        return 130
    finally:
        if prof is not None:
            prof.kill()
        if sw is not None:
            sw.stop()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
