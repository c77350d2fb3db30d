"""The arguments' types (argparse's type=) and the operation fields built from them."""

import argparse

from .client import UsageError


def scalar(text):
    """A parameter's value as the YAML configuration would read it: int, float, bool or string."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {'true': True, 'false': False}.get(text.lower(), text)


def keyvals(text):
    """K=V[,K=V...] -> [(K, V)]"""
    out = []
    for item in filter(None, text.split(',')):
        k, sep, v = item.partition('=')
        if not sep or not k:
            raise argparse.ArgumentTypeError(f"'{item}': expected KEY=VALUE")
        out.append((k, scalar(v)))
    return out


def members(text):
    """PORT=MAC[*WEIGHT][,...] -> [{port, mac, weight?}]"""
    out = []
    for item in filter(None, text.split(',')):
        port, sep, rest = item.partition('=')
        mac, star, weight = rest.partition('*')
        if not sep or not port or not mac or (star and not weight.isdigit()):
            raise argparse.ArgumentTypeError(f"'{item}': expected PORT=MAC[*WEIGHT]")
        out.append({'port': port, 'mac': mac, **({'weight': int(weight)} if star else {})})
    return out


def nexthops_arg(text):
    try:
        return members(text)
    except argparse.ArgumentTypeError as e:
        raise UsageError(f'nexthops: {e}') from None


def tc_policy(text):
    """TC=NAME[:K=V...] -> (TC, policy); 'none' clears the map."""
    if text == 'none':
        return None
    tc, sep, rest = text.partition('=')
    if not sep or not tc.isdigit() or not rest:
        raise argparse.ArgumentTypeError(f"'{text}': expected TC=POLICY[:KEY=VALUE...] or none")
    name, *params = rest.split(':')
    return tc, policy_value(name, [kv for p in params for kv in keyvals(p)])


def policy_value(name, params):
    return {'name': name, **dict(params)} if params else name


def positive(conv):
    def check(text):
        v = conv(text)  # a ValueError: argparse says "invalid int value"
        if v <= 0:
            raise argparse.ArgumentTypeError(f"'{text}': must be above 0")
        return v
    check.__name__ = conv.__name__
    return check


def int_map(text):
    """K=V,K=V -> {"K": V} (a QoS map's changed entries)."""
    out = {}
    for kv in text.split(','):
        k, sep, v = kv.partition('=')
        if not sep or not k.strip().isdigit() or not v.strip().lstrip('-').isdigit():
            raise argparse.ArgumentTypeError(f"expected KEY=VALUE,... with integers, got '{text}'")
        out[k.strip()] = int(v)
    return out


def addresses(text):
    """ADDR[,ADDR...] -> [ADDR]; '' or 'none' -> [] (no address of that family)."""
    if text.strip().lower() in ('', 'none'):
        return []
    return [x.strip() for x in text.split(',') if x.strip()]


def vlan_id(text):
    """VID -> VID; 'none' -> 'none' (sent as null: none)."""
    ids = vlan_ids(text)
    if ids != 'none' and len(ids) != 1:
        raise argparse.ArgumentTypeError(f"'{text}': expected one VLAN id, or none")
    return ids if ids == 'none' else ids[0]


def vlan_ids(text):
    """VID[,VID...] -> [VID]; 'none' -> 'none' (sent as null: none)."""
    if text.strip().lower() == 'none':
        return 'none'
    try:
        vids = [int(x) for x in text.split(',') if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected VLAN ids (1-4094), comma-separated, or none") from None
    if not vids:
        raise argparse.ArgumentTypeError("expected VLAN ids, or none")
    return vids


def on_off(text):
    """on|off -> True|False"""
    if text not in ('on', 'off'):
        raise argparse.ArgumentTypeError(f"'{text}': expected on or off")
    return text == 'on'


def opt(**fields):
    """The fields whose value was given (not None)."""
    return {k: v for k, v in fields.items() if v is not None}


def per_queue(kind):
    """V (every queue) or V0,V1,...,V7 -> V or a list of 8, each converted by `kind`."""
    def conv(text):
        parts = text.split(',')
        if len(parts) not in (1, 8):
            raise argparse.ArgumentTypeError(f"expected one value or eight (one a queue), got '{text}'")
        try:
            vals = [kind(x.strip()) for x in parts]
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a valid value: '{text}'") from None
        return vals[0] if len(vals) == 1 else vals
    return conv
