"""The client of the control socket: requests one at a time, route transactions encoded as
request lines, the switch's groups and table sizes, and the barrier that ends a timed window."""

import json
import socket
import time

from .common import Failure, SwitchError, Timeout
from .prefixes import BARRIER_V4


def encode_add(rid, routes):
    """One transaction of route.add, as the bytes of a request line (faster than json.dumps;
    prefixes and group names need no escaping)."""
    ops = ','.join('{"op":"route.add","prefix":"%s","group":"%s"}' % (r.prefix, r.group) for r in routes)
    return ('{"id":%d,"ops":[%s]}\n' % (rid, ops)).encode()


def encode_del(rid, routes):
    ops = ','.join('{"op":"route.del","prefix":"%s"}' % r.prefix for r in routes)
    return ('{"id":%d,"ops":[%s]}\n' % (rid, ops)).encode()


def json_encode_add(rid, routes):
    """The same request as the ordinary json.dumps of a list of dicts would write it (only to
    time what encoding costs a client)."""
    return (json.dumps({'id': rid, 'ops': [{'op': 'route.add', 'prefix': r.prefix, 'group': r.group}
                                            for r in routes]}, separators=(',', ':')) + '\n').encode()


class Client:
    """One connection to the control socket; requests one at a time."""

    def __init__(self, path, deadline):
        self.path, self.deadline, self.buf, self.next_id = path, deadline, b'', 1 << 30
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(max(0.1, self.remaining()))
        try:
            self.sock.connect(path)
        except OSError as e:
            self.sock.close()
            raise Failure('cannot connect to %s: %s' % (path, e.strerror or e)) from None

    def remaining(self):
        return self.deadline - time.monotonic()

    def close(self):
        self.sock.close()

    def send_line(self, line, tick=None):
        """Sends one request line, returns its response (a dict). tick() runs about once a
        second while the answer is awaited."""
        if self.remaining() <= 0:
            raise Timeout('--timeout reached')
        self.sock.settimeout(max(0.1, self.remaining()))
        try:
            self.sock.sendall(line)
        except socket.timeout:
            raise Timeout('the switch took no request before --timeout') from None
        except OSError as e:
            raise Failure('%s: %s' % (self.path, e.strerror or e)) from None
        while b'\n' not in self.buf:
            rem = self.remaining()
            if rem <= 0:
                raise Timeout('no answer from the switch before --timeout')
            self.sock.settimeout(min(1.0, rem) if tick else rem)
            try:
                chunk = self.sock.recv(1 << 16)
            except socket.timeout:
                if tick:
                    tick()
                continue
            except OSError as e:
                raise Failure('%s: %s' % (self.path, e.strerror or e)) from None
            if not chunk:
                raise Failure('the switch closed the control connection')
            self.buf += chunk
        resp, _, self.buf = self.buf.partition(b'\n')
        try:
            return json.loads(resp)
        except ValueError:
            raise Failure('not a JSON response: %r' % resp[:200]) from None

    def call(self, req, tick=None):
        """The result of a request object, or SwitchError."""
        req = dict(req)
        req['id'] = self.next_id
        self.next_id += 1
        resp = self.send_line((json.dumps(req, separators=(',', ':')) + '\n').encode(), tick)
        return result_of(resp)


def result_of(resp):
    if not isinstance(resp, dict):
        raise Failure('unexpected response %r' % (resp,))
    if not resp.get('ok'):
        e = resp.get('error') or {}
        raise SwitchError(e.get('reason', 'failed, no reason given'), e.get('field', ''), e.get('index'))
    return resp.get('result')


def usable_groups(cl):
    """The names of the switch's next-hop groups a route.add may name, and the groups made for
    this run. A route given as port + mac or nexthops in the config has a group of its own
    ('route:PREFIX') that no other route may name: when there is no other group (the embedded
    demo), groups 'route_install_N' are made with the same members, up to 8."""
    listed = cl.call({'op': 'group.list'})
    names = [g['name'] for g in listed if not g['name'].startswith('route:')]
    if names:
        return names, []
    made = []
    for g in listed[:8]:
        name = 'route_install_%d' % len(made)
        cl.call({'op': 'group.add', 'name': name,
                 'members': [{'port': m['port'], 'mac': m['mac']} for m in g['members']]})
        made.append(name)
    return made, made


def table_sizes(cl):
    lim = cl.call({'op': 'limits'})
    return (lim['routes_v4']['used'], lim['routes_v6']['used'],
            lim['routes_v4']['max'], lim['routes_v6']['max'])


def barrier_line(cl):
    """A transaction that changes nothing but still goes through FibWriter::commit, which
    first waits until the last batch has been replayed on the second bank: its answer ends a
    timed window. It sets a route that exists to the group it has (replace: rte_lpm finds the
    rule and writes nothing), or, in a switch with no route, adds and deletes one /32."""
    got = cl.call({'op': 'route.list', 'limit': 1})['routes']
    if got:
        return ('{"id":1,"ops":[{"op":"route.add","prefix":"%s","group":"%s","replace":true}]}\n'
                % (got[0]['prefix'], got[0]['group'])).encode()
    return ('{"id":1,"ops":[{"op":"route.add","prefix":"%s","group":"%s"},{"op":"route.del",'
            '"prefix":"%s"}]}\n' % (BARRIER_V4, cl.group0, BARRIER_V4)).encode()


def barrier(cl):
    result_of(cl.send_line(cl.barrier))
