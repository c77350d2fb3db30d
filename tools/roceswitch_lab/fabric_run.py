"""`roceswitch-lab run` on a fabric experiment (a fabric file plus experiment:): plan the runs
and their seeds, write and check each run's fabric file, run roceswitch on each (virtual time),
read its stats, then print the tables and write the CSVs, the JSON and the plots."""

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time

from .common import PROG, RunError, UsageError
from .console import Out, fmt_secs
from .experiment import yaml_module
from .fabric import FabricExperiment, safe_label
from .fabric_collectives import aggregate_collectives, collective_figures, collectives_table, \
    summarise, write_collectives_csv
from .fabric_failover import aggregate_failover, failover_figures
from .fabric_fct import aggregate_fct, fct_figures, fct_table, write_fct_csv
from .fabric_failover_report import failover_line, failover_table, write_failover_csvs
from .fabric_figures import aggregate, fabric_figures
from .fabric_plots import fabric_plots
from .fabric_report import pause_table, run_line, summary_table, write_csvs
from .keys import parse_sets, value_text
from .outfiles import json_clean
from .policies import check_policies, parse_policies
from .switch import check_config, find_switch, help_policies, load_stats, registered_policies, remove_runtime_dir, \
    stop_on_error

START_S = 30          # a run's allowance for start-up (the switches' heaps) and shutdown
MAX_SLOWDOWN = 5000   # and for its virtual time: wall seconds per virtual second
BUSY_RETRIES = 10     # the binary being replaced (a rebuild): tries, 3 s apart


def run_fabric_switch(switch, conf, files, duration_s, series_ms, prefix, on_tick):
    """Runs roceswitch once on a fabric file for duration_s of virtual time; returns (exit code,
    wall s). Bounded by START_S + duration_s x MAX_SLOWDOWN wall seconds."""
    argv = [switch, '--no-pci', '--file-prefix', prefix, '--', '--config', conf,
            '--duration', '%.9g' % duration_s, '--quiet', '--stats-json', files['json'],
            '--series-ms', '%.9g' % series_ms, '--series', files['series']]
    for k in ('json', 'series'):
        if os.path.exists(files[k]):
            os.unlink(files[k])
    limit = START_S + duration_s * MAX_SLOWDOWN
    with open(files['log'], 'w') as log:
        log.write('$ %s\n' % ' '.join(argv))
        log.flush()
        for attempt in range(BUSY_RETRIES):
            try:
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
                break
            except OSError as e:
                if e.errno not in (errno.ETXTBSY, errno.ENOENT) or attempt == BUSY_RETRIES - 1:
                    raise RunError('cannot run %s: %s' % (switch, e.strerror or e))
                time.sleep(3)
        start = time.monotonic()
        try:
            while True:
                try:
                    proc.wait(timeout=0.5)
                    break
                except subprocess.TimeoutExpired:
                    pass
                el = time.monotonic() - start
                on_tick(el)
                if el > limit:
                    proc.send_signal(signal.SIGINT)
                    try:
                        proc.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                    raise RunError('roceswitch ran past %g s of wall time for %g ms of virtual '
                                   'time and was stopped; its output: %s' % (limit, duration_s * 1e3, files['log']))
        except BaseException:
            stop_on_error(proc)
            raise
        finally:
            remove_runtime_dir(prefix)
    return proc.returncode, time.monotonic() - start


def durations(a, exp):
    """(virtual seconds per run, series period in ms) from the command line or the file."""
    if a.duration is not None and a.duration_ms is not None:
        raise UsageError('--duration and --duration-ms: give one')
    dur = a.duration if a.duration is not None else \
        a.duration_ms / 1e3 if a.duration_ms is not None else exp.duration_ms / 1e3
    series = a.series_ms if a.series_ms is not None else exp.series_ms
    if not 0.01 <= series <= 60000:
        raise UsageError('--series-ms must be in [0.01, 60000] for a fabric (virtual time)')
    if series / 1e3 > dur:
        raise UsageError('--series-ms %g is longer than a run (%g ms): no sample would be taken'
                         % (series, dur * 1e3))
    return dur, series


