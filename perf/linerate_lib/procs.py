"""Child processes of perf/linerate, each bounded: the EAL arguments every DPDK run shares
(no hugepages, no PCI, main lcore on CPU 0 and the one worker on CPU 1), a run stopped with
SIGINT (a DPDK program's clean stop) past its timeout and with SIGKILL past a grace period,
the removal of the runtime directory DPDK leaves per --file-prefix, and the tail of a log."""

import os
import signal
import subprocess

EAL_COMMON = ['--no-huge', '-m', '2048', '--no-pci', '--no-shconf', '--lcores=0@0,1@1',
              '--log-level=lib.*:error']


def stop(proc, grace):
    """SIGINT, then SIGKILL after `grace` seconds; returns the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def run_bounded(argv, timeout, grace=15, stdin=subprocess.DEVNULL, stdout=None):
    """Runs argv; past `timeout` seconds sends SIGINT (a DPDK program's clean stop), past
    `grace` more SIGKILL. Returns (exit status, whether the timeout fired)."""
    proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=subprocess.STDOUT)
    try:
        proc.wait(timeout=timeout)
        return proc.returncode, False
    except subprocess.TimeoutExpired:
        return stop(proc, grace), True
    except BaseException:
        stop(proc, 5)
        raise


def remove_runtime_dir(prefix):
    """DPDK leaves an empty runtime directory per --file-prefix; remove ours."""
    base = '/var/run/dpdk' if os.geteuid() == 0 else os.path.join(
        os.environ.get('XDG_RUNTIME_DIR', '/tmp'), 'dpdk')
    try:
        os.rmdir(os.path.join(base, prefix))
    except OSError:
        pass


def tail(path, n=30):
    try:
        with open(path, errors='replace') as fh:
            return ''.join(fh.readlines()[-n:])
    except OSError as e:
        return str(e)

