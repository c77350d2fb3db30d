"""The commands that are more than one request, or not a plain read or write: batch, p4, buffer set, system set,
capture, trace, raw."""

import json
import os
import shlex
import sys
import time

from .args import opt
from .client import PROG, CtlError, UsageError
from .show import table


def line_op(parser, text):
    """One ctl command line of a batch file -> its operation object."""
    words = shlex.split(text, comments=True)
    if words and words[0] in (PROG, 'roceswitch-ctl'):
        words = words[1:]
    if '-h' in words or '--help' in words:
        raise UsageError('--help in a batch line')
    a = parser.parse_args(words)
    cmd = getattr(a, 'cmd', None)
    if cmd is None or cmd.op is None or cmd.read:
        raise UsageError(f"'{' '.join(words[:2])}' is not a change: a batch holds changes only")
    return {'op': cmd.op, **cmd.build(a)}


def read_source(file):
    """A command file's name for messages, and its text ('-': standard input)."""
    try:
        return ('<stdin>', sys.stdin.read()) if file == '-' else (file, open(file).read())
    except OSError as e:
        raise CtlError(e.strerror, file) from None


def run_batch(cl, a, parser):
    name, text = read_source(a.file)
    ops, lines = [], []
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith('#'):
            continue
        try:
            op = json.loads(s) if s.startswith('{') else line_op(parser, s)
        except (ValueError, UsageError) as e:
            raise CtlError(str(e), f'{name}:{n}') from None
        if not isinstance(op, dict) or not isinstance(op.get('op'), str):
            raise CtlError('expected an object with an "op"', f'{name}:{n}')
        ops.append(op)
        lines.append(n)
    try:
        r = cl.call({'ops': ops})
    except CtlError as e:
        if e.index is not None and 0 <= e.index < len(lines):
            where = f'{name}:{lines[e.index]}'
            raise CtlError(e.reason, f'{where}: {e.field}' if e.field else where) from None
        raise
    print(f"{r['applied']} operation{'' if r['applied'] == 1 else 's'} applied")


def run_p4(cl, a, parser):
    """A BMv2 simple_switch_CLI command file, applied as one transaction; errors name its line."""
    name, text = read_source(a.file)
    try:
        r = cl.call({'op': 'p4.cli', 'lines': text.splitlines()})
    except CtlError as e:
        if e.field and e.field.startswith('line '):
            raise CtlError(e.reason, f'{name}:{e.field[5:]}') from None
        raise
    for line in r.get('output', []):
        print(line)


def yaml_set(cl, a, op):
    """A YAML file of sections sent as one `op` ({"op": op, "yaml": TEXT}); an error names the file, then the key."""
    name, text = read_source(a.file)
    try:
        cl.call({'op': op, 'yaml': text})
    except CtlError as e:
        if e.field:
            raise CtlError(f'{e.field.removeprefix("yaml.")}: {e.reason}', name) from None
        raise


def run_buffer_set(cl, a, parser):
    """A file of lossless sections (as `buffer get` writes them, or a config's), merged into the running ones."""
    yaml_set(cl, a, 'buffer.set')


def run_system_set(cl, a, parser):
    """A file of the switch's host sections (lldp, neighbours, copp, bridge, vlans, as `system get` writes them)."""
    yaml_set(cl, a, 'system.set')


def run_capture(cl, a, parser):
    """Start a capture, follow it to its end (count, duration, or Ctrl-C), print what it wrote."""
    req = opt(op='capture.start', port=a.port, direction=a.direction, file=os.path.abspath(a.file), count=a.count,
              duration_s=a.duration, snaplen=a.snaplen)
    if a.count is None and a.duration is None:
        raise UsageError('give --count N or --duration S (or both): a capture ends at its first limit')
    cl.call(req)
    last = None
    try:
        while True:
            s = next(x for x in cl.call({'op': 'capture.list'}) if x['port'] == a.port)
            if s['done']:
                break
            if sys.stderr.isatty() and s['packets'] != last:
                print(f"\r{a.port} {s['direction']}: {s['packets']} packets", end='', file=sys.stderr, flush=True)
                last = s['packets']
            time.sleep(0.1)
    except KeyboardInterrupt:
        s = next(x for x in cl.call({'op': 'capture.stop', 'port': a.port}) if x['port'] == a.port)
    if sys.stderr.isatty() and last is not None:
        print(file=sys.stderr)
    if a.json:
        print(json.dumps(s, indent=2))
    else:
        table(['port', 'direction', 'packets', 'bytes', 'lost', 'file'],
              [[s['port'], s['direction'], s['packets'], s['bytes'], s['lost'], s['file']]])
    if s.get('error'):
        raise CtlError(s['error'], s['file'])


def run_trace(cl, a, parser):
    """Trace the next N packets each worker receives and print their walk through the pipeline."""
    cl.call(opt(op='trace.start', count=a.count, every=a.every))
    deadline = time.monotonic() + a.wait
    r = cl.call({'op': 'trace.get'})
    while not r['ready'] and time.monotonic() < deadline:
        time.sleep(0.05)
        r = cl.call({'op': 'trace.get'})
    if not r['ready']:  # a 1-in-K trace, or too few packets: what was traced so far
        r = cl.call({'op': 'trace.stop'})
    if a.json:
        print(json.dumps(r, indent=2))
    else:
        sys.stdout.write(r.get('text', ''))


def run_raw(cl, a, parser):
    try:
        req = json.loads(a.request)
    except ValueError as e:
        raise UsageError(f'raw: not JSON: {e}') from None
    resp = cl.exchange(req)
    print(json.dumps(resp, indent=2))
    return 0 if isinstance(resp, dict) and resp.get('ok') else 1
