"""Normal GETs while idle and slowloris connections are held open, against a baseline measured in
the same run (#15 point 11).

``python bench/slowclient_bench.py [--seconds S] [--workers N] [--path /]`` starts gunicorn with
``sitecache serve``'s arguments (`sitecache.serving.gunicorn_argv`: same worker class, threads,
timeouts) on a free loopback port, over a fresh data directory, then runs these scenarios one
after the other, for ``--seconds`` each:

- ``baseline``: no attackers;
- ``idle 64`` and ``idle 150``: that many connections that never send a byte;
- ``slowloris 16``: connections sending a request head one byte a second, never finishing it;
- ``slow form 16``: ``POST /login`` heads sent at once, then a 4 KiB body one byte a second;
- ``slow upload 16``: the same with a 1 MB body, over the 64 KiB the worker reads without a
  thread: each holds a thread until the read deadline (``timeout``, 30 s) drops it. This is
  what a reverse proxy that buffers request bodies (nginx's default) is for.

Attackers keep their count up: a connection the server closes is opened again at once (and
counted as a drop). Meanwhile one client sends a normal ``GET`` on a new connection every 0.2 s
(a 60 s client timeout) and records its latency. Each line gives the GETs answered and failed,
median, p95 and max latency, and the median's ratio to the baseline's.
"""

from __future__ import annotations

import argparse
import http.client
import os
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from sitecache.serving import gunicorn_argv

REPOSITORY = Path(__file__).resolve().parents[1]
GET_INTERVAL = 0.2
CLIENT_TIMEOUT = 60.0
SLOWLORIS_HEAD = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\n" + (
    b"X-a: b\r\n" * 5000
)


