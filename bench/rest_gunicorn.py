"""REST server speed under gunicorn: part 3 of ``rest_bench.py`` (#18 split it out).

sitecache and a bare WSGI app that answers every scenario with the very status, headers and
body sitecache answered (captured first) are each served by gunicorn (2 sync workers), loaded
with wrk (``-t2 -c32``) when installed, else a bounded Python load generator, alternately,
round after round. Scenarios: the API index, an application-password GET of
``site/v2/users/me/application-passwords``, its 401 (no credentials), and an
application-password GET of the page cache's ``site-cache/v1/settings`` (administrators only).

Besides requests per second, the CPU time the workers of each server spend per request
(``/proc``, user + system) is printed: on a machine shared with other work, requests per second
move with the load, while CPU time per request moves much less.
"""

from __future__ import annotations

import base64
import http.client
import json
import math
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from werkzeug.test import EnvironBuilder

from sitecache.app import create_app

REPOSITORY = Path(__file__).resolve().parents[1]

_CANNED: dict[str, tuple[str, list[tuple[str, str]], bytes]] = {}


def bare_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """The baseline: a bare WSGI app answering each scenario with sitecache's captured answer."""
    if not _CANNED:
        with open(os.environ["REST_BENCH_CANNED"], encoding="utf-8") as source:
            for key, (status, headers, body) in json.load(source).items():
                _CANNED[key] = (status, [tuple(pair) for pair in headers], body.encode("latin-1"))
    key = canned_key(environ["PATH_INFO"], "HTTP_AUTHORIZATION" in environ)
    status, headers, body = _CANNED[key]
    start_response(status, headers)
    return [body]


def canned_key(path: str, authorized: bool) -> str:
    return f"{path} {'auth' if authorized else 'anon'}"


SCENARIOS = (
    # name, path, authorized, goal
    ("API index", "/site-json/", False, 0.5),
    (
        "app-password GET users/me/application-passwords",
        "/site-json/site/v2/users/me/application-passwords",
        True,
        0.6,
    ),
    (
        "401 users/me/application-passwords",
        "/site-json/site/v2/users/me/application-passwords",
        False,
        0.7,
    ),
    (
        "app-password GET site-cache/v1/settings",
        "/site-json/site-cache/v1/settings",
        True,
        0.5,
    ),
)
_HOP_HEADERS = {"date", "server", "connection", "transfer-encoding"}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fetch(
    port: int, path: str, authorization: str | None
) -> tuple[int, str, list[tuple[str, str]], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            "GET", path, headers={"Authorization": authorization} if authorization else {}
        )
        answer = connection.getresponse()
        return answer.status, answer.reason, answer.getheaders(), answer.read()
    finally:
        connection.close()


