"""The command line of perf/route_install: its usage, its help (what it measures and how)
and the checks of its options."""

import argparse
import os
import re

from .common import PROG
from .prefixes import parse_depths


USAGE = ('perf/route_install [--roceswitch PATH] [--routes N] [--batch N] [--mix V4:V6] '
         '[--fill] [--json [FILE]] ...\n'
         '       perf/route_install --churn RATE --churn-only SECONDS --socket PATH')

DESCRIPTION = """\
Measures the control plane's route installation, end to end: a client on the control socket
(--control-socket, newline-delimited JSON, control/runtime/control_api.h) sends transactions
of --batch route.add operations and waits for each answer, as an SDN controller would. Each
transaction is checked and applied to the running model (std::map), then to the spare route
bank (rte_lpm / rte_lpm6), published with one pointer, and replayed on the other bank after
the RCU grace period (dataplane/switch/fib_writer.h): every route is applied twice.

  1. starts the --roceswitch binary as perf/linerate does (one worker on CPU 1 forwarding 64-byte
     RoCEv2 frames from a looping net_pcap to 8 net_null ports, 1000 IPv4 /24 routes over 8
     groups g0..g7, main lcore on CPU 0; --traffic demo: the embedded incast demo on emulated
     hosts instead), with --control-socket in a temporary directory and, with --max-v4,
     --max-v6, --tbl8-v4 or --tbl8-v6, a `limits:` section sizing the route tables;
  2. generates --routes prefixes (seeded: --seed), IPv4 /16-/32 and IPv6 /48-/128 by default
     (--v4-depths, --v6-depths), --mix IPv4:IPv6 (3:1), no duplicates, none overlapping the
     traffic's 10.0.0.0/8, each to one of the switch's groups, shuffled, and encodes every
     transaction before the clock starts (it prints what encoding one batch costs against
     what the switch takes to apply it);
  3. installs them batch after batch until all are in or a table is full (the switch answers
     "route table full": the ops before the one that failed are sent again, so the table is
     filled exactly); then deletes them all, in another random order, in batches of the same
     size. Rate = routes / wall time from the first send to the last answer, that answer
     being a barrier's (a transaction that sets an existing route to the group it has), which
     cannot come before the last batch is replayed on the second bank; latency = one batch's
     send-to-answer (it holds the replay of the batch before);
  4. checks that traffic keeps flowing while routes change: received and sent must grow
     between the `counters` read before and after each phase (outside its timed window: a
     request between two batches would wait for the previous batch's replay) and between
     every two of the switch's own once-a-second samples (its stats JSON); prints the
     forwarding rate before and during the install; and the books must balance at the end
     (received = sent + queued + in flight + dropped in the stats JSON the switch writes
     when stopped, and its exit status 0);
  5. reads VmRSS of the switch from /proc before the install, after each batch, after the
     install and after the delete (the control protocol reports no DPDK heap figures, so
     resident memory only): RSS growth per route. Without hugepages that is mostly the first
     touch of pages of the tables each bank preallocates (a 64 MB tbl24 per table), which
     with hugepages are resident from the start: the preallocated size is printed beside it;
     and the control thread's CPU time and run-queue wait (/proc/PID/task/PID/schedstat): a
     rate per CPU second that other load on the machine does not move, and a warning when
     the thread waited for its CPU;
  6. with --fill, then fills each family alone to its limit (`limits` op) and empties it;
  7. prints a table per batch, a summary, with --json a JSON object, and as the LAST line
       routes_per_s=X ipv4_max=N ipv6_max=M
     X the install rate (integer); N and M the largest IPv4 and IPv6 table sizes reached
     (routes in the table, the config's own included: 1000 IPv4 for the linerate traffic).

Where the prefixes go. rte_lpm spends a tbl8 group (256 entries) on every /24 holding a
route longer than /24, and rte_lpm6 one on every 8 bits of a prefix past its first 24 that
no other prefix shares; each table has 4096 groups (RouteLimits). Fully random prefixes
would exhaust them after ~8 700 IPv4 or a few hundred IPv6 routes, whatever the route limit.
So, as in a real fabric, long prefixes cluster: IPv4 routes longer than /24 fall in
--v4-subnets random /24s (2048), and an IPv6 /d is one of --v6-trunks random addresses
(128, under 4 random /32 sites) cut to the last byte boundary of its rte_lpm6 level, with
its remaining 1-8 bits random, so it shares every tbl8 group above its own. The depth is
uniform among the depths that still have room. --v4-subnets 0 / --v6-trunks 0 make every
prefix fully random, to see the tbl8 wall. The tbl8 groups the routes need are printed.

Churn: --churn RATE single-op updates per second, cycling add, replace (another group),
delete over prefixes that carry no traffic (198.18.0.0/15 /32s, RFC 2544's benchmarking
range, and 2001:2::/48 /128s, RFC 5180's, in the --mix ratio). In a benchmark run it is a
phase after the install (the table full of routes), --churn-seconds long; with
--churn-only SECONDS it runs alone against a switch already running (--socket PATH) and
prints "churn_updates_per_s=X target=RATE" last. perf/linerate can import churn() from
this file (importlib.machinery.SourceFileLoader) and run it beside its traffic.

--profile DIR records the switch's main thread (the control plane) with `perf record
--call-graph dwarf` during the install and the delete and prints its CPU time by component,
in ms and us a route: JSON parse and copies (nlohmann), the JSON-to-YAML conversion and the
field readers, the model (RunningState's std::map and undo log), rte_lpm and rte_lpm6 on the
spare bank and in the replay on the second bank, FibWriter and publish. A sample goes to the
first component with a frame in its call chain (malloc under to_yaml is the conversion's, a
page fault under rte_lpm_add is rte_lpm's). perf.data and the samples stay in DIR.
"""

