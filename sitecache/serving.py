"""How ``sitecache serve`` runs gunicorn: its settings, a worker that keeps answering while slow
or idle clients hold connections open, and an access log that escapes what clients send.

The defaults suit a site exposed directly to the internet (though a reverse proxy such as nginx
belongs in front of a public site: see the README), and work as well behind a proxy:

- gunicorn's ``gthread`` worker with `DEFAULT_THREADS` threads per process, refined by
  `BoundedThreadWorker`: a connection gets a thread only once its request has arrived. Until
  then the worker's poller watches it and reads what it sends, without a thread, so connections
  that send nothing, or trickle their request a byte at a time (slowloris), occupy no thread;
- each request's head must arrive within `DEFAULT_HEADER_TIMEOUT` seconds (at most ``timeout``)
  and the whole request within ``timeout`` (`DEFAULT_TIMEOUT`); each response write must
  complete within ``timeout`` too, so a client reading one byte a second is dropped;
- ``forwarded_allow_ips`` is empty and the worker clears ``secure_scheme_headers`` and
  ``forwarder_headers``: gunicorn trusts nobody's ``X-Forwarded-*`` headers, not even a unix
  socket's peers (which it would trust whatever ``forwarded_allow_ips`` says). The application
  trusts them only when ``proxy_count`` is configured (`werkzeug`'s ``ProxyFix``);
- `EscapingAccessLog`: every client-controlled field of an access-log line (the Basic-auth user
  name, the request line, the referrer, the user agent, headers) is escaped, so a client cannot
  forge log lines or send terminal escapes, and no secret is logged: passwords, nonces and
  tokens in a URL's query (`SECRET_PARAMETERS`) and cookie, credential or nonce headers show
  as ``***``.

Before gunicorn starts, `check_bind` and `check_plugin` report the expected failures (an address
that cannot be listened on, a plugin that cannot be loaded) on one line (``sitecache serve``
also builds the application once when plugins are configured, so one whose activation raises
is reported the same way), and `site_url_for` gives the site URL a bind on one host implies.
"""

from __future__ import annotations

import errno
import re
import selectors
import socket
import sys
import time
from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Any, Final
from urllib.parse import unquote_plus

from gunicorn.glogging import Logger
from gunicorn.http.errors import NoMoreData
from gunicorn.http2 import negotiation
from gunicorn.workers.gthread import ThreadWorker

from sitecache.config import ConfigError
from sitecache.plugin_loading import load_plugin_target
from sitecache.request_arrival import (
    DEFAULT_BODY_LIMIT,
    DEFAULT_HEAD_LIMIT,
    Arrival,
    ArrivingRequest,
)

__all__ = [
    "DEFAULT_GRACEFUL_TIMEOUT",
    "DEFAULT_HEADER_TIMEOUT",
    "DEFAULT_KEEPALIVE",
    "DEFAULT_THREADS",
    "DEFAULT_TIMEOUT",
    "SECRET_PARAMETERS",
    "BoundedThreadWorker",
    "EscapingAccessLog",
    "bind_port",
    "check_bind",
    "check_plugin",
    "escape_log_value",
    "gunicorn_argv",
    "redact_query",
    "redact_url",
    "site_url_for",
]

DEFAULT_THREADS: Final = 8
"""Threads per worker process."""
DEFAULT_TIMEOUT: Final = 30
"""Seconds a request's headers and body may take to arrive (and a silent worker may live)."""
DEFAULT_HEADER_TIMEOUT: Final = 10
"""Seconds a request's head may take to arrive (at most ``timeout``): from the connection's
acceptance, or on a kept-alive connection from the request's first byte."""
DEFAULT_GRACEFUL_TIMEOUT: Final = 20
"""Seconds a stopping worker has to finish the requests it is serving."""
DEFAULT_KEEPALIVE: Final = 5
"""Seconds an idle kept-alive connection stays open."""
APP_LOAD_ERROR: Final = 4
"""The exit status of a worker whose application cannot load: gunicorn's master then stops
(gunicorn's ``Arbiter.APP_LOAD_ERROR``), rather than starting workers that fail again."""

STOP_LINGER: Final = 2.0
"""Seconds a stopping worker still waits for requests that are arriving (gunicorn gives its
kept-alive connections as long)."""
_SWEEP_INTERVAL: Final = 0.25
"""Seconds between two looks for connections whose request is late (the poller wakes at least
once a second)."""
_READ_SIZE: Final = 65536

_UNSAFE_LOG_CHARACTERS = re.compile(r'[^\x20-\x7e]|["\\]')