def one_seed(a, ctx, job, out):
    """Runs one (run, seed): returns its figures ({'error'} when it failed)."""
    run, seed, base, n = job['run'], job['seed'], job['base'], job['n']
    switch, exp, duration, series_ms, t0, jobs = ctx
    files = {k: os.path.join(a.out_dir, base + ext) for k, ext in
             (('json', '.json'), ('series', '.series.jsonl'), ('log', '.log'))}
    what = run['text'] + ('' if seed is None else ' seed %d' % seed)
    out.line('[%d/%d] %s: running %g ms (virtual)' % (n, jobs, what, duration * 1e3))

    def tick(el):
        total = time.monotonic() - t0
        per = (total - el) / (n - 1) if n > 1 else 6.0   # the runs so far, else a guess
        out.status('  run %d/%d %s: %.0f s | elapsed %s, ETA %s' % (
            n, jobs, what, el, fmt_secs(total), fmt_secs(max(0.0, per - el) + per * (jobs - n))))

    f = {'seed': seed, 'label': base}
    try:
        rc, wall = run_fabric_switch(switch, job['conf'], files, duration, series_ms,
                                     'lab%df%d' % (os.getpid(), n), tick)
        f['exit_code'] = rc
        f['process_wall_s'] = wall
        stats = load_stats(files, rc)
        if 'fabric' not in stats:
            raise RunError('%s has no fabric section: %s did not run the file as a fabric'
                           % (files['json'], switch))
        f.update(fabric_figures(stats, exp.victims))
        f['collectives'] = collective_figures(stats)
        f.update(summarise(f['collectives']))
        f.update(fct_figures(stats))
        with open(job['conf']) as fh:
            conf = yaml_module().safe_load(fh)
        f.update(failover_figures(conf, stats, files['series'], exp.goodput_window_ms))
        f['files'] = {k: v for k, v in files.items() if os.path.exists(v)}
        f['files']['config'] = job['conf']
        out.line('[%d/%d] %s: %s (%.1f s)' % (n, jobs, what, run_line(f, exp.victims), wall))
        if f.get('cut_ms') is not None:
            out.line('  ' + failover_line(f))
        for e in f.get('routing_errors') or []:
            out.line('  warning: a routing update failed: %s' % e)
        if rc != 0:
            out.line('  warning: roceswitch exited %d (see %s)' % (rc, files['log']))
        if f['victims_missing']:
            out.line('  warning: experiment.victims: no NIC host %s in this run'
                     % ', '.join(f['victims_missing']))
        if not os.path.exists(files['series']):
            out.line('  warning: no time series in %s' % files['series'])
    except RunError as e:
        f['error'] = str(e)
        out.line('[%d/%d] %s: FAILED: %s' % (n, jobs, what, e))
    return f


INTERNAL = ('_goodput', '_fct_classes')   # what the plots and the merges use, not the JSON


def without_series(r):
    """A run (and its seeds) without the goodput series ('_goodput') the plots use and the
    completion-time histograms ('_fct_classes') the seeds' merge uses."""
    r = {k: v for k, v in r.items() if k not in INTERNAL}
    if r.get('seeds'):
        r['seeds'] = [{k: v for k, v in s.items() if k not in INTERNAL} for s in r['seeds']]
    return r