EPILOG = """\
Exit status: 0 after a measurement whose traffic flowed and whose books balanced, 1 when a
run failed or a check did not hold, 2 for bad usage or a missing build. Everything is bounded
by --timeout; the switch (and perf) are stopped on any exit, and killed if this process dies.
"""


def parse_mix(text):
    m = re.fullmatch(r'(\d+):(\d+)', text)
    if not m or int(m.group(1)) + int(m.group(2)) == 0:
        raise argparse.ArgumentTypeError('%r: expected V4:V6, e.g. 3:1 (1:0 for IPv4 only)' % text)
    return int(m.group(1)), int(m.group(2))


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, usage=USAGE, description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=lambda prog: argparse.RawDescriptionHelpFormatter(
                                     prog, max_help_position=30, width=96))
    ap.add_argument('--roceswitch', default='build/app/roceswitch', metavar='PATH',
                    help='the switch to start (default build/app/roceswitch)')
    ap.add_argument('--routes', type=int, default=60000, metavar='N',
                    help='routes to install (default 60000; 0 with --fill: only the fill phases)')
    ap.add_argument('--batch', type=int, default=10000, metavar='N',
                    help='route operations a transaction (default 10000)')
    ap.add_argument('--mix', type=parse_mix, default=(3, 1), metavar='V4:V6',
                    help='IPv4 to IPv6 routes (default 3:1; 1:0 IPv4 only)')
    ap.add_argument('--v4-depths', default='16-32', metavar='LIST',
                    help='IPv4 prefix lengths, e.g. 16-32 (default), 24, 16,24,32')
    ap.add_argument('--v6-depths', default='48-128', metavar='LIST',
                    help='IPv6 prefix lengths (default 48-128)')
    ap.add_argument('--v4-subnets', type=int, default=2048, metavar='K',
                    help='IPv4 routes longer than /24 fall in K random /24s (default 2048; '
                         'rte_lpm spends a tbl8 group on each); 0: anywhere')
    ap.add_argument('--v6-trunks', type=int, default=128, metavar='T',
                    help='IPv6 prefixes derive from T random addresses (default 128), see '
                         'above; 0: fully random')
    ap.add_argument('--seed', type=int, default=1, help='random seed (default 1)')
    ap.add_argument('--fill', action='store_true',
                    help='then fill each family alone until its table is full, and empty it')
    ap.add_argument('--max-v4', type=int, metavar='N',
                    help='route table sizes for the switch\'s `limits:` config section '
                         '(routes_v4); without them the section is not written (65536 / 16384)')
    ap.add_argument('--max-v6', type=int, metavar='M', help='the same for routes_v6')
    ap.add_argument('--tbl8-v4', type=int, metavar='N',
                    help='tbl8 groups of each IPv4 table (limits: tbl8_v4; default 4096)')
    ap.add_argument('--tbl8-v6', type=int, metavar='N',
                    help='tbl8 groups of each IPv6 table (limits: tbl8_v6; default 4096)')
    ap.add_argument('--traffic', choices=('linerate', 'demo'), default='linerate',
                    help='linerate (default): perf/linerate\'s looping pcap on one worker; '
                         'demo: the embedded incast demo\'s emulated hosts')
    ap.add_argument('--packets', type=int, default=4096, metavar='N',
                    help='distinct frames in the linerate pcap (default 4096)')
    ap.add_argument('--lcores', default='0@0,1@1', metavar='MAP',
                    help='EAL --lcores (default 0@0,1@1: main lcore on CPU 0, the worker on CPU 1)')
    ap.add_argument('--churn', type=float, metavar='RATE',
                    help='single-op updates a second: a churn phase after the install '
                         '(--churn-seconds), or alone with --churn-only')
    ap.add_argument('--churn-seconds', type=float, default=10, metavar='S',
                    help='length of the churn phase in a benchmark run (default 10)')
    ap.add_argument('--churn-only', type=float, metavar='SECONDS',
                    help='no benchmark: churn at --churn RATE for SECONDS against the running '
                         'switch at --socket')
    ap.add_argument('--socket', metavar='PATH', help='control socket for --churn-only')
    ap.add_argument('--profile', metavar='DIR',
                    help='perf record the switch\'s main thread during the install and the '
                         'delete and print its CPU time by component; the perf.data files stay '
                         'in DIR')
    ap.add_argument('--json', nargs='?', const='-', metavar='FILE',
                    help='the figures as one JSON object, to FILE or (no FILE) to stdout '
                         'before the last line')
    ap.add_argument('--timeout', type=float, default=300, metavar='S',
                    help='bound on the whole run (default 300)')
    ap.add_argument('--keep', action='store_true',
                    help='keep the work directory (config, pcap, switch log, stats JSON)')
    a = ap.parse_args(argv)
    if a.routes < 0 or (a.routes == 0 and not a.fill and a.churn_only is None):
        ap.error('--routes must be positive (or 0 with --fill)')
    if a.batch < 1:
        ap.error('--batch must be at least 1')
    try:
        a.v4_depth_list = parse_depths(a.v4_depths, 32)
        a.v6_depth_list = parse_depths(a.v6_depths, 128)
    except ValueError as e:
        ap.error(str(e))
    if a.v4_subnets < 0 or a.v6_trunks < 0:
        ap.error('--v4-subnets and --v6-trunks cannot be negative')
    for name in ('max_v4', 'max_v6', 'tbl8_v4', 'tbl8_v6'):
        v = getattr(a, name)
        if v is not None and v < 1:
            ap.error('--%s must be positive' % name.replace('_', '-'))
    if a.churn_only is not None:
        if a.churn is None or a.churn <= 0:
            ap.error('--churn-only needs --churn RATE (updates a second, positive)')
        if not a.socket:
            ap.error('--churn-only needs --socket PATH (the running switch\'s control socket)')
        if a.churn_only <= 0:
            ap.error('--churn-only SECONDS must be positive')
    elif a.churn is not None and a.churn <= 0:
        ap.error('--churn RATE must be positive')
    if a.timeout <= 0:
        ap.error('--timeout must be positive')
    if a.json and a.json != '-' and not os.path.isdir(os.path.dirname(os.path.abspath(a.json))):
        ap.error('--json %s: no such directory' % a.json)
    return a
