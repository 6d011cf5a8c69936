"""How ``sitecache serve`` runs gunicorn: its settings, a worker that bounds slow clients and an
access log that escapes what clients send.

The defaults suit a site exposed directly to the internet (and work as well behind a proxy):

- gunicorn's ``gthread`` worker with `DEFAULT_THREADS` threads per process, so a few slow
  clients cannot occupy every worker (the sync worker serves one connection per process);
- `BoundedThreadWorker`: a request's headers and body must arrive within ``timeout`` seconds
  (`DEFAULT_TIMEOUT`), and each response write must complete within as long, so a client
  trickling one byte a second (or reading that slowly) holds a thread for ``timeout`` seconds
  at most;
- ``forwarded_allow_ips`` is empty: gunicorn trusts nobody's ``X-Forwarded-*`` headers. The
  application trusts them only when ``proxy_count`` is configured (`werkzeug`'s ``ProxyFix``);
- `EscapingAccessLog`: every client-controlled field of an access-log line (the Basic-auth user
  name, the request line, the referrer, the user agent, headers) is escaped, so a client cannot
  forge log lines or send terminal escapes.

Before gunicorn starts, `check_bind` and `check_plugin` report the expected failures (an address
that cannot be listened on, a plugin that cannot be loaded) on one line, and `site_url_for`
gives the site URL a bind on one host implies.
"""

from __future__ import annotations

import errno
import importlib
import re
import socket
import time
from typing import Any, Final

from gunicorn.glogging import Logger
from gunicorn.http.errors import NoMoreData
from gunicorn.workers.gthread import ThreadWorker

from sitecache.config import ConfigError

__all__ = [
    "DEFAULT_GRACEFUL_TIMEOUT",
    "DEFAULT_KEEPALIVE",
    "DEFAULT_THREADS",
    "DEFAULT_TIMEOUT",
    "BoundedThreadWorker",
    "EscapingAccessLog",
    "check_bind",
    "check_plugin",
    "escape_log_value",
    "gunicorn_argv",
    "site_url_for",
]

DEFAULT_THREADS: Final = 8
"""Threads per worker process."""
DEFAULT_TIMEOUT: Final = 30
"""Seconds a request's headers and body may take to arrive (and a silent worker may live)."""
DEFAULT_GRACEFUL_TIMEOUT: Final = 20
"""Seconds a stopping worker has to finish the requests it is serving."""
DEFAULT_KEEPALIVE: Final = 5
"""Seconds an idle kept-alive connection stays open."""

_UNSAFE_LOG_CHARACTERS = re.compile(r'[^\x20-\x7e]|["\\]')


def escape_log_value(text: str) -> str:
    """``text`` with control characters, non-ASCII, quotes and backslashes as ``\\xNN``
    (``\\uNNNN`` beyond latin-1): one printable line that cannot end a quoted field."""
    return _UNSAFE_LOG_CHARACTERS.sub(_escape_character, text)


