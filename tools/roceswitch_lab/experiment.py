"""The experiment file: a roceswitch config plus an experiment: section, loaded, checked (errors
name file:line: key: reason) and turned into each run's config."""

import copy
import os
import re

from .common import UsageError
from .keys import parse_key, set_key, value_text


# --------------------------------------------------------------------------------------
# the experiment file


def yaml_module():
    try:
        import yaml
    except ImportError:
        raise UsageError('python3-yaml is missing: apt-get install python3-yaml (or bash '
                         'tools/deps.sh)')
    return yaml


class Experiment:
    """The experiment file: its roceswitch config (as a YAML node tree, re-emitted per run),
    the same as Python values (to read ports, flows and rates) and the experiment section."""

    KEYS = ('name', 'duration_s', 'group', 'receivers', 'ideal_gbps', 'series_ms', 'description',
            'vary', 'bottleneck')

    def __init__(self, path):
        yaml = yaml_module()
        self.yaml = yaml
        self.path = path
        try:
            with open(path) as fh:
                text = fh.read()
        except OSError as e:
            raise UsageError('%s: %s' % (path, e.strerror or e))
        try:
            self.root = yaml.compose(text)
            self.data = yaml.safe_load(text)
        except yaml.YAMLError as e:
            mark = getattr(e, 'problem_mark', None)
            raise UsageError('%s%s: not valid YAML: %s' % (
                path, ':%d' % (mark.line + 1) if mark else '',
                getattr(e, 'problem', None) or str(e).replace('\n', ' ')))
        if not isinstance(self.data, dict) or self.root is None:
            raise UsageError('%s: expected a mapping (a roceswitch config with an experiment: '
                             'section)' % path)
        self.parse()

    # errors name file:line: key.path: reason, as roceswitch's do
    def fail(self, keypath, why, node=None):
        line = ''
        if node is None:
            node = self.node_at(keypath)
        if node is not None:
            line = ':%d' % (node.start_mark.line + 1)
        raise UsageError('%s%s: %s: %s' % (self.path, line, keypath, why))

    def node_at(self, keypath):
        node = self.root
        for part in re.findall(r'[^.\[\]]+|\[\d+\]', keypath):
            if node is None:
                return None
            if part.startswith('['):
                i = int(part[1:-1])
                if node.id != 'sequence' or i >= len(node.value):
                    return node
                node = node.value[i]
            else:
                if node.id != 'mapping':
                    return node
                nxt = None
                for k, v in node.value:
                    if k.value == part:
                        nxt = v
                if nxt is None:
                    return node
                node = nxt
        return node

    def number(self, key, value, lo, hi):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail('experiment.' + key, 'expected a number, got %r' % (value,))
        if not lo <= value <= hi:
            self.fail('experiment.' + key, 'out of range [%g, %g], got %g' % (lo, hi, value))
        return float(value)

    def parse(self):
        d = self.data
        ex = d.get('experiment')
        if ex is None:
            self.fail('experiment', 'missing: an experiment file is a roceswitch config plus an '
                      'experiment: section (roceswitch-lab --help)', self.root)
        if not isinstance(ex, dict):
            self.fail('experiment', 'expected a mapping')
        for k in ex:
            if k not in self.KEYS:
                self.fail('experiment.%s' % k, 'unknown key (allowed: %s)' % ', '.join(self.KEYS))
        self.name = str(ex.get('name') or os.path.splitext(os.path.basename(self.path))[0])
        self.duration = self.number('duration_s', ex.get('duration_s', 10), 0.1, 86400)
        self.series_ms = self.number('series_ms', ex.get('series_ms', 10), 1, 60000)
        self.ideal_given = (self.number('ideal_gbps', ex['ideal_gbps'], 1e-6, 1e6)
                            if ex.get('ideal_gbps') is not None else None)

        # ports
        ports = d.get('ports')
        if not isinstance(ports, list) or not ports:
            self.fail('ports', 'missing or not a list: the experiment needs ports')
        self.ports = {}
        self.port_order = []
        for i, p in enumerate(ports):
            if not isinstance(p, dict) or 'name' not in p:
                self.fail('ports[%d]' % i, 'expected a mapping with a name')
            self.ports[str(p['name'])] = p
            self.port_order.append(str(p['name']))

        # what the runs vary: a config key (experiment.vary), else the group's policy
        self.vary = None
        if 'vary' in ex:
            self.parse_vary(ex['vary'])
        self.bottleneck = None
        if ex.get('bottleneck') is not None:
            self.bottleneck = str(ex['bottleneck'])
            if self.bottleneck not in self.ports:
                self.fail('experiment.bottleneck', "no port '%s' in ports" % self.bottleneck)

        # the group
        self.group = None
        self.members = []
        self.has_policy_by_tc = False
        self.receivers = []
        self.ideal = self.ideal_auto = self.offered = self.capacity = None
        if 'group' not in ex:
            if self.vary is not None:
                return
            self.fail('experiment.group', 'missing: the nexthop group whose policy each run sets '
                      '(or experiment.vary: the config key each run sets)',
                      self.node_at('experiment'))
        self.group = str(ex['group'])
        groups = d.get('nexthop_groups') or []
        names = [str(g.get('name')) for g in groups if isinstance(g, dict)]
        if self.group not in names:
            self.fail('experiment.group', "no nexthop group '%s' in nexthop_groups (groups: %s)"
                      % (self.group, ', '.join(names) or 'none'))
        self.group_index = names.index(self.group)
        g = groups[self.group_index]
        self.members = [str(m.get('port')) for m in (g.get('members') or []) if isinstance(m, dict)]
        self.has_policy_by_tc = 'policy_by_tc' in g

        # the receivers
        if 'receivers' not in ex and self.vary is not None:
            return
        if 'receivers' not in ex:
            self.fail('experiment.receivers', 'missing: the ports (or receiver group) whose '
                      'received flows are the goodput', self.node_at('experiment'))
        rv = ex['receivers']
        if isinstance(rv, str):
            group_ports = [n for n in self.port_order
                           if isinstance(self.ports[n].get('host'), dict)
                           and str(self.ports[n]['host'].get('receiver', '')) == rv]
            if group_ports:
                self.receivers = group_ports
            elif rv in self.ports:
                self.receivers = [rv]
            else:
                self.fail('experiment.receivers', "'%s' is neither a receiver group "
                          "(ports[].host.receiver) nor a port" % rv)
        elif isinstance(rv, list) and rv:
            self.receivers = []
            for i, n in enumerate(rv):
                if str(n) not in self.ports:
                    self.fail('experiment.receivers[%d]' % i, "no port '%s' in ports" % n)
                self.receivers.append(str(n))
        else:
            self.fail('experiment.receivers', 'expected a list of port names or one receiver '
                      'group name')
        for n in self.receivers:
            p = self.ports[n]
            if p.get('kind', 'ethdev' if 'devargs' in p else 'emulated_host') != 'emulated_host' \
                    or not isinstance(p.get('host'), dict):
                self.fail('experiment.receivers', "port '%s' is not an emulated host: only "
                          "emulated hosts count received flows" % n)
        self.ideal_auto, self.offered, self.capacity = self.default_ideal()
        self.ideal = self.ideal_given if self.ideal_given is not None else self.ideal_auto

    def parse_vary(self, v):
        if not isinstance(v, dict) or 'key' not in v or 'values' not in v:
            self.fail('experiment.vary', 'expected {key: KEY, values: [V1, V2, ...]}: the config key '
                      'each run sets and its values')
        for k in v:
            if k not in ('key', 'values'):
                self.fail('experiment.vary.%s' % k, 'unknown key (allowed: key, values)')
        try:
            parts = parse_key(v['key'], 'experiment.vary.key')
        except UsageError as e:
            self.fail('experiment.vary.key', str(e).split(': ', 1)[1])
        vals = v['values']
        vnode = self.node_at('experiment.vary.values')
        if not isinstance(vals, list) or not vals or vnode is None or vnode.id != 'sequence':
            self.fail('experiment.vary.values', 'expected a non-empty list of values, one run each')
        self.vary = {'key': str(v['key']).strip(), 'parts': parts, 'source': 'experiment.vary',
                     'values': [(n, d) for n, d in zip(vnode.value, vals)]}

    def key_places(self, parts, value):
        """How many places of the config (without experiment:) the key reaches."""
        root = copy.deepcopy(self.root)
        root.value = [(k, v) for k, v in root.value if k.value != 'experiment']
        return set_key(self.yaml, root, parts, value)

    def default_ideal(self):
        """(ideal, offered, capacity) in L2 wire Gb/s: the flows to the receivers' addresses,
        each sender capped at its own link, and the receivers' links."""
        rx_ips = {str(self.ports[n]['host'].get('ip')) for n in self.receivers}
        capacity = sum(float(self.ports[n].get('speed_gbps', 100)) for n in self.receivers)
        offered = 0.0
        for n in self.port_order:
            p = self.ports[n]
            h = p.get('host')
            if not isinstance(h, dict):
                continue
            rate = sum(float(f.get('rate_gbps', 1)) for f in (h.get('flows') or [])
                       if isinstance(f, dict) and str(f.get('dst')) in rx_ips)
            offered += min(rate, float(p.get('speed_gbps', 100)))
        if offered <= 0 and self.ideal_given is None:
            self.fail('experiment.receivers', 'no flow is sent to the receivers (%s): nothing '
                      'to measure; give flows to %s or set experiment.ideal_gbps'
                      % (', '.join(self.receivers), ', '.join(sorted(rx_ips))))
        return min(offered, capacity), offered, capacity

    def senders(self):
        """{port: offered wire Gb/s} of every emulated host that sends."""
        out = {}
        for n in self.port_order:
            p = self.ports[n]
            h = p.get('host')
            if isinstance(h, dict) and h.get('flows'):
                rate = sum(float(f.get('rate_gbps', 1)) for f in h['flows'] if isinstance(f, dict))
                out[n] = min(rate, float(p.get('speed_gbps', 100)))
        return out

    def run_config(self, run, seed, sets, source_note):
        """The YAML text of one run's roceswitch config: the run's policy (run['policy'], a
        --policies spec) or its key set to its value (run['vary']), then --set, then --seed."""
        yaml = self.yaml
        root = copy.deepcopy(self.root)
        root.value = [(k, v) for k, v in root.value if k.value != 'experiment']
        spec = run.get('policy')
        if spec is not None:
            groups = next(v for k, v in root.value if k.value == 'nexthop_groups')
            gnode = groups.value[self.group_index]
            if spec['params']:
                text = '{name: %s, %s}' % (spec['name'], ', '.join('%s: %s' % kv for kv in spec['params']))
            else:
                text = spec['name']
            try:
                pnode = yaml.compose(text)
            except yaml.YAMLError as e:
                raise UsageError('--policies: %s: %s' % (spec['text'], e))
            items = [(k, v) for k, v in gnode.value if k.value not in ('policy', 'policy_by_tc')]
            key = yaml.ScalarNode('tag:yaml.org,2002:str', 'policy')
            gnode.value = items[:1] + [(key, pnode)] + items[1:]
        if run.get('vary') is not None:
            key, parts, node = run['vary']
            if not set_key(yaml, root, parts, node):
                raise UsageError("%s: the key '%s' reaches nothing in the config" % (source_note, key))
        for key, parts, node, _ in sets:
            if not set_key(yaml, root, parts, node):
                raise UsageError("--set %s: the key reaches nothing in %s's config" % (key, source_note))
        if seed is not None:
            sw = [v for k, v in root.value if k.value == 'switch']
            seed_node = yaml.ScalarNode('tag:yaml.org,2002:int', str(seed))
            if sw and sw[0].id == 'mapping':
                sw[0].value = [(k, v) for k, v in sw[0].value if k.value != 'seed']
                sw[0].value.append((yaml.ScalarNode('tag:yaml.org,2002:str', 'seed'), seed_node))
            else:
                root.value.insert(0, (yaml.ScalarNode('tag:yaml.org,2002:str', 'switch'),
                                      yaml.MappingNode('tag:yaml.org,2002:map',
                                                       [(yaml.ScalarNode('tag:yaml.org,2002:str', 'seed'),
                                                         seed_node)], flow_style=True)))
        body = yaml.serialize(root, width=100)
        what = ('policy %s' % spec['text']) if spec is not None else run['text']
        extra = ''.join('; %s=%s' % (k, value_text(d)) for k, _, _, d in sets)
        return '# Written by roceswitch-lab from %s: %s%s.\n%s' % (source_note, what, extra, body)

    def rates_view(self):
        """From the config as written: the ECN thresholds (bytes) of the WRED profiles queues use,
        and the lossless PGs' XOFF (bytes), for the plots' lines; ({}, None) when absent."""
        d = self.data
        ecn = {}
        try:
            profs = d.get('wred_profiles') or {}
            for q, name in (d.get('queue_wred') or {}).items():
                pr = profs.get(name) or {}
                if pr.get('green_min_threshold') is not None:
                    ecn[int(q)] = (float(pr['green_min_threshold']), float(pr.get('green_max_threshold', 0)))
        except (AttributeError, TypeError, ValueError):
            ecn = {}
        xoff = None
        try:
            buf = d.get('buffer') or {}
            profs = buf.get('profiles') or {}
            for _, name in (buf.get('pg') or {}).items():
                x = (profs.get(name) or {}).get('xoff')
                if x is not None:
                    xoff = float(x) if xoff is None else min(xoff, float(x))
        except (AttributeError, TypeError, ValueError):
            xoff = None
        return ecn, xoff

    def ip_names(self):
        """{host IP: port name} (a receiver group's IP: its first port)."""
        out = {}
        for n in self.port_order:
            h = self.ports[n].get('host')
            if isinstance(h, dict) and h.get('ip') is not None:
                out.setdefault(str(h['ip']), n)
        return out
