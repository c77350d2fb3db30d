"""perf/route_install --profile: perf record of the switch's main thread (the control plane)
during a phase, its samples attributed to components and printed as a table."""

import os
import re
import subprocess
import time

from .common import NAN, log
from .report import render
from .switch import set_pdeathsig, stop_process


# Where the control thread's time goes: each sample's call chain (perf record --call-graph
# dwarf) goes to the first component, in this order, that has a frame in it, so malloc under
# to_yaml belongs to the YAML conversion and a page fault under rte_lpm_add to rte_lpm. Route
# table work is split by bank: under FibWriter::catch_up it is the replay of the previous
# transaction on the second bank, otherwise this transaction on the spare bank.
# (component, regex a frame must match, regex another frame must match or None)
PROFILE_COMPONENTS = [
    ('rte_lpm6 add/delete',
     r'^(rte_lpm6_|add_step|simulate_add|expand_rule|rule_find_less_specific|remove_tbl)', None),
    ('rte_lpm add/delete',
     r'^(rte_lpm_(add|delete)|add_depth_(small|big)|delete_depth_(small|big)|find_previous_rule)', None),
    ('JSON -> YAML tree (to_yaml)', r'\bto_yaml\b', None),
    ('field readers (ConfigReader: keys, prefix)', r'ConfigReader::', None),
    ('model: RunningState::route_add/del (std::map, undo entry)', r'RunningState::route_(add|del)\b', None),
    ('JSON parse (nlohmann)', r'nlohmann.*detail::(parser|lexer)|basic_json.*::parse\b', None),
    ('ControlApi::write: YAML node lookups, frees', r'ControlApi::write',
     r'^(YAML::|std::_Sp_counted|std::__shared_count|__dynamic_cast)'),
    ('ControlApi::write: JSON copy of each op', r'ControlApi::write', r'nlohmann'),
    ('ControlApi::write, other', r'ControlApi::write', None),
    ('transaction end: undo log, changes list', r'RunningState::(commit|abort|begin)', None),
    ('FibWriter bookkeeping, publish', r'FibWriter::|Fib::Fib|RcuSnapshot|rte_rcu', None),
    ('ControlApi::handle: JSON ops copy, dispatch', r'ControlApi::handle\b', None),
    ('JSON request free, response', r'ControlApi::handle_line', None),
    ('control server, socket', r'ControlServer::serve|ControlServer::flush|ControlServer::accept', None),
]


def perf_script_samples(data, timeout=300):
    """Yields each sample's call chain (symbols, leaf first) from `perf script`."""
    try:
        out = subprocess.run(['perf', 'script', '-i', data, '-F', 'ip,sym'], capture_output=True,
                             text=True, errors='replace', timeout=timeout).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        log('--profile: perf script failed: %s' % e)
        return
    chain = []
    for line in out.splitlines():
        line = line.strip()
        if not line:
            if chain:
                yield chain
            chain = []
            continue
        parts = line.split(None, 1)
        chain.append(parts[1] if len(parts) > 1 else '?')
    if chain:
        yield chain


def attribute(chain):
    frames = [re.sub(r'\+0x[0-9a-f]+$', '', f) for f in chain]
    for comp, rx, other in PROFILE_COMPONENTS:
        if (any(re.search(rx, f) for f in frames)
                and (other is None or any(re.search(other, f) for f in frames))):
            if comp.startswith('rte_lpm'):
                bank = ('replay on the second bank' if any('FibWriter::catch_up' in f for f in frames)
                        else 'spare bank')
                return '%s, %s' % (comp, bank)
            return comp
    if any('epoll_wait' in f or 'Switch::poll_links' in f or 'Reporter' in f or 'stats_json' in f
           for f in frames):
        return 'housekeeping, idle loop, counters'
    return 'other'


class Profiler:
    """perf record of the switch's main thread (the control plane) during a phase."""

    FREQ = 999

    def __init__(self, pid, out_dir):
        self.pid, self.dir, self.proc = pid, out_dir, None

    def start(self, name):
        self.data = os.path.join(self.dir, '%s.perf.data' % name)
        self.name = name
        # -t: the main thread only (the main lcore: control plane and housekeeping), not the
        # worker, whose packet loop would fill the profile. cpu-clock: a sample is 1/FREQ s.
        self.proc = subprocess.Popen(['perf', 'record', '-e', 'cpu-clock', '-F', str(self.FREQ),
                                      '--call-graph', 'dwarf,16384', '-t', str(self.pid), '-o',
                                      self.data, '--quiet'], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=set_pdeathsig)
        time.sleep(1.0)  # perf attaches

    def stop(self, wall_s, routes):
        if not self.proc:
            return None
        stop_process(self.proc, 60)
        self.proc = None
        counts, total = {}, 0
        for chain in perf_script_samples(self.data):
            c = attribute(chain)
            counts[c] = counts.get(c, 0) + 1
            total += 1
        if not total:
            log('--profile: perf recorded no samples of the switch\'s main thread')
            return None
        ms = 1000.0 / self.FREQ
        rows = sorted(counts.items(), key=lambda kv: -kv[1])
        per = 1000.0 / routes if routes else NAN
        lines = [('%s: switch main thread, on CPU' % self.name, 'ms', 'us/route', '%')]
        for c, n in rows:
            lines.append((c, '%.0f' % (n * ms), '%.2f' % (n * ms * per), '%.1f' % (100.0 * n / total)))
        lines.append(('total (%d routes; phase wall time %.0f ms, + ~1 s idle before it)'
                      % (routes, wall_s * 1e3), '%.0f' % (total * ms), '%.2f' % (total * ms * per), '100.0'))
        print(render(lines, header=True), flush=True)
        return [{'component': c, 'ms': n * ms, 'us_per_route': n * ms * per, 'percent': 100.0 * n / total}
                for c, n in rows]

    def kill(self):
        if self.proc:
            stop_process(self.proc, 10)