def _escape_character(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


class EscapingAccessLog(Logger):  # type: ignore[misc]
    """gunicorn's logger with every access-log atom escaped (`escape_log_value`)."""

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        """The access-log fields, escaped."""
        atoms: dict[str, Any] = super().atoms(resp, req, environ, request_time)
        # SECURITY: a Basic-auth user name, a header or a path with a newline must not forge
        # a log line.
        return {
            key: escape_log_value(value) if isinstance(value, str) else value
            for key, value in atoms.items()
        }


class ReadDeadlineExceededError(NoMoreData):  # type: ignore[misc]
    """The client did not send its request (headers and body) in time."""


class DeadlineSocket:
    """A client socket whose reads give up at ``deadline`` (a `time.monotonic` value) and whose
    writes give up after ``write_timeout`` seconds; everything else is the socket's own."""

    def __init__(self, sock: socket.socket, write_timeout: float) -> None:
        self._sock = sock
        self.deadline = time.monotonic() + write_timeout
        self.write_timeout = write_timeout

    def _remaining(self) -> float:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise ReadDeadlineExceededError()
        return remaining

    def recv(self, size: int, *flags: int) -> bytes:
        """``socket.recv``, waiting no later than the deadline."""
        previous = self._sock.gettimeout()
        self._sock.settimeout(self._remaining())
        try:
            return self._sock.recv(size, *flags)
        except TimeoutError as exc:
            raise ReadDeadlineExceededError() from exc
        finally:
            self._sock.settimeout(previous)

    def recv_into(self, buffer: Any, *args: int) -> int:
        """``socket.recv_into``, waiting no later than the deadline."""
        previous = self._sock.gettimeout()
        self._sock.settimeout(self._remaining())
        try:
            return self._sock.recv_into(buffer, *args)
        except TimeoutError as exc:
            raise ReadDeadlineExceededError() from exc
        finally:
            self._sock.settimeout(previous)

    def sendall(self, data: Any, *flags: int) -> None:
        """``socket.sendall`` within ``write_timeout`` seconds (a slow reader is dropped)."""
        previous = self._sock.gettimeout()
        self._sock.settimeout(self.write_timeout)
        try:
            self._sock.sendall(data, *flags)
        finally:
            self._sock.settimeout(previous)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class BoundedThreadWorker(ThreadWorker):  # type: ignore[misc]
    """gunicorn's ``gthread`` worker where each request must arrive within ``timeout`` seconds.

    gunicorn already hands a connection that sends nothing back to its poller; a client that
    trickles bytes would still hold a thread for as long as it likes. Here the clock starts when a
    thread takes the connection (for each request of a kept-alive connection).
    """

    def handle(self, conn: Any) -> Any:
        """Serve one request of ``conn`` with a read deadline."""
        limit = float(self.cfg.timeout)
        if not self.cfg.is_ssl:  # TLS sockets are wrapped by gunicorn itself; left as they are
            if not isinstance(conn.sock, DeadlineSocket):
                conn.sock = DeadlineSocket(conn.sock, limit)
            conn.sock.deadline = time.monotonic() + limit
        return super().handle(conn)


def gunicorn_argv(
    bind: str,
    workers: int,
    *,
    threads: int = DEFAULT_THREADS,
    timeout: int = DEFAULT_TIMEOUT,
    graceful_timeout: int = DEFAULT_GRACEFUL_TIMEOUT,
    keepalive: int = DEFAULT_KEEPALIVE,
    app: str = "sitecache.app:create_app()",
) -> list[str]:
    """The arguments after ``python -m gunicorn`` that serve ``app`` with sitecache's defaults."""
    return [
        "--bind", bind,
        "--workers", str(workers),
        "--worker-class", f"{__name__}.BoundedThreadWorker",
        "--threads", str(threads),
        "--timeout", str(timeout),
        "--graceful-timeout", str(graceful_timeout),
        "--keep-alive", str(keepalive),
        # SECURITY: no peer (not even loopback) may set the scheme or client address through
        # X-Forwarded-* here; the application applies them itself only with proxy_count.
        "--forwarded-allow-ips", "",
        "--logger-class", f"{__name__}.EscapingAccessLog",
        # gunicorn's control socket is one path per user ($HOME/.gunicorn/gunicorn.ctl): two
        # sites of one user would share it. sitecache does not use it.
        "--no-control-socket",
        "--access-logfile", "-",
        app,
    ]  # fmt: skip


# ---------------------------------------------------------------------- before gunicorn starts
def site_url_for(bind: str) -> str | None:
    """``http://host:port`` of a bind address naming one host (not 0.0.0.0, ::, a socket)."""
    host, _, port = bind.rpartition(":")
    # Not a bind on every interface: those are compared with, not bound to.
    wildcard = ("0.0.0.0", "[::]", "::")  # noqa: S104
    if not host or not port.isdigit() or host in wildcard or "/" in host:
        return None
    return f"http://{host}:{port}"


def check_bind(bind: str) -> None:
    """Raise `ConfigError` when ``host:port`` cannot be listened on (in use, not ours, bad)."""
    if bind.startswith(("unix:", "fd://")):
        return
    host, _, port = bind.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"  # noqa: S104 - gunicorn's own default for ":port"
    if not port.isdigit():
        raise ConfigError(f"--bind {bind!r} is not host:port")
    try:
        infos = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        reason = "the port is already in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise ConfigError(
            f"cannot listen on {bind}: {reason or exc}; choose another address with --bind "
            "(make run: PORT=8001 make run)"
        ) from exc


def check_plugin(spec: str) -> None:
    """Raise `ConfigError` when the plugin ``module:function`` cannot be imported and called."""
    module_name, _, attribute = spec.partition(":")
    try:
        target: object = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except Exception as exc:  # an import error, or anything the module raised while importing
        raise ConfigError(f"plugin {spec!r} cannot be loaded: {exc}") from exc
    if not callable(target):
        raise ConfigError(f"plugin {spec!r} is not callable")