def cmd_run_fabric(a):
    out = Out(a.json)
    exp = FabricExperiment(a.experiment)
    switch = find_switch(a.build)
    specs = parse_policies(a.policies) if a.policies is not None else None
    if specs is not None:
        check_policies(specs, registered_policies(help_policies(switch)))
    plan = exp.plan(a, specs)
    seeds = exp.seed_list(a)
    sets = parse_sets(a.set, exp.yaml)
    for key, parts, node, _ in sets:
        if not exp.key_places(parts, node):
            raise UsageError('--set %s: the key reaches nothing in the fabric file' % key)
    duration, series_ms = durations(a, exp)
    a.out_dir = a.out or 'lab-%s-%s' % (re.sub(r'[^A-Za-z0-9_.-]+', '_', exp.name),
                                        time.strftime('%Y%m%d-%H%M%S'))
    try:
        os.makedirs(a.out_dir, exist_ok=True)
    except OSError as e:
        raise UsageError('--out %s: %s' % (a.out_dir, e.strerror or e))

    # Every run's fabric file, checked by the switch before anything runs.
    jobs = []
    for i, run in enumerate(plan):
        run['label_file'] = '%02d-%s' % (i + 1, safe_label(run['label']))
        for seed in seeds:
            base = run['label_file'] + ('' if seed is None else '-seed%d' % seed)
            conf = os.path.join(a.out_dir, base + '.yaml')
            with open(conf, 'w') as fh:
                fh.write(exp.fabric_config(run, seed, sets, a.seed, a.experiment))
            check_config(switch, conf, a.experiment, 'run ' + run['text'] +
                         ('' if seed is None else ' seed %d' % seed))
            jobs.append({'run': run, 'seed': seed, 'base': base, 'conf': conf, 'n': len(jobs) + 1})

    many = seeds != [None]
    out.line('%s: %s (fabric), %d run%s%s of %g ms virtual: %s' % (
        PROG, exp.name, len(plan), 's' if len(plan) > 1 else '',
        ' x %d seed%s (%s = %s)' % (len(seeds), 's' if len(seeds) > 1 else '', exp.seed_key,
                                     ','.join(map(str, seeds))) if many else '',
        duration * 1e3, ', '.join(r['text'] for r in plan)))
    for r in plan:
        if r['sets'] and not r.get('policy') and 'key' not in r:
            out.line('%s:   %s sets %s' % (PROG, r['text'], ', '.join(
                '%s = %s' % (k, value_text(d)) for k, _, _, d in r['sets'])))
    for key, _, _, d in sets:
        out.line('%s: every run sets %s = %s' % (PROG, key, value_text(d)))
    out.line('%s: series every %g ms (virtual), output in %s' % (PROG, series_ms, a.out_dir))

    t0 = time.monotonic()
    ctx = (switch, exp, duration, series_ms, t0, len(jobs))
    per_run = {id(r): [] for r in plan}
    for job in jobs:
        per_run[id(job['run'])].append(one_seed(a, ctx, job, out))
    out.clear_live()

    runs = []
    for r in plan:
        row = {'run': r['text'], 'label': r['label_file'],
               'set': {k: d for k, _, _, d in r['sets']}}
        if r.get('policy'):
            row['policy'] = r['policy']
        if 'key' in r:
            row.update({'key': r['key'], 'value': r['value']})
        row['seeds'] = per_run[id(r)]
        aggregate(row, row['seeds'])
        ok = [s for s in row['seeds'] if 'error' not in s]
        aggregate_failover(row, ok)
        aggregate_collectives(row, ok)
        aggregate_fct(row, ok)
        runs.append(row)

    csvs = write_csvs(a.out_dir, runs) + write_failover_csvs(a.out_dir, runs) + \
        write_collectives_csv(a.out_dir, runs) + write_fct_csv(a.out_dir, runs)
    doc = {'experiment': exp.name, 'kind': 'fabric', 'file': a.experiment,
           'duration_ms': duration * 1e3, 'series_ms': series_ms,
           'seeds': [s for s in seeds if s is not None], 'seed_key': exp.seed_key if many else None,
           'victims': exp.victims, 'fabric_seed': a.seed, 'out': a.out_dir}
    if sets:
        doc['set'] = {k: d for k, _, _, d in sets}
    doc['runs'] = [without_series(r) for r in runs]   # goodput_series.csv has them
    doc = json_clean(doc)
    with open(os.path.join(a.out_dir, 'summary.json'), 'w') as fh:
        json.dump(doc, fh, indent=2)
        fh.write('\n')
    pngs = fabric_plots(a.out_dir, exp, runs, seeds, out)

    out.line()
    out.line(summary_table(runs, seeds, exp.victims))
    out.line()
    out.line('Gb/s, of ideal: the payload the NIC hosts received over the run against what the '
             'links of the hosts that receive carry%s; %sresent, out-of-order: the NICs\' '
             'retransmitted and out-of-order packets; PFC: frames every switch port sent; pause '
             'ms: the time ports asserted PFC towards their neighbours, summed; books: the fabric\'s '
             'end-to-end totals; wall s: the simulation loop (start-up excluded); slowdown: wall / '
             'virtual time' % (
                 ' (mean over %s = %s; min/max: its range)' % (
                     exp.seed_key, ','.join(map(str, seeds))) if len(seeds) > 1 else
                 ' (%s = %s)' % (exp.seed_key, seeds[0]) if many else '',
                 'victim Gb/s: what %s received; ' % ', '.join(exp.victims) if exp.victims else ''))
    out.line()
    out.line(pause_table(runs))
    for extra in (failover_table(runs), collectives_table(runs), fct_table(runs)):
        if extra:
            out.line()
            out.line(extra)
    out.line('written to %s: %s, summary.json, per run NN-RUN%s.{yaml,json,series.jsonl,log}%s' % (
        a.out_dir, ', '.join(csvs), '-seedN' if many else '',
        (', ' + ', '.join(os.path.basename(p) for p in pngs)) if pngs else ''))
    if a.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write('\n')
        sys.stdout.flush()
    return 1 if any('error' in r for r in runs) else 0