def post_head(length: int) -> bytes:
    """A ``POST /login`` head announcing a form body of ``length`` bytes."""
    return (
        "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


# name, connections, bytes sent on connecting, bytes then trickled one a second
SCENARIOS: list[tuple[str, int, bytes, bytes]] = [
    ("baseline", 0, b"", b""),
    ("idle 64", 64, b"", b""),
    ("idle 150", 150, b"", b""),
    ("slowloris 16", 16, b"", SLOWLORIS_HEAD),
    ("slow form 16", 16, post_head(4096), b"log=x&pwd=" + b"y" * 4086),
    ("slow upload 16", 16, post_head(1_000_000), b"log=x&pwd=" + b"y" * 999_990),
]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """gunicorn with ``sitecache serve``'s arguments, on a free port, over ``root``."""

    def __init__(self, root: Path, workers: int) -> None:
        self.port = free_port()
        config = root / "sitecache.toml"
        config.write_text("password_hash_cost = 1024\n", encoding="utf-8")
        environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
        environment.update(
            SITECACHE_CONFIG=str(config),
            SITECACHE_DATA_DIR=str(root / "var"),
            SITECACHE_SITE_URL=f"http://127.0.0.1:{self.port}",
            PYTHONPATH=str(REPOSITORY),
        )
        command = [
            sys.executable, "-m", "gunicorn", "--chdir", str(REPOSITORY),
            *gunicorn_argv(f"127.0.0.1:{self.port}", workers),
        ]  # fmt: skip
        self.log = root / "gunicorn.log"
        with self.log.open("wb") as handle:
            self.process = subprocess.Popen(  # noqa: S603 - a fixed command
                command, stdout=handle, stderr=subprocess.STDOUT, env=environment
            )
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited early:\n{self.log.read_text()}")
            try:
                get(self.port, "/", 5)
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(
                        f"gunicorn did not answer:\n{self.log.read_text()}"
                    ) from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def get(port: int, path: str, timeout: float) -> int:
    """One GET on a new connection; the status."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


class Attackers(threading.Thread):
    """``count`` connections to ``port`` that send ``prefix``, then ``trickle`` one byte every
    ``interval`` seconds (nothing more when it is empty); any the server closes is opened
    again."""

    def __init__(
        self, port: int, count: int, prefix: bytes, trickle: bytes, interval: float = 1.0
    ) -> None:
        super().__init__(daemon=True)
        self.port = port
        self.count = count
        self.prefix = prefix
        self.trickle = trickle
        self.interval = interval
        self.drops = 0
        self.lifetimes: list[float] = []
        self.stop = threading.Event()

    def _open(self, selector: selectors.BaseSelector) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        if self.prefix:
            sock.sendall(self.prefix)
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, [time.monotonic(), 0])

    def run(self) -> None:
        selector = selectors.DefaultSelector()
        for _ in range(self.count):
            self._open(selector)
        next_byte = time.monotonic() + self.interval
        while not self.stop.is_set():
            for key, _ in selector.select(timeout=0.1):
                self._closed(selector, key)
            if self.trickle and time.monotonic() >= next_byte:
                next_byte += self.interval
                for key in list(selector.get_map().values()):
                    self._send_next_byte(selector, key)
        for key in list(selector.get_map().values()):
            selector.unregister(key.fileobj)
            key.fileobj.close()  # type: ignore[union-attr]
        selector.close()

    def _closed(self, selector: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
        sock: socket.socket = key.fileobj  # type: ignore[assignment]
        try:
            if sock.recv(65536):
                return  # an answer (a 4xx); the close follows
        except BlockingIOError:
            return
        except OSError:
            pass
        self._reopen(selector, key)

    def _send_next_byte(self, selector: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
        sock: socket.socket = key.fileobj  # type: ignore[assignment]
        position = key.data[1] % len(self.trickle)
        try:
            sock.send(self.trickle[position : position + 1])
            key.data[1] += 1
        except OSError:
            self._reopen(selector, key)

    def _reopen(self, selector: selectors.BaseSelector, key: selectors.SelectorKey) -> None:
        self.drops += 1
        self.lifetimes.append(time.monotonic() - key.data[0])
        selector.unregister(key.fileobj)
        key.fileobj.close()  # type: ignore[union-attr]
        if not self.stop.is_set():
            self._open(selector)


def measure(port: int, path: str, seconds: float) -> tuple[list[float], int]:
    """Sequential GETs for ``seconds``: their latencies and how many failed."""
    latencies: list[float] = []
    failures = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.monotonic()
        try:
            status = get(port, path, CLIENT_TIMEOUT)
            if status == 200:
                latencies.append(time.monotonic() - started)
            else:
                failures += 1
        except OSError:
            failures += 1
        time.sleep(max(0.0, started + GET_INTERVAL - time.monotonic()))
    return latencies, failures


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="per scenario (20)")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers (2, as serve)")
    parser.add_argument("--path", default="/", help="what the normal GETs ask for (/)")
    options = parser.parse_args()
    print(
        f"Python {sys.version.split()[0]}; sitecache serve's gunicorn arguments, "
        f"{options.workers} workers; GET {options.path} every {GET_INTERVAL} s for "
        f"{options.seconds:g} s per scenario"
    )
    print(f"{'scenario':<14}{'GETs':>6}{'failed':>8}{'median':>12}{'p95':>12}{'max':>12}"
          f"{'x base':>10}{'drops':>7}{'held':>7}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="slowclient-bench-") as temporary:
        server = Server(Path(temporary), options.workers)
        try:
            base = 0.0
            for name, count, prefix, trickle in SCENARIOS:
                attackers = Attackers(server.port, count, prefix, trickle)
                attackers.start()
                time.sleep(1.0)  # the attackers are connected (and, idle, waited on) by now
                latencies, failures = measure(server.port, options.path, options.seconds)
                attackers.stop.set()
                attackers.join(timeout=30)
                if not latencies:
                    print(f"{name:<14}{0:>6}{failures:>8}   (no GET answered)")
                    continue
                median = statistics.median(latencies)
                base = base or median
                held = statistics.median(attackers.lifetimes) if attackers.lifetimes else 0.0
                print(
                    f"{name:<14}{len(latencies):>6}{failures:>8}{median * 1000:>10.1f}ms"
                    f"{percentile(latencies, 0.95) * 1000:>10.1f}ms"
                    f"{max(latencies) * 1000:>10.1f}ms"
                    f"{median / base:>9.1f}x{attackers.drops:>7}{held:>6.1f}s"
                )
                time.sleep(2.0)  # the server closes what the attackers left
        finally:
            server.stop()
    print("drops: attacker connections the server closed (each reopened at once); held: their "
          "median lifetime")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
