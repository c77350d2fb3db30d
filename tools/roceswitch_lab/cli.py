"""roceswitch-lab's command line: the argument parser (run, list; --help from helptext) and main,
which maps the errors to exit codes (2 usage, 1 a failed run, 130 interrupted)."""

import argparse
import os
import signal
import sys

from .commands import cmd_list, cmd_run
from .common import PROG, REPO, RunError, UsageError
from .fabric import is_fabric_file
from .helptext import DESCRIPTION, EPILOG, USAGE


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write('%s: error: %s\n' % (PROG, message))
        sys.exit(2)


def parse_args(argv):
    fmt = lambda prog: argparse.RawDescriptionHelpFormatter(prog, max_help_position=28, width=96)  # noqa: E731
    ap = Parser(prog=PROG, usage=USAGE, description=DESCRIPTION, epilog=EPILOG, formatter_class=fmt)
    sub = ap.add_subparsers(dest='command', metavar='COMMAND', parser_class=Parser)
    default_build = os.path.join(REPO, 'build')
    run = sub.add_parser('run', help='run an experiment once per policy (or value) and compare them',
                         usage='roceswitch-lab run EXPERIMENT.yaml [--policies P1,P2,... | '
                         '--vary KEY --values V1,V2,...] [options]',
                         description='Runs EXPERIMENT.yaml once per policy, or once per value of '
                         'the key it varies; a fabric experiment (a fabric file with experiment:) '
                         'once per run of experiment.runs and seed (roceswitch-lab --help describes '
                         'the files, the figures and the output).', formatter_class=fmt)
    run.add_argument('experiment', metavar='EXPERIMENT.yaml', help='the experiment file')
    run.add_argument('--policies', metavar='P1,P2,...',
                     help='routing policies, one run each: NAME or NAME:param=value,param=value')
    run.add_argument('--vary', metavar='KEY',
                     help='the config key each run sets (default: experiment.vary.key)')
    run.add_argument('--values', metavar='V1,V2,...',
                     help='its values, one run each (default: experiment.vary.values)')
    run.add_argument('--set', action='append', metavar='KEY=VALUE',
                     help='set KEY to VALUE in every run (repeatable)')
    run.add_argument('--duration', type=float, metavar='S',
                     help='seconds per run (default: experiment.duration_s; a fabric\'s: virtual)')
    run.add_argument('--duration-ms', type=float, metavar='MS',
                     help='a fabric experiment: virtual ms per run (default: experiment.duration_ms)')
    run.add_argument('--series-ms', type=float, metavar='MS',
                     help='time-series sample period (default: experiment.series_ms)')
    run.add_argument('--runs', metavar='L1,L2,...',
                     help='a fabric experiment: only these of experiment.runs (by label)')
    run.add_argument('--seeds', metavar='N1,N2,...',
                     help='a fabric experiment: repeat each run once per seed (default: '
                     'experiment.seeds), setting experiment.seed_key')
    run.add_argument('--out', metavar='DIR', help='output directory (default ./lab-NAME-TIME)')
    run.add_argument('--json', action='store_true',
                     help='print {"runs": [...]} on stdout (progress goes to stderr)')
    run.add_argument('--build', default=default_build, metavar='DIR',
                     help='build directory with app/roceswitch (default: %s)' % default_build)
    run.add_argument('--seed', type=int, metavar='N',
                     help='set switch.seed (ECMP hashing, random policies) in every run '
                     '(a fabric experiment: fabric.seed)')
    ls = sub.add_parser('list', help='list the routing policies and their parameters',
                        description='Prints roceswitch -- --help-policies.', formatter_class=fmt)
    ls.add_argument('--build', default=default_build, metavar='DIR',
                    help='build directory with app/roceswitch (default: %s)' % default_build)
    a = ap.parse_args(argv)
    if a.command is None:
        ap.error('a command is needed: run or list')
    if a.command == 'run':
        if a.duration is not None and not 0 < a.duration <= 86400:
            ap.error('--duration must be in (0, 86400]')
        if a.duration_ms is not None and not 0 < a.duration_ms <= 86400000:
            ap.error('--duration-ms must be in (0, 86400000]')
        # A fabric runs on virtual time: its series may be finer (fabric_run checks it).
        if a.series_ms is not None and not 1 <= a.series_ms <= 60000 and not is_fabric_file(a.experiment):
            ap.error('--series-ms must be in [1, 60000]')
        if a.seed is not None and not 0 <= a.seed < 2 ** 63:
            ap.error('--seed must be a non-negative integer')
    return a


def on_sigterm(signum, frame):
    raise KeyboardInterrupt


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        return cmd_list(a) if a.command == 'list' else cmd_run(a)
    except UsageError as e:
        sys.stderr.write('%s: %s\n' % (PROG, e))
        return 2
    except RunError as e:
        sys.stderr.write('%s: %s\n' % (PROG, e))
        return 1
    except KeyboardInterrupt:
        sys.stderr.write('\n%s: interrupted\n' % PROG)
        return 130
