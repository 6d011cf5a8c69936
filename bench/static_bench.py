"""Static-file mode behind nginx beside nginx's own ``proxy_cache``: what a hit costs nginx.

The same ~24 KB page (`jinja_page`), with the headers sitecache sends with its pages, is served
two ways by nginx (one worker each, ``sendfile`` off as in nginx's defaults):

- **static**: the server block ``sitecache nginx-config`` prints (`nginx_config`), over a static
  root holding the page's copy (``index.html`` and ``index.html.gz``, as sitecache writes them);
- **proxy_cache**: a plain caching reverse proxy (``proxy_cache_valid 200 1h``) in front of an
  origin sending the page with the same headers, asked once before the rounds, then all hits.

Both are loaded in alternated rounds by ``wrk -t1 -c8`` on the same URL, as a browser would ask
(a user agent and two analytics cookies), for identity and for gzip clients. Per round, the CPU
time (``/proc`` user + system) of nginx's processes per request; the medians and their ratio
are printed (goal of #32: static <= 1.05x proxy_cache's CPU per hit). ``--callgrind`` also
counts the instructions per request of each worker under ``valgrind --tool=callgrind`` (a run
of ``--requests`` requests less a run of none), which the machine's load does not move
(time in the kernel, such as opening files, is not in it).

Run: ``python bench/static_bench.py [--rounds 5 --seconds 3] [--callgrind] [--quick]``.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import jinja_page  # bench/ is on sys.path when this file runs as a script
from peers_bench import NGINX, WRK, tree_cpu_seconds

from sitecache.cache.api.static_nginx import nginx_config
from sitecache.page_headers import EVERY_RESPONSE_HEADERS, HTML_PAGE_HEADERS

HOST = "example.org"
PATH = "/2026/11/a-post/"
#: The headers sitecache sends with its pages (`page_headers`, the API root of example.org).
HEADERS = {
    **EVERY_RESPONSE_HEADERS,
    **HTML_PAGE_HEADERS,
    "Link": f'<http://{HOST}/site-json/>; rel="https://api.w.org/"',
}
#: What a browser sends besides the encoding it accepts.
BROWSER = {
    "Host": HOST,
    "User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0",
    "Cookie": "_ga=GA1.2.1234567890.1700000000; _gid=GA1.2.987654321.1700000000",
}
ENCODINGS = {"identity": "identity", "gzip": "gzip, deflate, br"}
#: Goal of #32: static-file mode's CPU per hit at most this times proxy_cache's.
GOAL = 1.05
PAGE = jinja_page.render(PATH)


class _Origin(BaseHTTPRequestHandler):
    """The origin of the proxy_cache side: the page with sitecache's headers."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        for name, value in HEADERS.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, format: str, *args: object) -> None:
        del format, args


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def http_block(directory: Path) -> str:
    """The top of an nginx.conf (one worker, the foreground) up to ``http {``."""
    temporary = " ".join(
        f"{kind}_temp_path {directory}/{kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        f"daemon off;\nmaster_process off;\nworker_processes 1;\npid {directory}/nginx.pid;\n"
        f"error_log {directory}/error.log;\nevents {{ worker_connections 256; }}\n"
        f"http {{\n access_log off;\n {temporary}\n include /etc/nginx/mime.types;\n"
    )


def write_site(kind: str, directory: Path, port: int, origin: int) -> Path:
    """The nginx.conf of ``kind`` (``static`` or ``proxy_cache``) under ``directory``."""
    if kind == "static":
        copy = directory / "static" / HOST / PATH.strip("/")
        copy.mkdir(parents=True)
        (copy / "index.html").write_bytes(PAGE)
        (copy / "index.html.gz").write_bytes(gzip.compress(PAGE))
        block = nginx_config(
            server_name=HOST, static_root=directory / "static", upstream=f"127.0.0.1:{origin}",
            listen=f"127.0.0.1:{port}", headers=HEADERS, user="root",
        )  # fmt: skip
    else:
        block = (
            f"proxy_cache_path {directory}/cache levels=1:2 keys_zone=bench:10m;\n"
            f"server {{\n listen 127.0.0.1:{port};\n server_name {HOST};\n"
            f" location / {{\n  proxy_pass http://127.0.0.1:{origin};\n  proxy_cache bench;\n"
            "  proxy_cache_valid 200 1h;\n }\n}\n"
        )
    conf = directory / "nginx.conf"
    conf.write_text(http_block(directory) + block + "}\n", encoding="utf-8")
    return conf


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def get(port: int, encoding: str) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", PATH, headers={**BROWSER, "Accept-Encoding": encoding})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


