"""Several gunicorn nodes serving one site behind an imagined load balancer, for end-to-end tests
and ``bench/soak.py``.

Every node runs `LiveServer` (the settings of ``sitecache serve``) on its own free loopback port;
all of them share one Redis page-cache storage (a private ``cache_namespace``) and one site
store:

- ``database_url=None``: the nodes share one data directory (SQLite in WAL mode), which is how
  several nodes on one machine share a site;
- ``database_url="postgresql://..."``: each node has a data directory of its own and the site
  lives in that database (``SITECACHE_DATABASE_URL``), as nodes on several machines would.

The site is initialized once (``sitecache init``) before any node starts, as an upgrade runs
its migrations once before the nodes restart. Every request a test sends carries the site's
public ``Host`` (`Cluster.host`), whichever node it goes to.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from tests.e2e.race import Client
from tests.e2e.server import REPOSITORY, LiveServer

#: the site's public host, sent with every request to every node
HOST = "nodes.example"
#: the administrator ``Cluster.start`` creates (its application password is in `Cluster.auth`)
OWNER = "owner"
#: the cheapest password hashing allowed: the tests log in often
HASH_COST = 1024


@dataclass
class Cluster:
    """Nodes sharing one site; how to reach them, stop one, start it again.

    Args:
        root: a private directory for every node's files.
        count: how many nodes.
        redis_url: the Redis every node keeps its pages in.
        database_url: the shared site database, or ``None`` to share one data directory.
        extra: more TOML configuration lines for every node.
        workers: gunicorn worker processes per node.
    """

    root: Path
    count: int = 3
    redis_url: str = "redis://127.0.0.1:6379/15"
    database_url: str | None = None
    extra: Sequence[str] = ()
    workers: int = 2
    host: str = HOST
    namespace: str = field(default_factory=lambda: f"nodes-{uuid.uuid4().hex}")
    nodes: list[LiveServer] = field(default_factory=list)
    #: the administrator's ``Authorization`` header (an application password)
    auth: dict[str, str] = field(default_factory=dict)

    @property
    def config_lines(self) -> list[str]:
        """The configuration every node (and the command line) reads."""
        return [
            f'site_url = "http://{self.host}"',
            f"password_hash_cost = {HASH_COST}",
            'cache_backend = "redis"',
            f'redis_url = "{self.redis_url}"',
            f'cache_namespace = "{self.namespace}"',
            *self.extra,
        ]

    def data_dir(self, index: int) -> Path:
        """Node ``index``'s data directory: one for all (SQLite) or one each (a database)."""
        return self.root / ("var" if self.database_url is None else f"node{index}-var")

    def environment(self) -> dict[str, str]:
        """What every node and command gets besides its configuration file and data directory."""
        return {} if self.database_url is None else {"SITECACHE_DATABASE_URL": self.database_url}

    # ------------------------------------------------------------------ life cycle
    def start(self) -> None:
        """Initialize the site once, create the administrator's application password, then
        start every node (all stopped again if one fails to start)."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.cli("init", "--login", OWNER)
        created = self.cli("app-password", "create", OWNER, "--name", "cluster")
        found = re.search(r"password:\s+((?:\w{4} ){5}\w{4})", created)
        assert found is not None, created
        self.auth = basic(OWNER, found.group(1))
        self.nodes = [
            LiveServer(
                data_dir=self.data_dir(index),
                config_lines=self.config_lines,
                name=f"node{index}",
                workers=self.workers,
                environment=self.environment(),
            )
            for index in range(self.count)
        ]
        try:
            for node in self.nodes:
                node.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop every node and forget the cluster's pages in Redis."""
        for node in self.nodes:
            node.stop()
        from sitecache.cache.storage.redis import RedisStorage

        RedisStorage(self.redis_url, self.namespace).clear_namespace()

    def kill(self, index: int) -> None:
        """SIGKILL node ``index``: its gunicorn master and every worker, as a machine that
        loses power (nothing is told, nothing is flushed)."""
        node = self.nodes[index]
        assert node.process is not None
        ready = node.data_dir.parent / f"ready-{node.name}"  # `LiveServer`'s worker pid files
        workers = [int(entry.name) for entry in ready.iterdir() if entry.name.isdigit()]
        node.process.send_signal(signal.SIGKILL)
        node.process.wait(timeout=10)
        for pid in workers:
            with suppress(ProcessLookupError):  # already gone with its master
                os.kill(pid, signal.SIGKILL)

    def restart(self, index: int) -> None:
        """Start node ``index`` again on the same port (where the load balancer sends it)."""
        self.nodes[index].start()

    def logs(self) -> str:
        """The end of every node's log, for a failing test's output."""
        return "\n".join(
            f"----- {node.log_path} -----\n{node.log()[-4000:]}" for node in self.nodes
        )

    # ------------------------------------------------------------------ commands and requests
    def cli(self, *arguments: str) -> str:
        """Run ``sitecache ARGUMENTS`` on the site (node 0's data directory); its output."""
        config_file = self.root / "sitecache.toml"
        config_file.write_text("\n".join(self.config_lines) + "\n", encoding="utf-8")
        environment = {k: v for k, v in os.environ.items() if not k.startswith("SITECACHE_")}
        environment.update(self.environment())
        command = [
            sys.executable, "-m", "sitecache.cli",
            "--config", str(config_file), "--data-dir", str(self.data_dir(0)),
            *arguments,
        ]  # fmt: skip
        completed = subprocess.run(
            command,
            env=environment,
            capture_output=True,
            text=True,
            cwd=REPOSITORY,
            check=False,
            timeout=120,
        )
        assert completed.returncode == 0, (arguments, completed.stdout, completed.stderr)
        return completed.stdout

    def client(self, index: int, timeout: float = 30.0) -> Client:
        """A kept-alive connection to node ``index`` that sends the public Host."""
        return Client(self.nodes[index].port, self.host, timeout)

    @contextmanager
    def clients(self) -> Iterator[list[Client]]:
        """One client per node, closed afterwards."""
        opened = [self.client(index) for index in range(len(self.nodes))]
        try:
            yield opened
        finally:
            for client in opened:
                client.close()

    def rest(
        self, index: int, method: str, route: str, body: Any = None, headers: Mapping[str, str] = {}
    ) -> tuple[int, Any]:
        """A JSON REST call on node ``index`` (the administrator's by default); status, JSON."""
        sent = {**(headers or self.auth), "Content-Type": "application/json"}
        payload = None if body is None else json.dumps(body).encode()
        client = self.client(index)
        try:
            status, _, data = client.request(method, route, payload, sent)
        finally:
            client.close()
        return status, json.loads(data) if data else None


def basic(login: str, password: str) -> dict[str, str]:
    """The ``Authorization`` header of ``login:password`` (an application password)."""
    token = base64.b64encode(f"{login}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def log_in(client: Client, login: str, password: str) -> str:
    """Log in with the form through ``client``; the ``Cookie`` value of the new session."""
    status, headers, body = client.request(
        "POST",
        "/login",
        urlencode({"log": login, "pwd": password, "redirect_to": "/site-admin/"}).encode(),
        {"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 303, body[:500]
    cookie: SimpleCookie = SimpleCookie()
    cookie.load(headers["set-cookie"])
    return f"sitecache_session={cookie['sitecache_session'].value}"


def rest_nonce(client: Client, cookie: str) -> str:
    """A ``site_rest`` nonce for the session (``/site-admin/rest-nonce``)."""
    status, _, body = client.request("GET", "/site-admin/rest-nonce", headers={"Cookie": cookie})
    assert status == 200, body[:500]
    return body.decode()
