"""A fabric experiment: a fabric file (docs/fabric.md: a top-level fabric:) plus an experiment:
section whose runs each set some keys of the file, optionally repeated once per seed; loaded,
checked (errors name file:line: key: reason) and turned into each run's fabric file."""

import copy
import os
import re

from .common import UsageError
from .experiment import Experiment, yaml_module
from .keys import parse_key, set_key, value_node, value_text


def is_fabric_file(path):
    """True for a YAML mapping with a top-level fabric: (what roceswitch runs as a fabric);
    False for anything else, unreadable or invalid files included (the single-switch loader
    then says what is wrong)."""
    try:
        yaml = yaml_module()
        with open(path) as fh:
            data = yaml.safe_load(fh)
    except Exception:  # noqa: BLE001 - any failure: not ours to report here
        return False
    return isinstance(data, dict) and 'fabric' in data


def str_node(yaml, text):
    return yaml.ScalarNode('tag:yaml.org,2002:str', text)


def child(node, name):
    """The value node of key `name` in a mapping node, or None."""
    if node is None or node.id != 'mapping':
        return None
    for k, v in node.value:
        if k.value == name:
            return v
    return None


def safe_label(text):
    return re.sub(r'[^A-Za-z0-9_.-]+', '-', str(text).replace(':', '-').replace('=', '-')).strip('-') or 'run'


