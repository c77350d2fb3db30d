"""The two commands: list (the binary's routing policies) and run (plan the runs, write and check
their configs, run each, then write the CSVs, JSON and plots and print the tables)."""

import json
import os
import re
import sys
import time

from .common import CPU_SHARE_WARN, PROG, REALTIME_WARN, RunError, UsageError
from .console import Out, fmt_secs
from .experiment import Experiment
from .fabric import is_fabric_file
from .fabric_run import cmd_run_fabric
from .figures import figures
from .keys import parse_key, parse_sets, value_node, value_text
from .nic import STEADY_SETTLE_S
from .outfiles import (COLLECTIVE_FIELDS, HOST_FIELDS, NIC_FIELDS, RUN_FIELDS, VARY_FIELDS,
                       VARY_ROUTING_FIELDS, collective_rows, host_rows, json_clean, write_rows_csv,
                       write_series_csv, write_summary_csv)
from .plots import plots
from .policies import check_policies, parse_policies, run_labels
from .series import load_series, series_table
from .switch import check_config, find_switch, help_policies, load_stats, registered_policies, run_switch
from .tables import NIC_COLS, ROUTING_COLS, hosts_table, nccl_table, run_line, table


# --------------------------------------------------------------------------------------
# commands


def cmd_list(a):
    switch = find_switch(a.build)
    sys.stdout.write(help_policies(switch))
    return 0


def plan_runs(a, exp):
    """The runs: [{'text', 'policy' (a --policies spec) or 'vary' (key, parts, node), 'value'}],
    from --policies, else --vary/--values/experiment.vary."""
    yaml = exp.yaml
    if a.policies is not None:
        if a.vary is not None or a.values is not None:
            raise UsageError('--policies and --vary/--values: one invocation varies one thing')
        if exp.vary is not None:
            raise UsageError('%s varies %s (experiment.vary): its runs are the values of that key '
                             '(--values overrides them); --policies is for experiments that vary a '
                             "group's policy" % (a.experiment, exp.vary['key']))
        if exp.group is None:
            raise UsageError('--policies needs experiment.group: the nexthop group whose policy '
                             'each run sets')
        specs = parse_policies(a.policies)
        return [{'text': sp['text'], 'policy': sp} for sp in specs], specs
    if a.vary is None and exp.vary is None:
        raise UsageError('--policies is needed: %s has no experiment.vary (and no --vary KEY was '
                         'given)' % a.experiment)
    if a.vary is not None:
        key, parts = a.vary.strip(), parse_key(a.vary, '--vary')
        if a.values is None and (exp.vary is None or exp.vary['key'] != key):
            raise UsageError('--vary %s needs --values V1,V2,...' % key)
        source = '--vary'
    else:
        key, parts, source = exp.vary['key'], exp.vary['parts'], exp.vary['source'] + '.key'
    if a.values is not None:
        toks = [t for t in a.values.split(',')]
        if any(not t.strip() for t in toks):
            raise UsageError("--values %r: an empty entry (two commas, or a trailing one)" % a.values)
        values = [value_node(yaml, t, '--values') for t in toks]
    else:
        values = exp.vary['values']
    # The key must reach something in the config (the value's node only matters for the count).
    if not exp.key_places(parts, values[0][0]):
        where = 'experiment.vary.key' if source.startswith('experiment') else source
        msg = "'%s' reaches nothing in the config (a [*] list with no element that has the " \
              "keys before the last, or a missing key or index)" % key
        if where == 'experiment.vary.key':
            exp.fail(where, msg)
        raise UsageError('%s: %s' % (where, msg))
    short = key.rsplit('.', 1)[-1]
    short = re.sub(r'\[.*\]$', '', short) or key
    return [{'text': '%s=%s' % (short, value_text(d)), 'vary': (key, parts, node), 'key': key,
             'value': d} for node, d in values], None