class Site:
    """One nginx serving ``kind``, started in ``directory`` (``command`` wraps it)."""

    def __init__(self, kind: str, directory: Path, origin: int, command: list[str]) -> None:
        directory.mkdir(parents=True)
        self.port = free_port()
        conf = write_site(kind, directory, self.port, origin)
        self.process = subprocess.Popen(  # noqa: S603
            [*command, NGINX, "-c", str(conf), "-p", str(directory)],
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(self.port)
        for encoding in ENCODINGS.values():  # a hit from now on, checked
            status, headers, body = get(self.port, encoding)
            assert status == 200, (kind, status)
            status, headers, body = get(self.port, encoding)
            assert status == 200, (kind, status)
            plain = gzip.decompress(body) if headers.get("Content-Encoding") == "gzip" else body
            assert plain == PAGE, kind
            assert all(headers.get(name) == value for name, value in HEADERS.items()), kind
        if kind == "static":
            assert headers.get("Cache-Status") == "nginx; hit", headers

    def stop(self) -> str:
        """Stop nginx gracefully (callgrind writes its counts then); its standard error."""
        self.process.send_signal(signal.SIGQUIT)
        _, error = self.process.communicate(timeout=300)
        return str(error)


def wrk(port: int, seconds: float, encoding: str) -> int:
    """Requests ``wrk -t1 -c8`` made in ``seconds`` (every answer a 200, checked)."""
    assert WRK is not None
    headers = [item for name, value in BROWSER.items() for item in ("-H", f"{name}: {value}")]
    command = [WRK, "-t1", "-c8", f"-d{max(1, round(seconds))}s", *headers,
               "-H", f"Accept-Encoding: {encoding}", f"http://127.0.0.1:{port}{PATH}"]  # fmt: skip
    output = subprocess.run(  # noqa: S603
        command, capture_output=True, text=True, check=True, timeout=seconds + 60
    ).stdout
    if "Non-2xx" in output:
        raise RuntimeError(f"wrk saw errors:\n{output}")
    found = re.search(r"(\d+) requests in", output)
    if found is None:
        raise RuntimeError(f"unexpected wrk output:\n{output}")
    return int(found.group(1))


def cpu_rounds(
    scratch: Path, origin: int, rounds: int, seconds: float
) -> dict[tuple[str, str], list[float]]:
    """µs of nginx CPU per hit, per round, of each (side, encoding)."""
    sites = {kind: Site(kind, scratch / f"cpu-{kind}", origin, []) for kind in KINDS}
    results: dict[tuple[str, str], list[float]] = {}
    try:
        for number in range(rounds):
            order = list(sites) if number % 2 == 0 else list(reversed(sites))
            for label, encoding in ENCODINGS.items():
                for kind in order:
                    site = sites[kind]
                    before = tree_cpu_seconds(site.process.pid)
                    count = wrk(site.port, seconds, encoding)
                    spent = tree_cpu_seconds(site.process.pid) - before
                    per_hit = spent / max(count, 1) * 1e6
                    results.setdefault((kind, label), []).append(per_hit)
                    print(f"  round {number + 1}: {label} {kind}: {per_hit:.1f} µs", flush=True)
    finally:
        for site in sites.values():
            site.stop()
    return results


KINDS = ("static", "proxy_cache")


def instructions(scratch: Path, origin: int, kind: str, encoding: str, requests: int) -> int:
    """Instructions callgrind counted in an nginx worker answering ``requests`` hits."""
    directory = scratch / f"callgrind-{kind}-{requests}-{time.monotonic_ns()}"
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={directory}/out"]
    site = Site(kind, directory, origin, command)
    connection = http.client.HTTPConnection("127.0.0.1", site.port, timeout=60)
    for _ in range(requests):
        connection.request("GET", PATH, headers={**BROWSER, "Accept-Encoding": encoding})
        response = connection.getresponse()
        response.read()
        assert response.status == 200
    connection.close()
    found = re.search(r"Collected : (\d+)", site.stop())
    if found is None:
        raise RuntimeError("callgrind counted nothing")
    return int(found.group(1))


def medians_ratio(ours: list[float], theirs: list[float]) -> float:
    """The median of static's figures over the median of proxy_cache's."""
    return statistics.median(ours) / statistics.median(theirs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternated rounds")
    parser.add_argument("--seconds", type=float, default=3, help="length of one load run")
    parser.add_argument("--quick", action="store_true", help="1 round of 1 s: a smoke run")
    parser.add_argument("--callgrind", action="store_true", help="count instructions too")
    parser.add_argument("--requests", type=int, default=1000, help="hits counted by callgrind")
    options = parser.parse_args(argv)
    if WRK is None or not Path(NGINX).exists():
        print("static skipped: needs nginx and wrk installed")
        return 0
    rounds, seconds = (1, 1.0) if options.quick else (options.rounds, options.seconds)
    scratch = Path(tempfile.mkdtemp(prefix="sitecache-static-"))
    scratch.chmod(0o755)
    origin = ThreadingHTTPServer(("127.0.0.1", free_port()), _Origin)
    threading.Thread(target=origin.serve_forever, daemon=True).start()
    try:
        cpu = cpu_rounds(scratch, origin.server_address[1], rounds, seconds)
        counted: dict[tuple[str, str], float] = {}
        if options.callgrind and shutil.which("valgrind"):
            for label, encoding in ENCODINGS.items():
                for kind in KINDS:
                    port = origin.server_address[1]
                    loaded = instructions(scratch, port, kind, encoding, options.requests)
                    idle = instructions(scratch, port, kind, encoding, 0)
                    counted[(kind, label)] = (loaded - idle) / options.requests
    finally:
        origin.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\n### nginx CPU per hit: {rounds} alternated round(s) of {seconds:g} s, medians\n")
    print("| client | static-file mode | proxy_cache | ratio | goal | | instructions "
          "(static / proxy_cache) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---|---:|")
    for label in ENCODINGS:
        ours, theirs = cpu[("static", label)], cpu[("proxy_cache", label)]
        ratio = medians_ratio(ours, theirs)
        count = (
            f"{counted[('static', label)]:,.0f} / {counted[('proxy_cache', label)]:,.0f}"
            if counted
            else "-"
        )
        print(
            f"| {label} | {statistics.median(ours):.1f} µs | {statistics.median(theirs):.1f} µs"
            f" | {ratio:.2f}x | <= {GOAL:.2f}x | {'met' if ratio <= GOAL else 'NOT met'} "
            f"| {count} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