class FabricExperiment(Experiment):
    """The fabric file (as a YAML node tree, re-emitted per run, and as Python values) and its
    experiment: section: name, duration_ms, series_ms, runs, seeds, seed_key, victims,
    goodput_lines, goodput_window_ms."""

    KEYS = ('name', 'description', 'duration_ms', 'series_ms', 'runs', 'seeds', 'seed_key',
            'victims', 'goodput_lines', 'goodput_window_ms')
    RUN_KEYS = ('label', 'set')

    def parse(self):
        d = self.data
        ex = d.get('experiment')
        if ex is None:
            self.fail('experiment', 'missing: a fabric experiment is a fabric file (docs/fabric.md) '
                      'plus an experiment: section (roceswitch-lab --help, "FABRIC EXPERIMENTS"); '
                      'to run the file as it is: roceswitch -- --config FILE', self.root)
        if not isinstance(ex, dict):
            self.fail('experiment', 'expected a mapping')
        for k in ex:
            if k not in self.KEYS:
                self.fail('experiment.%s' % k, 'unknown key in a fabric experiment (allowed: %s)'
                          % ', '.join(self.KEYS))
        self.name = str(ex.get('name') or os.path.splitext(os.path.basename(self.path))[0])
        fab = d.get('fabric') if isinstance(d.get('fabric'), dict) else {}
        default_ms = fab.get('duration_ms', 5)
        if isinstance(default_ms, bool) or not isinstance(default_ms, (int, float)):
            default_ms = 5
        self.duration_ms = self.number('duration_ms', ex.get('duration_ms', default_ms), 0.001, 86400000)
        self.series_ms = self.number('series_ms', ex.get('series_ms', 0.1), 0.01, 60000)
        # a cable cut's goodput dip: the received goodput over trailing windows of this many ms
        self.goodput_window_ms = self.number('goodput_window_ms', ex.get('goodput_window_ms', 0.1),
                                             0.01, 60000)
        self.runs = self.parse_runs(ex.get('runs'))
        self.seed_key = str(ex.get('seed_key', 'fabric.seed')).strip()
        try:
            self.seed_parts = parse_key(self.seed_key, 'experiment.seed_key')
        except UsageError as e:
            self.fail('experiment.seed_key', str(e).split(': ', 1)[1])
        self.seeds = None
        if ex.get('seeds') is not None:
            self.seeds = self.parse_seeds(ex['seeds'], 'experiment.seeds')
        if not self.key_places(self.seed_parts, self.yaml.ScalarNode('tag:yaml.org,2002:int', '1')):
            self.fail('experiment.seed_key', "'%s' reaches nothing in the fabric file" % self.seed_key)
        self.victims = self.parse_victims(ex.get('victims'))
        self.goodput_lines = self.parse_lines(ex.get('goodput_lines'))
        # what the single-switch code reads (rates_view, ip_names) does not apply here
        self.group, self.receivers, self.ports, self.port_order = None, [], {}, []

    def parse_runs(self, runs):
        """[{'label', 'text', 'sets': [(key, parts, value node, value)]}] from experiment.runs."""
        if runs is None:
            return None
        rnode = self.node_at('experiment.runs')
        if not isinstance(runs, list) or not runs or rnode is None or rnode.id != 'sequence':
            self.fail('experiment.runs', 'expected a non-empty list of {label: NAME, set: {KEY: '
                      'VALUE, ...}}, one run each')
        out, seen = [], set()
        for i, (r, node) in enumerate(zip(runs, rnode.value)):
            where = 'experiment.runs[%d]' % i
            if not isinstance(r, dict) or 'label' not in r:
                self.fail(where, 'expected a mapping with a label (and set: {KEY: VALUE, ...})')
            for k in r:
                if k not in self.RUN_KEYS:
                    self.fail('%s.%s' % (where, k), 'unknown key (allowed: %s)' % ', '.join(self.RUN_KEYS))
            label = str(r['label']).strip()
            if not label or label in seen or ',' in label:
                self.fail(where + '.label', 'empty, used twice or with a comma: each run needs a '
                          'label of its own (--runs lists them with commas)')
            seen.add(label)
            sets = []
            snode = child(node, 'set')
            if r.get('set') is not None:
                if not isinstance(r['set'], dict) or snode is None or snode.id != 'mapping':
                    self.fail(where + '.set', 'expected a mapping of config keys to values '
                              '({fabric.policy: spray, hosts.nic.reorder: go_back_n})')
                for knode, vnode in snode.value:
                    key = str(knode.value).strip()
                    kwhere = '%s.set.%s' % (where, key)
                    try:
                        parts = parse_key(key, kwhere)
                    except UsageError as e:
                        self.fail(kwhere, str(e).split(': ', 1)[1], knode)
                    if not self.key_places(parts, vnode):
                        self.fail(kwhere, "'%s' reaches nothing in the fabric file (a missing key "
                                  "or list index before the last key)" % key, knode)
                    sets.append((key, parts, vnode, self.yaml.safe_load(self.yaml.serialize(vnode))))
            out.append({'label': label, 'text': label, 'sets': sets})
        return out

    def parse_seeds(self, seeds, where):
        if not isinstance(seeds, list) or not seeds or \
                any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds):
            self.fail(where, 'expected a non-empty list of non-negative integers, e.g. [1, 2, 3, 4]')
        if len(set(seeds)) != len(seeds):
            self.fail(where, 'a seed is listed twice')
        return list(seeds)

    def host_names(self):
        """The hosts of the fabric as written (leaf_spine or fat_tree), or None if unknown."""
        fab = self.data.get('fabric') or {}
        try:
            ls = fab.get('leaf_spine')
            if isinstance(ls, dict):
                return {'leaf%d.h%d' % (l, h) for l in range(1, int(ls.get('leaves', 2)) + 1)
                        for h in range(1, int(ls.get('hosts_per_leaf', 1)) + 1)}
            ft = fab.get('fat_tree')
            if isinstance(ft, dict):
                k = int(ft.get('k', 4))
                return {'edge%d.h%d' % (e, h) for e in range(1, k * k // 2 + 1) for h in range(1, k // 2 + 1)}
        except (TypeError, ValueError, AttributeError):
            return None
        return None

    def parse_victims(self, v):
        if v is None:
            return []
        if not isinstance(v, list) or not v or not all(isinstance(x, str) for x in v):
            self.fail('experiment.victims', 'expected a list of host names (SWITCH.PORT, e.g. '
                      'leaf3.h2): the hosts that receive the victim traffic')
        hosts = self.host_names()
        for i, n in enumerate(v):
            if hosts is not None and n not in hosts:
                self.fail('experiment.victims[%d]' % i, "no host '%s' in the fabric (hosts: %s .. %s)"
                          % (n, min(hosts), max(hosts)))
        return list(v)

    def parse_lines(self, v):
        if v is None:
            return []
        if not isinstance(v, list):
            self.fail('experiment.goodput_lines', 'expected a list of {fraction: F, label: TEXT}')
        out = []
        for i, ln in enumerate(v):
            where = 'experiment.goodput_lines[%d]' % i
            if not isinstance(ln, dict) or set(ln) - {'fraction', 'label'} or 'fraction' not in ln:
                self.fail(where, 'expected {fraction: F, label: TEXT}')
            f = ln['fraction']
            if isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= 2:
                self.fail(where + '.fraction', 'expected a number in (0, 2]')
            out.append((float(f), str(ln.get('label', ''))))
        return out

    # ----------------------------------------------------------------------------------
    # the runs

    def plan(self, a, specs):
        """The runs: experiment.runs, else one per --policies spec (fabric.policy), else one per
        --values of --vary; else one run of the file as written."""
        yaml = self.yaml
        given = [n for n, v in (('--policies', a.policies), ('--vary', a.vary), ('--values', a.values))
                 if v is not None]
        if a.policies is not None and (a.vary is not None or a.values is not None):
            raise UsageError('--policies and --vary/--values: one invocation varies one thing')
        if a.runs is not None and given:
            raise UsageError('--runs picks among experiment.runs; %s replaces them: give one or '
                             'the other' % given[0])
        if specs is not None:
            runs = []
            for sp in specs:
                text = ('{name: %s, %s}' % (sp['name'], ', '.join('%s: %s' % kv for kv in sp['params']))
                        if sp['params'] else sp['name'])
                node = yaml.compose(text)
                runs.append({'label': sp['text'], 'text': sp['text'], 'policy': sp['text'],
                             'sets': [('fabric.policy', parse_key('fabric.policy', '--policies'),
                                       node, yaml.safe_load(text))]})
            return runs
        if a.vary is not None or a.values is not None:
            if a.vary is None or a.values is None:
                raise UsageError('a fabric experiment has no experiment.vary: give --vary KEY and '
                                 '--values V1,V2,... together')
            key, parts = a.vary.strip(), parse_key(a.vary, '--vary')
            toks = a.values.split(',')
            if any(not t.strip() for t in toks):
                raise UsageError("--values %r: an empty entry (two commas, or a trailing one)" % a.values)
            vals = [value_node(yaml, t, '--values') for t in toks]
            if not self.key_places(parts, vals[0][0]):
                raise UsageError("--vary: '%s' reaches nothing in the fabric file" % key)
            short = re.sub(r'\[.*\]$', '', key.rsplit('.', 1)[-1]) or key
            return [{'label': '%s=%s' % (short, value_text(d)), 'text': '%s=%s' % (short, value_text(d)),
                     'key': key, 'value': d, 'sets': [(key, parts, node, d)]} for node, d in vals]
        runs = self.runs or [{'label': 'as_written', 'text': 'as_written', 'sets': []}]
        if a.runs is not None:
            want = [t.strip() for t in a.runs.split(',')]
            known = [r['label'] for r in runs]
            bad = [w for w in want if w not in known]
            if bad or not want or len(set(want)) != len(want):
                raise UsageError('--runs %s: %s (experiment.runs: %s)' % (
                    a.runs, ("no run labelled '%s'" % bad[0]) if bad else 'empty or repeated',
                    ', '.join(known)))
            runs = [r for w in want for r in runs if r['label'] == w]
        return runs

    def seed_list(self, a):
        """The seeds each run is repeated with ([None]: once, as written)."""
        if a.seeds is not None:
            try:
                seeds = [int(t) for t in a.seeds.split(',')]
            except ValueError:
                raise UsageError('--seeds %r: expected comma-separated non-negative integers' % a.seeds)
            if any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
                raise UsageError('--seeds %r: non-negative integers, each once' % a.seeds)
            return seeds
        return self.seeds or [None]

    def absolute_paths(self, root):
        """The files the fabric file names (traffic[].cdf_file, fabric.switches[].config),
        relative to the experiment file, made absolute: the run's file is written elsewhere."""
        def items(seq):
            return seq.value if seq is not None and seq.id == 'sequence' else []
        base = os.path.dirname(os.path.abspath(self.path))
        places = [child(t, 'cdf_file') for t in items(child(root, 'traffic'))] + \
            [child(sw, 'config') for sw in items(child(child(root, 'fabric'), 'switches'))]
        for node in places:
            if node is not None and node.id == 'scalar' and node.value and not os.path.isabs(node.value):
                node.value = os.path.normpath(os.path.join(base, node.value))
                node.style = None

    def fabric_config(self, run, seed, sets, fabric_seed, source_note):
        """The YAML text of one run's fabric file: the file without experiment:, the run's keys
        set, then seed_key = seed, then every --set and, with --seed, fabric.seed."""
        yaml = self.yaml
        root = copy.deepcopy(self.root)
        root.value = [(k, v) for k, v in root.value if k.value != 'experiment']
        steps = list(run['sets'])
        if seed is not None:
            steps.append((self.seed_key, self.seed_parts,
                          yaml.ScalarNode('tag:yaml.org,2002:int', str(seed)), seed))
        steps += list(sets)
        if fabric_seed is not None:
            steps.append(('fabric.seed', parse_key('fabric.seed', '--seed'),
                          yaml.ScalarNode('tag:yaml.org,2002:int', str(fabric_seed)), fabric_seed))
        for key, parts, node, _ in steps:
            if not set_key(yaml, root, parts, node):
                raise UsageError("%s: the key '%s' reaches nothing in the fabric file" % (source_note, key))
        self.absolute_paths(root)
        body = yaml.serialize(root, width=100)
        what = '; '.join('%s=%s' % (k, value_text(d)) for k, _, _, d in steps) or 'as written'
        return '# Written by roceswitch-lab from %s: run %s: %s.\n%s' % (source_note, run['text'], what, body)
