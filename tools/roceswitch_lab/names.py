"""How the lab finds and names things in roceswitch's stats: a port's host, a received flow, a
NIC's QP, and whether a QP sends the experiment's own traffic."""


def host_of(port_json):
    return port_json.get('host') if isinstance(port_json.get('host'), dict) else {}


def flow_key(f):
    return '%s/qp%d' % (f.get('src'), f.get('qp', 0))


def flow_order(f):
    try:
        ip = tuple(int(x) for x in str(f.get('src')).split('.'))
    except ValueError:
        ip = (str(f.get('src')),)
    return ip, f.get('qp', 0)


def qp_name(port, q, names):
    """'h1->h0/0x31': the host, its peer (by port name where the config has it), the QP number."""
    peer = str(q.get('peer'))
    return '%s->%s/%#x' % (port, names.get(peer, peer), int(q.get('qpn', 0)))


def sends(q):
    """A requester QP not part of a collective: a sender of the experiment's own traffic."""
    return q.get('role') == 'requester' and not q.get('tag')