def cmd_run(a):
    if is_fabric_file(a.experiment):
        return cmd_run_fabric(a)
    for opt, v in (('--duration-ms', a.duration_ms), ('--runs', a.runs), ('--seeds', a.seeds)):
        if v is not None:
            raise UsageError('%s is for fabric experiments (a file with fabric:); %s is a switch '
                             'config' % (opt, a.experiment))
    out = Out(a.json)
    exp = Experiment(a.experiment)
    plan, specs = plan_runs(a, exp)
    sets = parse_sets(a.set, exp.yaml)
    for key, parts, node, _ in sets:
        if not exp.key_places(parts, node):
            raise UsageError("--set %s: the key reaches nothing in the config" % key)
    switch = find_switch(a.build)
    if specs is not None:
        check_policies(specs, registered_policies(help_policies(switch)))
    policy_mode = specs is not None
    duration = a.duration if a.duration is not None else exp.duration
    if a.series_ms is not None:
        exp.series_ms = a.series_ms
    labels = run_labels(plan)
    out_dir = a.out or 'lab-%s-%s' % (re.sub(r'[^A-Za-z0-9_.-]+', '_', exp.name),
                                      time.strftime('%Y%m%d-%H%M%S'))
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as e:
        raise UsageError('--out %s: %s' % (out_dir, e.strerror or e))

    # Every run's config, checked by the switch before anything runs.
    confs = []
    for run, label in zip(plan, labels):
        conf = os.path.join(out_dir, label + '.yaml')
        with open(conf, 'w') as fh:
            fh.write(exp.run_config(run, a.seed, sets, a.experiment))
        check_config(switch, conf, a.experiment,
                     ('policy ' + run['text']) if policy_mode else 'run ' + run['text'])
        confs.append(conf)

    if policy_mode:
        out.line('%s: %s, %d run%s of %g s (%s), group %s, receivers %s' % (
            PROG, exp.name, len(plan), 's' if len(plan) > 1 else '', duration,
            ', '.join(r['text'] for r in plan), exp.group, ','.join(exp.receivers)))
    else:
        out.line('%s: %s, %d run%s of %g s varying %s (%s)' % (
            PROG, exp.name, len(plan), 's' if len(plan) > 1 else '', duration, plan[0]['key'],
            ', '.join(value_text(r['value']) for r in plan)))
    for key, _, node, d in sets:
        out.line('%s: every run sets %s = %s' % (PROG, key, value_text(d)))
    if exp.receivers:
        out.line('%s: ideal %.3f Gb/s (%s), series every %g ms, output in %s' % (
            PROG, exp.ideal, 'experiment.ideal_gbps' if exp.ideal_given is not None else
            'offered %.3f Gb/s, receivers\' links %.3f Gb/s' % (exp.offered, exp.capacity),
            exp.series_ms, out_dir))
    else:
        out.line('%s: series every %g ms, output in %s' % (PROG, exp.series_ms, out_dir))
    if policy_mode and exp.has_policy_by_tc:
        out.line('%s: note: group %s has policy_by_tc; each run removes it so that its policy '
                 'applies to every class' % (PROG, exp.group))

    runs, tables = [], {}
    t0 = time.monotonic()
    overheads = []
    names = exp.ip_names()
    for i, (run, label, conf) in enumerate(zip(plan, labels, confs)):
        files = {k: os.path.join(out_dir, label + ext) for k, ext in
                 (('json', '.json'), ('series', '.series.jsonl'), ('log', '.log'),
                  ('csv', '.series.csv'))}
        text = run['text']
        out.line('[%d/%d] %s: running %g s' % (i + 1, len(plan), text, duration))
        over = sum(overheads) / len(overheads) if overheads else 1.5

        def tick(el, i=i, over=over, text=text):
            total_el = time.monotonic() - t0
            left = max(0.0, duration + over - el) + (len(plan) - i - 1) * (duration + over)
            out.status('  run %d/%d %s: %.1f/%g s | elapsed %s, ETA %s' % (
                i + 1, len(plan), text, min(el, duration), duration,
                fmt_secs(total_el), fmt_secs(left)))

        r = {'policy': text} if policy_mode else {'key': run['key'], 'value': run['value']}
        r.update({'run': text, 'label': label})
        try:
            rc, wall, cpu = run_switch(switch, conf, files, duration, exp.series_ms,
                                       'lab%dr%d' % (os.getpid(), i + 1), tick)
            if rc < 0 and not (os.path.exists(files['json']) and os.path.getsize(files['json'])):
                # Killed by a signal before it wrote its stats (a crash): its log is kept and
                # the run is made once more, so one crash does not lose a sweep's point.
                kept = os.path.join(out_dir, label + '.crashed.log')
                os.replace(files['log'], kept)
                r['crashed'] = {'signal': -rc, 'log': kept}
                out.line('  warning: roceswitch died of signal %d before writing its stats (%s): '
                         'running it once more' % (-rc, kept))
                rc, wall, cpu = run_switch(switch, conf, files, duration, exp.series_ms,
                                           'lab%dr%db' % (os.getpid(), i + 1), tick)
            overheads.append(max(0.0, wall - duration))
            r['exit_code'] = rc
            stats = load_stats(files, rc)
            samples = load_series(files['series'])
            r.update(figures(stats, samples, exp, wall))
            r['worker_cpu_share'] = cpu
            cols, rows = series_table(samples, r.get('member_ports', []), r.get('bottleneck'),
                                      names if r.get('hosts') else None)
            write_series_csv(files['csv'], cols, rows)
            tables[label] = (cols, rows)
            r['files'] = {k: v for k, v in files.items() if os.path.exists(v)}
            r['files']['config'] = conf
            out.line('[%d/%d] %s: %s (%.1f s)' % (i + 1, len(plan), text, run_line(r), wall))
            if rc != 0:
                out.line('  warning: roceswitch exited %d (see %s)' % (rc, files['log']))
            if cpu is not None and cpu < CPU_SHARE_WARN:
                out.line('  warning: the worker was on a CPU only %.0f%% of the time it wanted one '
                         '(other load on the machine): the emulated hosts inside it lose real '
                         'time and the figures describe the machine more than the %s'
                         % (100 * cpu, 'policy' if policy_mode else 'run'))
            elif r['emulator_realtime'] is not None and r['emulator_realtime'] < REALTIME_WARN:
                out.line('  warning: the emulated senders that were never paused sent only %.0f%% '
                         'of their offered rate: the worker did not keep up in real time (a busy '
                         'machine?), so every goodput here is understated' % (
                             100 * r['emulator_realtime']))
            for c in r.get('collectives') or []:
                if not c.get('done'):
                    out.line('  warning: %s of %d bytes did not complete in %g s: give the run more '
                             'time (--duration)' % (c.get('op'), c.get('size_bytes') or 0, duration))
            if not samples:
                out.line('  warning: no time series in %s' % files['series'])
        except RunError as e:
            r['error'] = str(e)
            out.line('[%d/%d] %s: FAILED: %s' % (i + 1, len(plan), text, e))
        runs.append(r)
    out.clear_live()

    nic = any(r.get('hosts') for r in runs)
    colls = any(r.get('collectives') for r in runs)
    if policy_mode:
        write_summary_csv(os.path.join(out_dir, 'summary.csv'), runs)
    else:
        write_rows_csv(os.path.join(out_dir, 'summary.csv'),
                       VARY_FIELDS + (NIC_FIELDS if nic else []) + (['collectives'] if colls else [])
                       + RUN_FIELDS + (VARY_ROUTING_FIELDS if exp.group else []), runs)
    csvs = ['summary.csv']
    if nic:
        write_rows_csv(os.path.join(out_dir, 'hosts.csv'), HOST_FIELDS, host_rows(runs))
        csvs.append('hosts.csv')
    if colls:
        write_rows_csv(os.path.join(out_dir, 'collectives.csv'), COLLECTIVE_FIELDS,
                       collective_rows(runs))
        csvs.append('collectives.csv')
    doc = {'experiment': exp.name, 'file': a.experiment, 'group': exp.group,
           'receivers': exp.receivers, 'duration_s': duration,
           'ideal_gbps': exp.ideal, 'seed': a.seed, 'out': out_dir}
    if not policy_mode:
        doc['vary'] = {'key': plan[0]['key'], 'values': [r['value'] for r in plan]}
    if sets:
        doc['set'] = {k: d for k, _, _, d in sets}
    doc['runs'] = runs
    doc = json_clean(doc)
    with open(os.path.join(out_dir, 'summary.json'), 'w') as fh:
        json.dump(doc, fh, indent=2)
        fh.write('\n')
    pngs = plots(out_dir, exp, runs, tables, out)

    out.line()
    if policy_mode:
        out.line(table(runs))
        out.line()
        out.line('goodput: fraction of the ideal %.3f Gb/s; share: min/max of the group\'s packets '
                 'per member (%s each is even); drops: all but shutdown_flush' % (
                     exp.ideal, '1/%d' % len(exp.members) if exp.members else '1/N'))
    else:
        if exp.group:
            out.line(table(runs, ROUTING_COLS))
            out.line()
        if any(r.get('senders') for r in runs) or (nic and not colls):
            out.line(table(runs, NIC_COLS))
            out.line()
            steady = [r for r in runs if r.get('steady_from_s') is not None]
            out.line('goodput: all senders\' acknowledged payload over the run; steady min/max and '
                     'Jain (1 is even): each sender\'s payload Gb/s %s; rate: the DCQCN rates at '
                     'the end; CNPs received by the senders; PFC frames the switch sent; queue p50 '
                     '(steady), max, util: the bottleneck %s\'s backlog and wire rate over its '
                     'link; drops: all but shutdown_flush' % (
                         'from %.1f s (the last sender\'s first delivered byte + %.1f s) to the end' % (
                             max(r['steady_from_s'] for r in steady), STEADY_SETTLE_S)
                         if steady else '(whole run: no steady window)',
                         ', '.join(sorted({str(r.get('bottleneck')) for r in runs if 'error' not in r}))
                         or '-'))
            ht = hosts_table(runs)
            if ht:
                out.line()
                out.line(ht)
        if colls:
            out.line(nccl_table(runs, exp))
        if not (exp.group or nic or colls):
            out.line(table(runs, [('run', 'run', None), ('drops', 'drops', '%d'),
                                  ('PFC', 'pfc_frames_sent', '%d'), ('CPU', 'worker_cpu_share', 'pct')]))
    out.line('written to %s: %s, summary.json, per run NN-%s.{yaml,json,series.jsonl,series.csv,'
             'log}%s' % (out_dir, ', '.join(csvs), 'POLICY' if policy_mode else 'RUN',
                         (', ' + ', '.join(os.path.basename(p) for p in pngs)) if pngs else ''))
    if a.json:
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write('\n')
        sys.stdout.flush()
    return 1 if any('error' in r for r in runs) else 0
