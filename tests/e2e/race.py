"""A race harness: readers and REST edits running together against live nodes.

Used by the end-to-end race tests (short runs) and by ``bench/race_bench.py`` (long runs). One
post is edited in a loop over REST (its title becomes ``Race story v<N>``) while reader threads
fetch the pages that show it (its own page, the home page, its category archive and the feed)
from every node, each request sent with the site's public ``Host`` as a load balancer would.

A read is *stale* when it started after edit N had returned and still shows a version below N:
the page cache's one promise is that no such read exists. After
the run the harness waits `SETTLE` seconds and reads every page from every node several times:
a page still showing an old version then is *stuck* (stale for good).
"""

from __future__ import annotations

import bisect
import http.client
import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.e2e.server import LiveServer
from tests.e2e.test_auth import basic, cli

#: The site's public host: every request carries it, whichever node it goes to.
HOST = "race.example"
TITLE = "Race story"
VERSION = re.compile(rb"Race story v(\d+)")
SETTLE = 1.5


@dataclass
class Read:
    """One reader request: when it started, from which node, what it showed."""

    started: float
    node: int
    path: str
    status: int
    version: int | None
    cache_status: str
    elapsed: float = 0.0


@dataclass
class RaceReport:
    """The figures of one run."""

    reads: int = 0
    stale: list[Read] = field(default_factory=list)
    missing: list[Read] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: requests that got no answer at all (a worker killed under them)
    dropped: list[str] = field(default_factory=list)
    edits: int = 0
    edit_errors: list[str] = field(default_factory=list)
    stuck: list[str] = field(default_factory=list)
    statuses: dict[str, int] = field(default_factory=dict)
    reads_seen: list[Read] = field(default_factory=list)
    #: when each edit returned (`time.monotonic`) and the version it wrote
    edits_returned: list[tuple[float, int]] = field(default_factory=list)

    def latencies(self, start: float, end: float) -> list[float]:
        """Seconds taken by the reads that started between ``start`` and ``end``
        (`time.monotonic` values), in order."""
        return sorted(read.elapsed for read in self.reads_seen if start <= read.started < end)

    def summary(self) -> str:
        """One paragraph for a test failure or a benchmark's output."""
        examples = "; ".join(
            f"{read.path}@node{read.node} v{read.version} ({read.cache_status})"
            for read in self.stale[:5]
        )
        return (
            f"{self.reads} reads, {len(self.stale)} stale after an edit returned, "
            f"{len(self.missing)} without the post, {len(self.errors)} errors, "
            f"{len(self.dropped)} dropped, "
            f"{self.edits} edits ({len(self.edit_errors)} failed), "
            f"{len(self.stuck)} pages stuck after {SETTLE} s; cache outcomes {self.statuses}"
            + (f"; stale e.g. {examples}" if examples else "")
            + (f"; stuck: {self.stuck[:5]}" if self.stuck else "")
            + (f"; errors e.g. {self.errors[:3]}" if self.errors else "")
            + (f"; edit errors e.g. {self.edit_errors[:3]}" if self.edit_errors else "")
        )


class Client:
    """A kept-alive connection to one node, sending the site's public Host."""

    def __init__(self, port: int, host: str, timeout: float = 30.0) -> None:
        self.port = port
        self.host = host
        self.timeout = timeout
        self._connection: http.client.HTTPConnection | None = None

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: Mapping[str, str] = {}
    ) -> tuple[int, dict[str, str], bytes]:
        """Send one request (reconnecting once when the kept-alive connection went away)."""
        for attempt in (1, 2):
            if self._connection is None:
                self._connection = http.client.HTTPConnection(
                    "127.0.0.1", self.port, timeout=self.timeout
                )
            try:
                self._connection.request(
                    method, path, body=body, headers={"Host": self.host, **headers}
                )
                response = self._connection.getresponse()
                data = response.read()
                if response.getheader("Connection", "").lower() == "close":
                    self.close()
                return response.status, {k.lower(): v for k, v in response.getheaders()}, data
            except (http.client.HTTPException, OSError):
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Drop the connection."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def start_nodes(root: Path, count: int, extra: Sequence[str]) -> list[LiveServer]:
    """``count`` gunicorn nodes sharing one data directory (one site database)."""
    config = [f'site_url = "http://{HOST}"', *extra]
    nodes = [
        LiveServer(data_dir=root / "var", config_lines=config, name=f"node{number}")
        for number in range(count)
    ]
    try:
        for node in nodes:
            node.start()
    except BaseException:
        for node in nodes:
            node.stop()
        raise
    return nodes


def admin_auth(node: LiveServer) -> dict[str, str]:
    cli(node, "init", "--login", "owner")
    output = cli(node, "app-password", "create", "owner", "--name", "race")
    match = re.search(r"password:\s+((?:\w{4} ){5}\w{4})", output)
    assert match is not None, output
    return basic("owner", match.group(1))


@dataclass
class RaceSite:
    """The post being edited and the pages that show it."""

    post_id: int
    pages: list[str]
    auth: dict[str, str]
    host: str


def setup_site(node: LiveServer, auth: dict[str, str], host: str) -> RaceSite:
    """Create a category and a published post in it; the pages that show the post."""
    client = Client(node.port, host)
    headers = {**auth, "Content-Type": "application/json"}

    def rest(path: str, **body: Any) -> Any:
        status, _, data = client.request("POST", path, json.dumps(body).encode(), headers)
        assert status in (200, 201), data
        return json.loads(data)

    category = rest("/site-json/site/v2/categories", name=f"Race {time.monotonic_ns()}")
    post = rest(
        "/site-json/site/v2/posts",
        title=f"{TITLE} v0",
        content="Raced",
        status="publish",
        categories=[category["id"]],
    )
    client.close()
    pages = [_path(post["link"]), "/", _path(category["link"]), "/feed/"]
    return RaceSite(int(post["id"]), pages, headers, host)


