"""Config keys (experiment.vary, --vary, --set): paths like ports[*].host.nic.cc, setting them in
a YAML node tree, and the values given on the command line."""

import copy
import json
import re

from .common import UsageError


# --------------------------------------------------------------------------------------
# config keys (experiment.vary, --vary, --set)

KEY_PART = r'[A-Za-z_][A-Za-z0-9_-]*'
KEY_RE = re.compile(r'^%s(\[(\d+|\*)\])*(\.%s(\[(\d+|\*)\])*)*$' % (KEY_PART, KEY_PART))


def parse_key(text, where):
    """'ports[*].host.nic.cc' -> [('key', 'ports'), ('all',), ('key', 'host'), ...]."""
    text = str(text).strip()
    if not KEY_RE.match(text):
        raise UsageError("%s: '%s' is not a config key (keys joined by dots, list elements as "
                         "[i] or [*]: collectives[0].size_bytes, ports[*].host.nic.cc)" % (where, text))
    parts = []
    for tok in re.findall(r'%s|\[\d+\]|\[\*\]' % KEY_PART, text):
        if tok == '[*]':
            parts.append(('all',))
        elif tok.startswith('['):
            parts.append(('idx', int(tok[1:-1])))
        else:
            parts.append(('key', tok))
    if parts[0] == ('key', 'experiment'):
        raise UsageError("%s: '%s': the experiment: section is the lab's, not the switch's" % (where, text))
    return parts


def set_key(yaml, node, parts, value):
    """Sets the key `parts` under `node` (a YAML node tree) to a copy of the node `value`, the
    last key added where missing; returns the number of places set (0: the path reaches none)."""
    kind = parts[0][0]
    last = len(parts) == 1
    if kind == 'key':
        if node.id != 'mapping':
            return 0
        name = parts[0][1]
        for i, (k, v) in enumerate(node.value):
            if k.value == name:
                if last:
                    node.value[i] = (k, copy.deepcopy(value))
                    return 1
                return set_key(yaml, v, parts[1:], value)
        if last:
            node.value.append((yaml.ScalarNode('tag:yaml.org,2002:str', name), copy.deepcopy(value)))
            return 1
        return 0
    if node.id != 'sequence':
        return 0
    if kind == 'idx':
        i = parts[0][1]
        if i >= len(node.value):
            return 0
        if last:
            node.value[i] = copy.deepcopy(value)
            return 1
        return set_key(yaml, node.value[i], parts[1:], value)
    if last:
        node.value = [copy.deepcopy(value) for _ in node.value]
        return len(node.value)
    return sum(set_key(yaml, el, parts[1:], value) for el in node.value)


def value_node(yaml, text, where):
    """A value given on the command line as a YAML node (65536 a number, dcqcn a string)."""
    text = text.strip()
    try:
        node = yaml.compose(text) if text else None
        data = yaml.safe_load(text) if text else None
    except yaml.YAMLError as e:
        raise UsageError('%s: %r is not a YAML value: %s' % (where, text, str(e).replace('\n', ' ')))
    if node is None or node.id != 'scalar':
        raise UsageError('%s: %r: a value is a number, a word or true/false' % (where, text))
    return node, data


def value_text(v):
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(',', ':'))
    return str(v)


def parse_sets(items, yaml):
    """--set KEY=VALUE ... -> [(key text, parts, value node, value)]."""
    out = []
    for item in items or []:
        k, eq, v = item.partition('=')
        if not eq or not k.strip():
            raise UsageError('--set %r: expected KEY=VALUE' % item)
        node, data = value_node(yaml, v, '--set %s' % k.strip())
        out.append((k.strip(), parse_key(k, '--set'), node, data))
    return out
