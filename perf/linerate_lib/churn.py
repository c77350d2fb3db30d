"""roceswitch under route churn (perf/linerate --churn): the switch run with a control
socket while a thread, pinned to the control plane's CPU, sends single-op route updates at
a fixed rate through churn() of perf/route_install (loaded from the file beside
perf/linerate); the run's figures come from the switch's once-a-second samples taken while
the churn ran, and any error on the control socket fails the run."""

import json
import os
import socket
import subprocess
import threading
import time

from .common import Failure, log
from .procs import EAL_COMMON, remove_runtime_dir, stop, tail
from .roceswitch import switch_figures

CHURN_CPU = 0          # the main lcore's CPU (--lcores=0@0,1@1): the control plane's
CHURN_BACKSTOP_S = 30  # the churn run's --duration is the run's + this: it stops on SIGINT


def load_route_install():
    """perf/route_install as a module (for churn()); the file has no .py extension."""
    import importlib.machinery
    import importlib.util
    perf = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # perf/linerate_lib/..
    path = os.path.join(perf, 'route_install')
    loader = importlib.machinery.SourceFileLoader('rs_route_install', path)
    spec = importlib.util.spec_from_loader('rs_route_install', loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    if not callable(getattr(mod, 'churn', None)) or not hasattr(mod, 'Client'):
        raise ImportError('%s has no churn() or Client' % path)
    return mod


def churn_thread(ri, sock, rate, seconds, seed, deadline, out):
    """Body of the churn thread: pinned to the control plane's CPU (so the client does not
    take the worker's), reads the switch's clock (`counters` t_s) before and after churn()
    runs `seconds` at `rate`. Fills `out`: churn (churn()'s result), t0_s, t1_s, or error."""
    try:
        try:
            if CHURN_CPU in os.sched_getaffinity(0):
                os.sched_setaffinity(0, {CHURN_CPU})  # pid 0: this thread only
        except (AttributeError, OSError):
            pass
        cl = ri.Client(sock, deadline)
        try:
            out['t0_s'] = cl.call({'op': 'counters'})['t_s']
            out['churn'] = ri.churn(sock, rate, seconds, seed=seed, deadline=deadline,
                                    log_fn=lambda m: log('roceswitch with churn: ' + m))
            out['t1_s'] = cl.call({'op': 'counters'})['t_s']
        finally:
            cl.close()
    except Exception as e:  # noqa: BLE001 (any control error fails the run)
        out['error'] = '%s: %s' % (type(e).__name__, e)


def run_switch_churn(switch, conf, tag, duration, work, ri, rate, seed):
    """roceswitch with --control-socket, churned at `rate` single-op route updates a second
    from a thread for `duration` seconds from the moment its socket answers; then stopped
    (SIGINT). Mpps from its once-a-second samples taken while the churn ran, the first second
    left out as in run_switch. Returns (Mpps forwarded, Mpps received, description, churn()'s
    result with the churn window in the switch's clock)."""
    js = os.path.join(work, 'roceswitch-%s.json' % tag)
    logf = os.path.join(work, 'roceswitch-%s.log' % tag)
    sock = os.path.join(work, 'control-%s.sock' % tag)
    prefix = 'rs-linerate-%s-%d' % (tag, os.getpid())
    argv = [switch] + EAL_COMMON + ['--file-prefix', prefix,
                                    '--', '--config', conf,
                                    '--duration', '%g' % (duration + CHURN_BACKSTOP_S),
                                    '--control-socket', sock,
                                    '--stats-json', js, '--quiet', '--log-level', 'warn']
    out = {}
    rc, died = None, False
    try:
        with open(logf, 'w') as lf:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=lf,
                                    stderr=subprocess.STDOUT)
            try:
                limit = time.monotonic() + 60
                while True:
                    if proc.poll() is not None:
                        raise Failure('roceswitch exited (status %s) before serving its control '
                                      'socket; its output:\n%s' % (proc.returncode,
                                                                   tail(logf).rstrip()))
                    if os.path.exists(sock):
                        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                        try:
                            s.connect(sock)
                            break
                        except OSError:
                            pass
                        finally:
                            s.close()
                    if time.monotonic() > limit:
                        raise Failure('roceswitch did not open its control socket %s within 60 s'
                                      % sock)
                    time.sleep(0.02)
                deadline = time.monotonic() + duration + 60
                th = threading.Thread(target=churn_thread, name='churn', daemon=True,
                                      args=(ri, sock, rate, duration, seed, deadline, out))
                th.start()
                while th.is_alive() and time.monotonic() < deadline + 5:
                    th.join(0.5)
                if th.is_alive():
                    out.setdefault('error', 'the churn thread did not finish within %g s'
                                   % (duration + 65))
            finally:
                died = proc.poll() is not None
                rc = stop(proc, 15)
    finally:
        remove_runtime_dir(prefix)
    if 'error' in out:
        raise Failure('route churn at %g updates/s failed: %s%s'
                      % (rate, out['error'], '; roceswitch exited %s before it ended; its output:'
                         '\n%s' % (rc, tail(logf).rstrip()) if died else ''))
    if not os.path.exists(js) or os.path.getsize(js) == 0:
        raise Failure('roceswitch failed (exit %s); its output:\n%s' % (rc, tail(logf).rstrip()))
    if rc != 0:
        log('warning: roceswitch exited %s (counters not balanced?)' % rc)
    with open(js) as fh:
        j = json.load(fh)
    t0, t1 = out['t0_s'], out['t1_s']
    j['samples'] = [s for s in j.get('samples', []) if t0 <= s['t_s'] <= t1]
    tx, rx, line = switch_figures(j)
    res = dict(out['churn'], window_s=[t0, t1])
    return tx, rx, line, res

