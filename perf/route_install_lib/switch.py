"""The switch under test: roceswitch started with a control socket (and killed if this
process dies), stopped cleanly, and what /proc tells of it (RSS, CPU and run-queue time)."""

import ctypes
import os
import re
import signal
import socket
import subprocess
import time

from .common import HERE, NAN, Failure, Timeout
from .frames import roce_frame, write_pcap


def set_pdeathsig():
    """The child dies with this process, even if it is killed (SIGKILL leaves no finally)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def stop_process(proc, grace):
    """SIGINT, then SIGKILL after `grace` seconds; the exit status."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def tail(path, n=30):
    try:
        with open(path, errors='replace') as fh:
            return ''.join(fh.readlines()[-n:])
    except OSError as e:
        return str(e)


class Switch:
    """roceswitch with a control socket, until stop()."""

    def __init__(self, a, lr, work, deadline):
        self.work, self.proc, self.prefix = work, None, 'rs-route-install-%d' % os.getpid()
        self.sock = os.path.join(work, 'control.sock')
        self.stats = os.path.join(work, 'stats.json')
        self.logf = os.path.join(work, 'roceswitch.log')
        self.lr = lr
        conf = os.path.join(work, 'switch.yaml')
        limits = []
        if a.max_v4:
            limits.append('routes_v4: %d' % a.max_v4)
        if a.max_v6:
            limits.append('routes_v6: %d' % a.max_v6)
        if a.tbl8_v4:
            limits.append('tbl8_v4: %d' % a.tbl8_v4)
        if a.tbl8_v6:
            limits.append('tbl8_v6: %d' % a.tbl8_v6)
        if a.traffic == 'linerate':
            pcap = os.path.join(work, 'roce64.pcap')
            write_pcap(pcap, [roce_frame(lr, i) for i in range(a.packets)])
            text = lr.config_text(pcap, 'foundation')
            self.traffic = ('perf/linerate\'s: %d 64-byte RoCEv2 frames looping from net_pcap to 8 '
                            'net_null ports over %d /24 routes, 1 worker' % (a.packets, lr.ROUTES))
        else:
            demo = os.path.join(HERE, '..', 'configs', 'demo_incast.yaml')
            with open(demo) as fh:
                text = fh.read()
            self.traffic = 'the embedded demo (configs/demo_incast.yaml): 4 emulated hosts, 1 worker'
        if limits:
            text += 'limits: {%s}\n' % ', '.join(limits)
        with open(conf, 'w') as fh:
            fh.write(text)
        self.conf = conf
        eal = [x for x in lr.EAL_COMMON if not x.startswith('--lcores')] + ['--lcores=%s' % a.lcores]
        self.argv = ([a.roceswitch] + eal +
                     ['--file-prefix', self.prefix, '--', '--config', conf, '--duration', '0',
                      '--control-socket', self.sock, '--stats-json', self.stats, '--quiet',
                      '--log-level', 'warn'])
        self.out = open(self.logf, 'w')
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=subprocess.STDOUT, preexec_fn=set_pdeathsig)
        self.pid = self.proc.pid
        try:
            self.wait_for_socket(min(deadline, time.monotonic() + 60), limits)
        except BaseException:
            self.stop(5)
            raise

    def wait_for_socket(self, limit, limits):
        while True:
            if self.proc.poll() is not None:
                raise Failure('roceswitch exited (status %s) before serving its control socket; '
                              'its output:\n%s%s' % (self.proc.returncode, tail(self.logf).rstrip(),
                                                     self.limits_hint(limits)))
            if os.path.exists(self.sock):
                try:
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.connect(self.sock)
                    s.close()
                    break
                except OSError:
                    s.close()
            if time.monotonic() > limit:
                raise Timeout('roceswitch did not open its control socket within 60 s')
            time.sleep(0.05)

    def limits_hint(self, limits):
        text = tail(self.logf)
        if limits and re.search(r'limits.*unknown|unknown.*limits', text):
            return ('\n(this build\'s config loader may not know the `limits:` section yet: '
                    'run without --max-v4/--max-v6/--tbl8-v4/--tbl8-v6)')
        return ''

    def rss_kb(self):
        try:
            with open('/proc/%d/status' % self.pid) as fh:
                for line in fh:
                    if line.startswith('VmRSS:'):
                        return int(line.split()[1])
        except OSError:
            pass
        return None

    def sched_ms(self):
        """(on CPU, waiting for a CPU) in ms so far, of the main thread (the control plane):
        /proc/PID/task/PID/schedstat."""
        try:
            with open('/proc/%d/task/%d/schedstat' % (self.pid, self.pid)) as fh:
                run, wait = fh.read().split()[:2]
            return int(run) / 1e6, int(wait) / 1e6
        except (OSError, ValueError):
            return NAN, NAN

    def workers_wait_ms(self):
        """Run-queue wait so far, in ms, of the worker threads (rte-worker-N): time the data
        path could not run because something else had its CPU."""
        total = 0.0
        try:
            for tid in os.listdir('/proc/%d/task' % self.pid):
                with open('/proc/%d/task/%s/comm' % (self.pid, tid)) as fh:
                    if not fh.read().startswith(('rte-worker', 'lcore-worker')):
                        continue
                with open('/proc/%d/task/%s/schedstat' % (self.pid, tid)) as fh:
                    total += int(fh.read().split()[1]) / 1e6
        except (OSError, ValueError, IndexError):
            return NAN
        return total

    def stop(self, grace=30):
        """Stops it (SIGINT: the clean stop that writes the stats file); its exit status."""
        if self.proc is None:
            return None
        rc = stop_process(self.proc, grace)
        self.out.close()
        base = '/var/run/dpdk' if os.geteuid() == 0 else os.path.join(
            os.environ.get('XDG_RUNTIME_DIR', '/tmp'), 'dpdk')
        try:
            os.rmdir(os.path.join(base, self.prefix))
        except OSError:
            pass
        return rc