class Gunicorn:
    """One gunicorn (2 sync workers) serving ``target`` on a free loopback port."""

    def __init__(self, target: str, environment: dict[str, str], log: Path) -> None:
        self.port = free_port()
        command = [
            sys.executable, "-m", "gunicorn",
            "--bind", f"127.0.0.1:{self.port}",
            "--workers", "2",
            "--worker-class", "sync",
            "--chdir", str(REPOSITORY),
            target,
        ]  # fmt: skip
        env = {**os.environ, **environment}
        env["PYTHONPATH"] = os.pathsep.join([str(REPOSITORY), str(REPOSITORY / "bench")])
        with log.open("wb") as handle:
            self.process = subprocess.Popen(  # noqa: S603 - a fixed command
                command, stdout=handle, stderr=subprocess.STDOUT, env=env
            )
        self.log = log
        deadline = time.monotonic() + 30
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited early:\n{log.read_text()}")
            try:
                fetch(self.port, "/site-json/", None)
                return
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"gunicorn did not answer:\n{log.read_text()}") from None
                time.sleep(0.1)

    def worker_cpu(self) -> float:
        """CPU seconds (user + system) used so far by this gunicorn's workers (``nan`` where
        ``/proc`` cannot tell)."""
        return children_cpu(self.process.pid)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def children_cpu(parent: int) -> float:
    """CPU seconds (user + system) used by the live processes whose parent is ``parent``."""
    ticks = 0
    try:
        stats = list(Path("/proc").glob("[0-9]*/stat"))
    except OSError:
        return math.nan
    if not stats:
        return math.nan
    for stat in stats:
        try:
            # After the command's ")": state, ppid, ..., utime (12th), stime (13th).
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # the process ended meanwhile
        if int(fields[1]) == parent:
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def load_wrk(port: int, path: str, authorization: str | None, seconds: float) -> tuple[float, int]:
    """Requests per second and requests answered, loaded by wrk for ``seconds``."""
    command = ["wrk", "-t2", "-c32", f"-d{seconds:g}s"]
    if authorization:
        command += ["-H", f"Authorization: {authorization}"]
    output = subprocess.run(  # noqa: S603 - a fixed command
        [*command, f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, check=True
    ).stdout
    rate = re.search(r"Requests/sec:\s*([\d.]+)", output)
    count = re.search(r"(\d+) requests in", output)
    if rate is None or count is None:
        raise RuntimeError(f"wrk failed:\n{output}")
    return float(rate.group(1)), int(count.group(1))


def load_python(
    port: int, path: str, authorization: str | None, seconds: float
) -> tuple[float, int]:
    """A bounded load generator: 16 threads, one connection per request, for ``seconds``;
    requests per second and requests answered."""
    deadline = time.monotonic() + seconds
    counts = [0] * 16

    def worker(slot: int) -> None:
        while time.monotonic() < deadline:
            fetch(port, path, authorization)
            counts[slot] += 1

    threads = [threading.Thread(target=worker, args=(slot,)) for slot in range(16)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(counts) / (time.monotonic() - start), sum(counts)


def in_process_costs(
    config: Path, canned_file: Path, authorization: str
) -> dict[str, tuple[float, float]]:
    """Microseconds per request of each scenario with the two apps called in process (best of
    seven runs of 300): the same requests without sockets, gunicorn or the load generator,
    which tells what is left of the application's own cost when the machine is noisy."""
    os.environ["REST_BENCH_CANNED"] = str(canned_file)
    _CANNED.clear()
    app = create_app(config)
    costs: dict[str, tuple[float, float]] = {}
    for name, path, authorized, _ in SCENARIOS:
        environ = scenario_environ(path, authorization if authorized else None)
        best: list[float] = []
        for target in (bare_app, app):
            fastest = float("inf")
            for _ in range(7):
                start = time.perf_counter()
                for _ in range(300):
                    answer = target(dict(environ), lambda *args: None)
                    b"".join(answer)
                    close = getattr(answer, "close", None)
                    if close is not None:
                        close()
                fastest = min(fastest, (time.perf_counter() - start) / 300)
            best.append(fastest * 1e6)
        costs[name] = (best[0], best[1])
    app.auth.store.close()
    return costs


def make_site(root: Path) -> tuple[Path, str]:
    """The benchmark's site under ``root``: an administrator with an application password.
    Returns its configuration file and the ``Authorization``
    header value of the application password."""
    data_dir = root / "var"
    setup = create_app({"data_dir": str(data_dir), "password_hash_cost": 1024})
    admin = setup.auth.users.create("admin", "bench-password", role="administrator")
    password, _ = setup.auth.app_passwords.create(admin, "bench")
    setup.auth.store.close()
    config = root / "sitecache.toml"
    config.write_text(f'data_dir = "{data_dir}"\n', encoding="utf-8")
    return config, "Basic " + base64.b64encode(f"admin:{password}".encode()).decode()


def scenario_environ(path: str, authorization: str | None) -> dict[str, Any]:
    """The WSGI environ of one scenario's request (from the loopback, as wrk's)."""
    headers = {"Authorization": authorization} if authorization else {}
    return EnvironBuilder(
        path=path, headers=headers, environ_base={"REMOTE_ADDR": "127.0.0.1"}
    ).get_environ()


Loader = Callable[[int, str, str | None, float], tuple[float, int]]


def alternate(
    load: Loader,
    servers: tuple[Gunicorn, Gunicorn],
    path: str,
    authorization: str | None,
    seconds: float,
    rounds: int,
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Load the two servers in turn (who goes first alternates), ``rounds`` times: the mean
    requests per second of each, and the CPU microseconds its workers spent per request."""
    for server in servers:  # warm up both
        load(server.port, path, authorization, 1)
    rates: tuple[list[float], list[float]] = ([], [])
    cpu = [0.0, 0.0]
    answered = [0, 0]
    for number in range(rounds):
        for side in (0, 1) if number % 2 == 0 else (1, 0):
            before = servers[side].worker_cpu()
            rate, count = load(servers[side].port, path, authorization, seconds)
            cpu[side] += servers[side].worker_cpu() - before
            rates[side].append(rate)
            answered[side] += count
    per_request = (cpu[0] / answered[0] * 1e6, cpu[1] / answered[1] * 1e6)
    return (statistics.mean(rates[0]), statistics.mean(rates[1])), per_request


def under_gunicorn(seconds: float, rounds: int) -> None:
    """Part 3: sitecache and the bare WSGI app under the same gunicorn settings."""
    load = load_wrk if shutil.which("wrk") else load_python
    tool = "wrk -t2 -c32" if load is load_wrk else "Python load generator (16 threads)"
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        config, authorization = make_site(root)
        ours = Gunicorn(
            "sitecache.app:create_app()", {"SITECACHE_CONFIG": str(config)}, root / "ours.log"
        )
        bare: Gunicorn | None = None
        try:
            canned: dict[str, Any] = {}
            for name, path, authorized, _ in SCENARIOS:
                status, reason, headers, body = fetch(
                    ours.port, path, authorization if authorized else None
                )
                expected = 401 if name.startswith("401") else 200
                assert status == expected, (name, status, body)
                kept = [(key, value) for key, value in headers if key.lower() not in _HOP_HEADERS]
                canned[canned_key(path, authorized)] = (
                    f"{status} {reason}",
                    kept,
                    body.decode("latin-1"),
                )
            canned_file = root / "canned.json"
            canned_file.write_text(json.dumps(canned), encoding="utf-8")
            in_process = in_process_costs(config, canned_file, authorization)
            bare = Gunicorn(
                "rest_gunicorn:bare_app", {"REST_BENCH_CANNED": str(canned_file)}, root / "bare.log"
            )
            print(
                f"\n== 3. Under gunicorn (2 sync workers each), {tool}, {rounds} alternated"
                f" rounds of {seconds:g} s per side"
            )
            print(
                f"{'scenario':<52} {'bytes':>6} {'bare req/s':>11} {'ours req/s':>11}"
                f" {'ratio':>6} {'goal':>6}         {'in process: bare':>16}  {'ours':>8}"
            )
            cpu_rows: list[str] = []
            for name, path, authorized, goal in SCENARIOS:
                auth = authorization if authorized else None
                rates, cpu = alternate(load, (bare, ours), path, auth, seconds, rounds)
                ratio = rates[1] / rates[0]
                size = len(canned[canned_key(path, authorized)][2])
                verdict = "ok" if ratio >= goal else "MISSED"
                bare_cost, our_cost = in_process[name]
                print(
                    f"{name:<52} {size:>6} {rates[0]:>11,.0f} {rates[1]:>11,.0f}"
                    f" {ratio:>5.3f}x {goal:>4.1f}x {verdict:<6}"
                    f" {bare_cost:>13.1f} µs {our_cost:>6.1f} µs"
                )
                cpu_rows.append(
                    f"{name:<52} {cpu[0]:>11.1f} {cpu[1]:>11.1f} {cpu[0] / cpu[1]:>5.3f}x"
                )
            title = "workers' CPU per request (µs)"
            print(f"\n{title:<52} {'bare':>11} {'ours':>11} {'ratio':>6}")
            print("\n".join(cpu_rows))
        finally:
            ours.stop()
            if bare is not None:
                bare.stop()
