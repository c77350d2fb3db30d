"""The control socket: one connection, its requests and responses, and the errors that end the program."""

import json
import socket

PROG = 'roceswitch-ctl'
DEFAULT_SOCKET = '/run/roceswitch/roceswitch.sock'
NOT_RUNNING = 'is roceswitch running with --control-socket?'


class CtlError(Exception):
    """The switch refused a request, or could not be reached: 'roceswitch-ctl: FIELD: REASON', exit 1."""

    def __init__(self, reason, field='', index=None):
        super().__init__(f'{field}: {reason}' if field else reason)
        self.reason, self.field, self.index = reason, field, index


class UsageError(Exception):
    """A bad command line: usage and the message on stderr, exit 2."""

    def __init__(self, message, parser=None):
        super().__init__(message)
        self.parser = parser


class Client:
    """One connection, opened at the first request and kept (watch sends many)."""

    def __init__(self, path, timeout):
        self.path, self.timeout, self.sock, self.buf, self.next_id = path, timeout, None, b'', 1

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(self.path)
        except PermissionError:
            s.close()
            raise CtlError(f'cannot connect to {self.path}: permission denied (root, the switch\'s user '
                           'and the socket\'s group may connect: roceswitch --control-group)') from None
        except OSError as e:
            s.close()
            raise CtlError(f'cannot connect to {self.path}: {e.strerror or e} ({NOT_RUNNING})') from None
        self.sock = s

    def exchange(self, req):
        """Sends one request (an id is added to an object without one); returns the response."""
        if self.sock is None:
            self.connect()
        rid = None
        if isinstance(req, dict):
            req = dict(req)
            rid = req.setdefault('id', self.next_id)
            self.next_id += 1
        try:
            self.sock.sendall(json.dumps(req, separators=(',', ':')).encode() + b'\n')
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused at accept: the switch wrote why, then closed; read it below
        except socket.timeout:
            raise CtlError(f'{self.path}: the switch took no request within {self.timeout:g} s') from None
        while True:
            resp = self.read_line()
            if not isinstance(resp, dict) or resp.get('id') in (rid, None):
                return resp

    def read_line(self):
        while b'\n' not in self.buf:
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                raise CtlError(f'{self.path}: no answer within {self.timeout:g} s') from None
            except OSError as e:
                raise CtlError(f'{self.path}: {e.strerror or e}') from None
            if not chunk:
                raise CtlError(f'{self.path}: the switch closed the connection without answering')
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b'\n')
        try:
            return json.loads(line)
        except ValueError:
            raise CtlError(f'{self.path}: not a JSON response: {line[:200]!r}') from None

    def call(self, req):
        """The result of a request, or CtlError with the switch's field and reason."""
        resp = self.exchange(req)
        if not isinstance(resp, dict):
            raise CtlError(f'unexpected response {resp!r}')
        if not resp.get('ok'):
            e = resp.get('error') or {}
            raise CtlError(e.get('reason', 'failed, no reason given'), e.get('field', ''), e.get('index'))
        return resp.get('result')
