"""The roceswitch binary: finding it, asking it for its routing policies, having it check a run's
config, and running it once on emulated hosts (bounded, with its worker's CPU share measured)."""

import json
import os
import re
import signal
import subprocess
import time

from .common import REPO, RUN_SLACK_S, RunError, UsageError


# --------------------------------------------------------------------------------------
# the roceswitch binary


def find_switch(build):
    p = os.path.join(build, 'app', 'roceswitch')
    if not (os.path.isfile(p) and os.access(p, os.X_OK)):
        raise UsageError('no roceswitch binary at %s: build it first (from %s: bash tools/build.sh '
                         'build), or name another build directory with --build' % (p, REPO))
    return p


def help_policies(switch):
    """The text of roceswitch -- --help-policies."""
    try:
        r = subprocess.run([switch, '--', '--help-policies'], capture_output=True, text=True,
                           timeout=60)
    except subprocess.TimeoutExpired:
        raise RunError('%s -- --help-policies did not answer within 60 s' % switch)
    if r.returncode != 0 or 'routing policies' not in r.stdout:
        raise RunError('%s -- --help-policies failed (exit %d):\n%s'
                       % (switch, r.returncode, (r.stdout + r.stderr).strip()[-2000:]))
    return r.stdout


def registered_policies(text):
    """{policy name: [parameter names]} from --help-policies."""
    pols = {}
    current = None
    for line in text.splitlines():
        m = re.match(r'^([a-z][a-z0-9_]*)\b', line)
        if m and not line.startswith('routing policies'):
            current = m.group(1)
            pols[current] = []
            continue
        m = re.match(r'^\s+- ([a-z][a-z0-9_]*) \(', line)
        if m and current:
            pols[current].append(m.group(1))
    return pols


# --------------------------------------------------------------------------------------
# one run


def remove_runtime_dir(prefix):
    """DPDK leaves an empty runtime directory per --file-prefix (with its telemetry socket in
    it when the process died of a signal); remove ours."""
    base = '/var/run/dpdk' if os.geteuid() == 0 else os.path.join(
        os.environ.get('XDG_RUNTIME_DIR', '/tmp'), 'dpdk')
    try:
        os.unlink(os.path.join(base, prefix, 'dpdk_telemetry.v2'))
    except OSError:
        pass
    try:
        os.rmdir(os.path.join(base, prefix))
    except OSError:
        pass


def tail(path, n=25):
    try:
        with open(path, errors='replace') as fh:
            return ''.join(fh.readlines()[-n:]).rstrip()
    except OSError as e:
        return str(e)


def check_config(switch, conf, source, what):
    try:
        r = subprocess.run([switch, '--', '--config', conf, '--check-config'],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise RunError('%s -- --check-config did not answer within 60 s' % switch)
    if r.returncode != 0:
        raise UsageError('roceswitch refused %s (written from %s for %s; exit %d):\n%s'
                         % (conf, source, what, r.returncode,
                            (r.stdout + r.stderr).strip()[-3000:]))


def thread_times(pid):
    """{tid: (ns on a CPU, ns runnable but waiting for one)} of a process's threads, from
    /proc/PID/task/TID/schedstat ({} where the kernel does not keep them)."""
    out = {}
    try:
        tids = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            with open('/proc/%d/task/%s/schedstat' % (pid, tid)) as fh:
                run, wait = fh.read().split()[:2]
            out[tid] = (int(run), int(wait))
        except (OSError, ValueError):
            pass
    return out


def worker_cpu_share(first, last):
    """The share of its runnable time the busiest thread (the polling worker, which is always
    runnable) spent on a CPU between two thread_times() samples; None without both."""
    best = None
    for tid, (run1, wait1) in last.items():
        if tid not in first:
            continue
        run, wait = run1 - first[tid][0], wait1 - first[tid][1]
        if run + wait > 0 and (best is None or run + wait > best[0] + best[1]):
            best = (run, wait)
    return best[0] / (best[0] + best[1]) if best else None


def stop_on_error(proc):
    """A run that failed or was interrupted: SIGINT (roceswitch stops and writes its stats), then
    SIGKILL if it does not end within 10 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def load_stats(files, rc):
    """The stats JSON a run wrote, or RunError saying why there is none."""
    if not os.path.exists(files['json']) or os.path.getsize(files['json']) == 0:
        raise RunError('roceswitch exited %d without writing %s; its output (%s):\n%s'
                       % (rc, files['json'], files['log'], tail(files['log'])))
    with open(files['json']) as fh:
        try:
            return json.load(fh)
        except ValueError as e:
            raise RunError('%s: not JSON (%s)' % (files['json'], e))


def run_switch(switch, conf, files, duration, series_ms, prefix, on_tick):
    """Runs roceswitch once, bounded by duration + RUN_SLACK_S; returns (exit code, wall s,
    the worker's CPU share over the run, or None)."""
    argv = [switch, '--no-pci', '--file-prefix', prefix, '-l', '0-1', '--',
            '--config', conf, '--duration', '%g' % duration, '--quiet',
            '--stats-json', files['json'], '--series-ms', '%g' % series_ms,
            '--series', files['series']]
    for k in ('json', 'series'):
        if os.path.exists(files[k]):
            os.unlink(files[k])
    start = time.monotonic()
    limit = duration + RUN_SLACK_S
    first = last = None   # thread CPU times, from 0.3 s in (after start-up) to the last tick
    with open(files['log'], 'w') as log:
        log.write('$ %s\n' % ' '.join(argv))
        log.flush()
        try:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        except OSError as e:
            raise RunError('cannot run %s: %s' % (switch, e.strerror or e))
        try:
            while True:
                try:
                    proc.wait(timeout=0.5)
                    break
                except subprocess.TimeoutExpired:
                    pass
                el = time.monotonic() - start
                if 0.3 <= el <= duration + 1:
                    t = thread_times(proc.pid)
                    if t:
                        first, last = (first or t), t
                on_tick(el)
                if el > limit:
                    proc.send_signal(signal.SIGINT)   # a DPDK program's clean stop
                    try:
                        proc.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    raise RunError('roceswitch ran past %g s (duration %g + %d) and was stopped; '
                                   'its output: %s' % (limit, duration, RUN_SLACK_S, files['log']))
        except BaseException:
            stop_on_error(proc)
            raise
        finally:
            remove_runtime_dir(prefix)
    share = worker_cpu_share(first, last) if first is not last and first and last else None
    return proc.returncode, time.monotonic() - start, share