def _path(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


class Race:
    """The shared state of one run: the report, the edits that returned, the reads made."""

    def __init__(self, nodes: Sequence[LiveServer], site: RaceSite, edit_pause: float) -> None:
        self.nodes = nodes
        self.site = site
        self.edit_pause = edit_pause
        self.report = RaceReport()
        self.lock = threading.Lock()
        self.edits: list[tuple[float, int]] = [(float("-inf"), 0)]
        self.stop = threading.Event()
        self.reads: list[Read] = []

    def reader(self, number: int) -> None:
        """Fetch the post's pages from every node in turn until stopped."""
        site = self.site
        clients = [Client(node.port, site.host) for node in self.nodes]
        step = number
        while not self.stop.is_set():
            node = step % len(self.nodes)
            path = site.pages[(step // len(self.nodes)) % len(site.pages)]
            step += 1
            started = time.monotonic()
            try:
                status, headers, body = clients[node].request("GET", path)
            except (http.client.HTTPException, OSError) as exc:
                with self.lock:
                    self.report.dropped.append(f"{path}@node{node}: {exc!r}")
                continue
            match = VERSION.search(body)
            version = int(match.group(1)) if match else None
            read = Read(started, node, path, status, version, headers.get("cache-status", ""),
                        time.monotonic() - started)  # fmt: skip
            with self.lock:
                self.reads.append(read)
                if status >= 500:
                    self.report.errors.append(f"{path}@node{node}: HTTP {status}")
        for client in clients:
            client.close()

    def editor(self) -> None:
        """Retitle the post over REST (nodes in turn) until stopped; note when each returned."""
        site = self.site
        clients = [Client(node.port, site.host) for node in self.nodes]
        version = 0
        while not self.stop.is_set():
            version += 1
            client = clients[version % len(self.nodes)]
            body = json.dumps({"title": f"{TITLE} v{version}"}).encode()
            try:
                status, _, data = client.request(
                    "POST", f"/site-json/site/v2/posts/{site.post_id}", body, site.auth
                )
            except (http.client.HTTPException, OSError) as exc:
                self.report.edit_errors.append(repr(exc))
                version -= 1
                continue
            returned = time.monotonic()
            if status != 200:
                self.report.edit_errors.append(f"HTTP {status}: {data[:200]!r}")
                version -= 1
                continue
            with self.lock:
                self.edits.append((returned, version))
                self.report.edits += 1
            if self.edit_pause:
                time.sleep(self.edit_pause)
        for client in clients:
            client.close()

    def judge(self) -> None:
        """Count outcomes; a read is stale when it shows less than the last edit returned
        before it started."""
        report, edits = self.report, self.edits
        returned_at = [at for at, _ in edits]
        for read in self.reads:
            key = read.cache_status.split(";")[1].strip() if ";" in read.cache_status else "?"
            report.statuses[key] = report.statuses.get(key, 0) + 1
            if read.status != 200:
                continue
            if read.version is None:
                report.missing.append(read)
                continue
            latest = edits[bisect.bisect_right(returned_at, read.started) - 1][1]
            if read.version < latest:
                report.stale.append(read)
        report.reads = len(self.reads)
        report.reads_seen = self.reads
        report.edits_returned = list(edits[1:])

    def check_settled(self) -> None:
        """After `SETTLE` seconds every page of every node must show the last edit."""
        final = self.edits[-1][1]
        time.sleep(SETTLE)
        for index, node in enumerate(self.nodes):
            client = Client(node.port, self.site.host)
            for path in self.site.pages:
                stuck = self._stuck(client, path, final)
                if stuck:
                    self.report.stuck.append(f"{path}@node{index} {stuck}")
            client.close()

    @staticmethod
    def _stuck(client: Client, path: str, final: int) -> str:
        # Several reads, so that each worker process and thread of the node is asked.
        for _ in range(8):
            status, headers, body = client.request("GET", path)
            match = VERSION.search(body)
            if status != 200 or match is None or int(match.group(1)) != final:
                shown = match.group(1).decode() if match else None
                return f"HTTP {status} v{shown} (want v{final}, {headers.get('cache-status', '')})"
        return ""


def run_race(
    nodes: Sequence[LiveServer],
    site: RaceSite,
    *,
    duration: float,
    readers: int = 16,
    edit_pause: float = 0.02,
    during: Callable[[float], None] | None = None,
) -> RaceReport:
    """Read and edit together for ``duration`` seconds; then check nothing stayed stale.

    ``during`` (optional) is called once from its own thread with the duration, to do something
    to the nodes while the race runs (stop Redis, kill workers, ...).
    """
    race = Race(nodes, site, edit_pause)
    threads = [threading.Thread(target=race.reader, args=(n,), daemon=True) for n in range(readers)]
    threads.append(threading.Thread(target=race.editor, daemon=True))
    if during is not None:
        threads.append(threading.Thread(target=during, args=(duration,), daemon=True))
    for thread in threads:
        thread.start()
    time.sleep(duration)
    race.stop.set()
    for thread in threads:
        thread.join(60)
    race.judge()
    race.check_settled()
    return race.report