def escape_log_value(text: str) -> str:
    """``text`` with control characters, non-ASCII, quotes and backslashes as ``\\xNN``
    (``\\uNNNN`` beyond latin-1): one printable line that cannot end a quoted field."""
    return _UNSAFE_LOG_CHARACTERS.sub(_escape_character, text)


def _escape_character(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


#: Query parameters whose values never reach the access log (lower case): passwords (a
#: protected post's ``password``, a login's ``pwd``), nonces and tokens.
SECRET_PARAMETERS: Final = frozenset(
    {"password", "pwd", "pass", "post_password", "_sitenonce", "_wpnonce", "nonce", "token",
     "access_token", "secret"}
)  # fmt: skip

#: Words in an access-log atom's name (``{cookie}i``, ``{http_authorization}e``...) whose value
#: is logged as ``***``: cookies, credentials and nonces sent in headers.
_SECRET_ATOMS: Final = ("cookie", "authorization", "nonce")

#: Where the access log shows a URL with its query: the request line, the query, the referrer.
_URL_ATOMS: Final = ("r", "q", "f")


def redact_query(query: str) -> str:
    """``query`` (``a=1&password=x``) with the value of every `SECRET_PARAMETERS` name as
    ``***``; the rest, and the order, as sent."""
    pairs = query.split("&")
    for index, pair in enumerate(pairs):
        name, equals, _ = pair.partition("=")
        if equals and unquote_plus(name).strip().lower() in SECRET_PARAMETERS:
            pairs[index] = f"{name}=***"
    return "&".join(pairs)


def redact_url(text: str, bare_query: bool = False) -> str:
    """A request line, URL or (``bare_query``) query string with `redact_query` applied to its
    query, which ends at the first space or ``#``."""
    if bare_query:
        return redact_query(text)
    head, mark, rest = text.partition("?")
    if not mark:
        return text
    end = min((i for i in (rest.find(" "), rest.find("#")) if i >= 0), default=len(rest))
    return head + mark + redact_query(rest[:end]) + rest[end:]


class EscapingAccessLog(Logger):  # type: ignore[misc]
    """gunicorn's logger with every access-log atom escaped (`escape_log_value`) and no secret
    in it: the values of `SECRET_PARAMETERS` in URLs, and cookie, credential and nonce headers,
    are logged as ``***``."""

    def atoms(self, resp: Any, req: Any, environ: Any, request_time: Any) -> dict[str, Any]:
        """The access-log fields, redacted and escaped."""
        atoms: dict[str, Any] = super().atoms(resp, req, environ, request_time)
        for key, value in atoms.items():
            if not isinstance(value, str):
                continue
            if key in _URL_ATOMS:
                value = redact_url(value, bare_query=key == "q")
            elif any(word in key.lower() for word in _SECRET_ATOMS) and value != "-":
                value = "***"
            # SECURITY: a Basic-auth user name, a header or a path with a newline must not
            # forge a log line.
            atoms[key] = escape_log_value(value)
        return atoms


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

    def recv_nowait(self, size: int) -> bytes | None:
        """What has arrived, up to ``size`` bytes, or ``None`` when nothing has; never waits
        (the socket is non-blocking while the worker's poller watches it)."""
        try:
            return self._sock.recv(size)
        except BlockingIOError:
            return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


@dataclass(slots=True)
class _Parked:
    """A connection whose request is arriving, watched by the worker's poller."""

    request: ArrivingRequest
    started: float
    """When the request started: the connection's acceptance, or its first byte."""
    deadline: float
    """When the worker closes the connection unless the request has arrived."""
    watched: bool = True
    """Whether the poller watches it (else it waits for a streaming slot)."""


class BoundedThreadWorker(ThreadWorker):  # type: ignore[misc]
    """gunicorn's ``gthread`` worker where a connection gets a thread only once its request
    has arrived, and each request must arrive in bounded time.

    gunicorn hands a new connection to a thread at once, and the thread waits up to 5 s for its
    first byte, then reads the request as slowly as the client sends it: 64 idle connections
    stalled everyone else's requests for 14 s, 16 slowloris ones for up to 28 s. Here every
    plain-HTTP connection, new or kept alive, is parked in the worker's poller instead, which
    reads what arrives (`ArrivingRequest` says when the request is complete) and passes the
    bytes on to gunicorn's parser with the connection when a thread can serve it without
    waiting. A request's head must arrive within `header_timeout` seconds (at most
    ``timeout``) and, with a small body of known length, the whole request within ``timeout``;
    a late connection is closed. Bodies the worker does not wait for (chunked, over
    ``body_limit``, ``Expect: 100-continue``) are read by the thread within ``timeout`` of the
    request's start (`DeadlineSocket`), by half the threads at most (`_stream_slots`): slow
    uploads cannot take every thread. TLS (gunicorn's ``certfile``) and HTTP/2 prior-knowledge
    connections are served as gunicorn serves them, with the read deadline.
    """

    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    head_limit: int = DEFAULT_HEAD_LIMIT
    body_limit: int = DEFAULT_BODY_LIMIT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # SECURITY: gunicorn trusts the forwarded headers (X-Forwarded-Proto, -Ssl, ...) of
        # every peer of a unix socket, whatever ``forwarded_allow_ips`` says; the application
        # applies them itself, and only with ``proxy_count``.
        self.cfg.set("secure_scheme_headers", {})
        self.cfg.set("forwarder_headers", "")
        self._parked: dict[Any, _Parked] = {}
        self._arrived: set[Any] = set()
        self._streaming: set[Any] = set()
        self._waiting: deque[Any] = deque()
        self._next_sweep = 0.0
        self._stopping_since: float | None = None

    def load_wsgi(self) -> None:
        """Load the application; a configuration it refuses (a read-only data directory, a
        plugin that cannot be loaded) is one line, and gunicorn stops (its "App failed to
        load") instead of printing a traceback per worker."""
        try:
            super().load_wsgi()
        except ConfigError as exc:
            print(f"sitecache: {exc}", file=sys.stderr, flush=True)
            sys.exit(APP_LOAD_ERROR)

    # ------------------------------------------------------------------ parking
    def _parks(self, conn: Any) -> bool:
        """Whether this worker reads ``conn``'s requests itself (plain HTTP/1.x)."""
        return not self.cfg.is_ssl and not negotiation.prior_knowledge_allowed(
            self.cfg, conn.client
        )

    def enqueue_req(self, conn: Any) -> None:
        """Give ``conn`` to a thread if its request has arrived, else park it in the poller.

        gunicorn calls this for a new connection, a kept-alive one that became readable and one
        with bytes read ahead behind its previous request; always on the worker's main thread.
        """
        if conn in self._arrived:
            self._arrived.discard(conn)
            super().enqueue_req(conn)
        elif self._parks(conn):
            self._park(conn)
        else:
            super().enqueue_req(conn)

    def _park(self, conn: Any) -> None:
        if not isinstance(conn.sock, DeadlineSocket):
            # Wrapped before gunicorn's parser exists, so the parser reads through the wrapper.
            conn.sock = DeadlineSocket(conn.sock, float(self.cfg.timeout))
        read_ahead = conn.parser.unreader.take_buffered() if conn.parser is not None else b""
        now = time.monotonic()
        request = ArrivingRequest(
            head_limit=self.head_limit, body_limit=self.body_limit, data=read_ahead
        )
        parked = _Parked(request, started=now, deadline=now + self._head_seconds())
        conn.sock.setblocking(False)
        self._parked[conn] = parked
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, conn))
        self._advance(conn, parked, request.state)

    def _head_seconds(self) -> float:
        return min(float(self.header_timeout), float(self.cfg.timeout))

    def _on_readable(self, conn: Any, _fileobj: Any) -> None:
        """The poller saw bytes (or the end) on a parked connection: read them, no waiting."""
        parked = self._parked.get(conn)
        if parked is None:
            return
        try:
            chunk = conn.sock.recv_nowait(_READ_SIZE)
            if chunk is None:
                return
            if not chunk:
                # The client stopped sending. Whatever came is the parser's to answer (a 400
                # for half a request line, nothing for half a head); nothing came: close.
                if parked.request.data:
                    self._hand_over(conn)
                else:
                    self._drop(conn)
                return
            self._advance(conn, parked, parked.request.feed(chunk))
        except OSError:
            self._drop(conn)  # reset by the peer, or gone
        except Exception:
            # A bug here (or a thread pool that refuses work) must not end the worker and
            # every connection it holds: this connection alone is closed.
            self.log.exception("Error reading a request in the poller")
            self._drop(conn)

    def _advance(self, conn: Any, parked: _Parked, state: Arrival) -> None:
        if state is Arrival.READY:
            self._hand_over(conn)
        elif state is Arrival.STREAM:
            parked.deadline = parked.started + float(self.cfg.timeout)
            if len(self._streaming) < self._stream_slots():
                self._hand_over(conn, streams=True)
            else:
                # Every streaming slot is taken (slow uploads, perhaps): this one waits, unread
                # and unwatched, until a slot frees or its deadline passes.
                self.poller.unregister(conn.sock)
                parked.watched = False
                self._waiting.append(conn)
        elif state is Arrival.BODY:
            parked.deadline = parked.started + float(self.cfg.timeout)

    def _stream_slots(self) -> int:
        """How many requests may read from their client in a thread at once: half the
        threads, so uploads as slow as the read deadline allows leave the rest to others."""
        return max(1, int(self.cfg.threads) // 2)

    def _hand_over(self, conn: Any, *, streams: bool = False) -> None:
        """Unpark ``conn`` and give it, with the bytes that arrived, to a thread."""
        parked = self._parked.pop(conn)
        if parked.watched:
            self.poller.unregister(conn.sock)
        if streams:
            self._streaming.add(conn)
        conn.sock.deadline = parked.started + float(self.cfg.timeout)
        conn.init()  # plain HTTP/1.x: makes gunicorn's parser (no I/O) on the first request
        conn.parser.unreader.unread(bytes(parked.request.data))
        conn.data_ready = True
        self._arrived.add(conn)
        self.enqueue_req(conn)

    def _drop(self, conn: Any) -> None:
        """Close a connection this worker holds and has not given to a thread, wherever it
        stands (parked, waiting for a streaming slot, or failed on its way to a thread)."""
        self._parked.pop(conn, None)
        if conn in self._waiting:
            self._waiting.remove(conn)
        self._arrived.discard(conn)
        self._streaming.discard(conn)
        if conn.sock.fileno() in self.poller.get_map():
            self.poller.unregister(conn.sock)
        self.nr_conns -= 1
        conn.close()

    def finish_request(self, conn: Any, fs: Any) -> None:
        """gunicorn's end of a request (on the main thread), then the next streaming request
        waiting for a slot."""
        released = conn in self._streaming
        self._streaming.discard(conn)
        super().finish_request(conn, fs)
        if released:
            while self._waiting and len(self._streaming) < self._stream_slots():
                self._hand_over(self._waiting.popleft(), streams=True)

    def murder_pending(self) -> None:
        """gunicorn's sweep of connections waiting for data, and of parked connections whose
        request is late (a stopping worker waits `STOP_LINGER` seconds at most)."""
        super().murder_pending()
        now = time.monotonic()
        if not self.alive and self._stopping_since is None:
            self._stopping_since = now
            self._next_sweep = 0.0
        if now < self._next_sweep:
            return
        self._next_sweep = now + _SWEEP_INTERVAL
        cutoff = (
            float("inf") if self._stopping_since is None else self._stopping_since + STOP_LINGER
        )
        late = [
            conn for conn, parked in self._parked.items() if min(parked.deadline, cutoff) <= now
        ]
        for conn in late:
            self.log.debug("Closing a connection whose request did not arrive in time")
            self._drop(conn)

    # ------------------------------------------------------------------ serving
    def handle(self, conn: Any) -> Any:
        """Serve one request of ``conn`` (in a thread). A parked connection's read deadline
        was set when its request arrived; others get ``timeout`` seconds from now."""
        if not self.cfg.is_ssl and not self._parks(conn):
            # TLS sockets are wrapped by gunicorn itself; left as they are.
            limit = float(self.cfg.timeout)
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
    if not host or bind_port(port) is None or host in wildcard or "/" in host:
        return None
    return f"http://{host}:{port}"


def bind_port(text: str) -> int | None:
    """The TCP port ``text`` names (ASCII digits, 1 to 65535, or 0: any free port), or ``None``.

    ``"²".isdigit()`` is true and ``int("²")`` fails; a port above 65535 makes ``bind()`` raise
    OverflowError: both are refused here, as words."""
    if not (text.isascii() and text.isdigit() and len(text) <= 5):
        return None
    port = int(text)
    return port if port <= 65535 else None


def check_bind(bind: str) -> None:
    """Raise `ConfigError` when ``host:port`` cannot be listened on (in use, not ours, bad:
    a port that is not a number from 1 to 65535 is named in the message)."""
    if bind.startswith(("unix:", "fd://")):
        return
    host, colon, port_text = bind.rpartition(":")
    host = host.strip("[]") or "0.0.0.0"  # noqa: S104 - gunicorn's own default for ":port"
    if not colon:
        raise ConfigError(f"--bind {bind!r} is not host:port")
    port = bind_port(port_text)
    if port is None:
        raise ConfigError(
            f"--bind {bind!r}: the port {port_text!r} is not a number from 1 to 65535"
            " (or 0: any free port)"
        )
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
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
    """Raise `ConfigError` when the plugin cannot be loaded (the application's own loader:
    ``module:function`` or ``path/to/file.py:function``)."""
    load_plugin_target(spec)
