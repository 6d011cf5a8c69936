"""The soak: mixed traffic on several nodes, one of them killed with SIGKILL and restarted.

Used by ``bench/soak.py`` (long runs) and ``tests/e2e/test_soak_short.py`` (a short one). A
`Cluster` of nodes shares one Redis page cache and one site store; ``connections`` kept-alive
connections per node (one thread each, `tests.e2e.race.Client`, the site's public Host) send, at
random with fixed weights (`MIX`):

- anonymous page reads: a soak post's page or the home page (which lists every soak post);
- anonymous REST reads of a soak post;
- edits of a soak post (as the administrator: an application password on even connections, a
  session cookie and its nonce on odd ones); each edit writes ``SOAKp<slot>v<N>`` into the
  post's content, ``N`` one more than the post's last edit (one edit per post at a time);
- comments on a soak post (as the administrator);
- cache purges through ``site-cache/v1`` (the post and its related pages; one in ten the whole
  site).

Node ``killed`` is killed with SIGKILL (master and workers) after 40 % of the run and started
again on its port; the run lasts until it has answered one of its connections again.

The checker: every edit that returned, and every purge that returned (with the versions the
posts had when it was sent), sets a floor; a body read by a request that started after that
floor was set must show at least that version of every soak post it shows, else it is *stale*.
After the run each page of each node must show the last version (else *unsettled*), every edit
that returned must be in the store and every comment that returned must exist (else *lost*).
"""

from __future__ import annotations

import bisect
import http.client
import json
import random
import re
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.e2e.cluster import Cluster, log_in, rest_nonce
from tests.e2e.race import Client

MARKER = re.compile(rb"SOAKp(\d+)v(\d+)")
POSTS = "/site-json/site/v2/posts"
COMMENTS = "/site-json/site/v2/comments"
PURGE = "/site-json/site-cache/v1/cache"
#: what each connection sends, by weight
MIX: tuple[tuple[str, int], ...] = (
    ("page", 70),
    ("rest", 12),
    ("edit", 8),
    ("comment", 5),
    ("purge", 5),
)
#: what each kind of request must answer
EXPECTED = {"page": 200, "rest": 200, "edit": 200, "comment": 201, "purge": 200}
#: seconds a connection waits after a request got no answer (its node is down)
RETRY_PAUSE = 0.05
#: at most how long the run goes on for the restarted node to answer one of its connections
SERVED_AGAIN_WAIT = 60.0


@dataclass
class Sample:
    """One request: its kind, node, start (`time.monotonic`), duration, status (0: no answer)
    and the soak versions its body showed (slot → version)."""

    kind: str
    node: int
    started: float
    elapsed: float
    status: int
    versions: dict[int, int] = field(default_factory=dict)
    detail: str = ""


@dataclass
class SoakReport:
    """The figures of one run (`as_dict` for JSON, `table` for people)."""

    nodes: int
    connections: int
    seconds: float
    killed: int
    requests: int = 0
    #: requests that got an HTTP answer (the throughput and latencies are theirs)
    answered: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    errors_surviving: list[str] = field(default_factory=list)
    errors_killed: int = 0
    stale: list[str] = field(default_factory=list)
    unsettled: list[str] = field(default_factory=list)
    lost_edits: list[str] = field(default_factory=list)
    lost_comments: list[int] = field(default_factory=list)
    edits: int = 0
    comments: int = 0
    purges: int = 0
    throughput: float = 0.0
    p50_ms: float = 0.0
    p95_ms: float = 0.0
    latency_ms: dict[str, tuple[float, float]] = field(default_factory=dict)
    max_in_flight: int = 0
    mean_in_flight: float = 0.0
    client_cpu_seconds: float = 0.0
    killed_down_seconds: float = 0.0
    killed_served_after_restart: int = 0
    restart_error: str = ""

    @property
    def ok(self) -> bool:
        """Whether the goals are met: no error on a surviving node, no stale or unsettled
        page, no lost write, and the killed node served again."""
        return not (
            self.errors_surviving
            or self.stale
            or self.unsettled
            or self.lost_edits
            or self.lost_comments
            or not self.killed_served_after_restart
        )

    def as_dict(self) -> dict[str, Any]:
        """Every figure, and a few examples of each failure."""
        return {
            "ok": self.ok,
            "nodes": self.nodes,
            "connections_per_node": self.connections,
            "seconds": round(self.seconds, 1),
            "requests": self.requests,
            "answered": self.answered,
            "by_kind": self.by_kind,
            "errors_surviving_nodes": len(self.errors_surviving),
            "errors_killed_node": self.errors_killed,
            "stale_after_purge_or_edit": len(self.stale),
            "unsettled_at_end": len(self.unsettled),
            "lost_edits": len(self.lost_edits),
            "lost_comments": len(self.lost_comments),
            "edits": self.edits,
            "comments": self.comments,
            "purges": self.purges,
            "answered_per_second": round(self.throughput, 1),
            "p50_ms": round(self.p50_ms, 1),
            "p95_ms": round(self.p95_ms, 1),
            "latency_ms_by_kind": {k: [round(v, 1) for v in p] for k, p in self.latency_ms.items()},
            "max_in_flight": self.max_in_flight,
            "mean_in_flight": round(self.mean_in_flight, 1),
            "client_cpu_seconds": round(self.client_cpu_seconds, 1),
            "killed_node": self.killed,
            "killed_node_down_seconds": round(self.killed_down_seconds, 1),
            "killed_node_served_after_restart": self.killed_served_after_restart,
            "examples": {
                "errors_surviving": self.errors_surviving[:5],
                "stale": self.stale[:5],
                "unsettled": self.unsettled[:5],
                "lost_edits": self.lost_edits[:5],
                "lost_comments": self.lost_comments[:5],
                "restart_error": self.restart_error,
            },
        }

    def table(self) -> str:
        """The figures as an aligned two-column table."""
        data = self.as_dict()
        examples = data.pop("examples")
        rows = [(key, json.dumps(value) if isinstance(value, dict) else str(value))
                for key, value in data.items()]  # fmt: skip
        rows += [(f"e.g. {key}", json.dumps(value)) for key, value in examples.items() if value]
        width = max(len(key) for key, _ in rows)
        return "\n".join(f"{key:<{width}}  {value}" for key, value in rows)


@dataclass
class Planned:
    """A request to send: method, path, JSON body; an edit's version; a purge's floors."""

    method: str
    path: str
    body: dict[str, Any] | None = None
    version: int = 0
    floors: dict[int, int] = field(default_factory=dict)


@dataclass
class SoakPost:
    """A post the soak edits: its slot (in the marker), id and page path."""

    slot: int
    post_id: int
    path: str


class Soak:
    """The shared state of one run."""

    def __init__(self, cluster: Cluster, posts: list[SoakPost], session: dict[str, str],
                 killed: int) -> None:  # fmt: skip
        self.cluster = cluster
        self.posts = posts
        self.session = session
        self.killed = killed
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.samples: list[Sample] = []
        #: per slot: the last version an edit returned with, and the next version to write
        self.acknowledged = [0] * len(posts)
        self.next_version = [1] * len(posts)
        self.editing = [threading.Lock() for _ in posts]
        #: per slot: (time a write returned, the least version a later read may show, why)
        self.floors: list[list[tuple[float, int, str]]] = [[] for _ in posts]
        self.comment_ids: list[int] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.killed_at = 0.0
        self.restarted_at = 0.0
        #: set once the restarted node has answered a request sent after the kill
        self.served_again = threading.Event()
        self.restart_error = ""

    # ------------------------------------------------------------------ traffic
    def connection(self, number: int) -> None:
        """One kept-alive connection to node ``number % nodes``, sending the mix until stopped."""
        node = number % len(self.cluster.nodes)
        client = self.cluster.client(node)
        chooser = random.Random(number)  # noqa: S311 (a traffic mix, not a secret)
        kinds = [kind for kind, _ in MIX]
        weights = [weight for _, weight in MIX]
        auth = self.cluster.auth if number % 2 == 0 else self.session
        while not self.stop.is_set():
            kind = chooser.choices(kinds, weights)[0]
            post = chooser.choice(self.posts)
            if kind == "edit" and not self.editing[post.slot].acquire(blocking=False):
                kind = "page"  # that post is being edited: read instead
            try:
                sample = self._send(client, node, kind, post, auth, chooser)
            finally:
                if kind == "edit":
                    self.editing[post.slot].release()
            with self.lock:
                self.samples.append(sample)
            if sample.status == 0:
                time.sleep(RETRY_PAUSE)
        client.close()

    def _plan(self, kind: str, post: SoakPost, chooser: random.Random) -> Planned:
        """The request of ``kind`` about ``post`` (an edit takes the post's next version; a
        purge notes the versions acknowledged before it is sent)."""
        if kind == "page":
            return Planned("GET", "/" if chooser.random() < 0.3 else post.path)
        if kind == "rest":
            return Planned("GET", f"{POSTS}/{post.post_id}")
        if kind == "edit":
            version = self.next_version[post.slot]
            self.next_version[post.slot] += 1
            content = f"SOAKp{post.slot}v{version} edited by a soak connection."
            return Planned("POST", f"{POSTS}/{post.post_id}", {"content": content}, version)
        if kind == "comment":
            content = f"Soak comment {chooser.random():.12f}"
            return Planned("POST", COMMENTS, {"post": post.post_id, "content": content})
        if chooser.random() < 0.1:  # the whole site
            return Planned("POST", PURGE, {}, floors=dict(enumerate(self.acknowledged)))
        floors = {post.slot: self.acknowledged[post.slot]}
        return Planned("POST", PURGE, {"post_id": post.post_id}, floors=floors)

    def _send(self, client: Client, node: int, kind: str, post: SoakPost, auth: dict[str, str],
              chooser: random.Random) -> Sample:  # fmt: skip
        planned = self._plan(kind, post, chooser)
        headers = {} if planned.body is None else {**auth, "Content-Type": "application/json"}
        payload = None if planned.body is None else json.dumps(planned.body).encode()
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        started = time.monotonic()
        try:
            status, _, data = client.request(planned.method, planned.path, payload, headers)
        except (http.client.HTTPException, OSError) as exc:
            return Sample(kind, node, started, time.monotonic() - started, 0, detail=repr(exc))
        finally:
            with self.lock:
                self.in_flight -= 1
        returned = time.monotonic()
        sample = Sample(kind, node, started, returned - started, status)
        if node == self.killed and self.killed_at and started > self.killed_at:
            self.served_again.set()  # by the restarted node (the killed one cannot answer)
        if status != EXPECTED[kind]:
            sample.detail = f"{planned.method} {planned.path}: HTTP {status} {data[:200]!r}"
        elif kind in ("page", "rest"):
            sample.versions = {int(s): int(v) for s, v in MARKER.findall(data)}
        else:
            self._record(kind, post, planned, data, returned)
        return sample

    def _record(self, kind: str, post: SoakPost, planned: Planned, data: bytes,
                returned: float) -> None:  # fmt: skip
        """Note a write that returned: the floor an edit or purge sets, a comment's id."""
        with self.lock:
            if kind == "edit":
                self.acknowledged[post.slot] = planned.version
                self.floors[post.slot].append((returned, planned.version, "an edit"))
            elif kind == "comment":
                self.comment_ids.append(int(json.loads(data)["id"]))
            else:
                for slot, floor in planned.floors.items():
                    if floor > 0:
                        self.floors[slot].append((returned, floor, "a purge"))

    def kill_and_restart(self, seconds: float) -> None:
        """Kill the chosen node after 40 % of the run, start it again after 15 % more."""
        self.stop.wait(seconds * 0.4)
        self.killed_at = time.monotonic()
        self.cluster.kill(self.killed)
        time.sleep(max(1.0, seconds * 0.15))
        try:
            self.cluster.restart(self.killed)
        except RuntimeError as failure:  # reported: the goal "served again" is then missed
            self.restart_error = str(failure)[-2000:]
            return
        self.restarted_at = time.monotonic()

    # ------------------------------------------------------------------ checks
    def judge(self, report: SoakReport) -> None:
        """Count requests and errors, stale reads and latencies."""
        ordered = []
        for floors in self.floors:
            floors.sort()
            best, running = [], 0
            for returned, version, why in floors:
                if version > running:
                    running = version
                    best.append((returned, version, why))
            ordered.append(best)
        times = [[returned for returned, _, _ in best] for best in ordered]
        elapsed: dict[str, list[float]] = {}
        for sample in self.samples:
            report.by_kind[sample.kind] = report.by_kind.get(sample.kind, 0) + 1
            if sample.status:  # answered: latencies leave out refused connections
                elapsed.setdefault(sample.kind, []).append(sample.elapsed)
            if sample.status != EXPECTED[sample.kind]:
                if sample.node == self.killed:
                    report.errors_killed += 1
                else:
                    report.errors_surviving.append(f"node {sample.node}: {sample.detail}")
                continue
            if self.killed_at and sample.node == self.killed and sample.started > self.killed_at:
                report.killed_served_after_restart += 1  # only the restarted node can answer
            for slot, shown in sample.versions.items():
                index = bisect.bisect_left(times[slot], sample.started) - 1
                if index >= 0 and shown < ordered[slot][index][1]:
                    _, floor, why = ordered[slot][index]
                    report.stale.append(
                        f"{sample.kind} on node {sample.node}: post {slot} v{shown} after "
                        f"{why} that returned v{floor}"
                    )
        every = sorted(sample.elapsed for sample in self.samples if sample.status)
        report.requests = len(self.samples)
        report.answered = len(every)
        if every:
            report.p50_ms = statistics.median(every) * 1000
            report.p95_ms = every[int(len(every) * 0.95)] * 1000
        for kind, values in elapsed.items():
            values.sort()
            report.latency_ms[kind] = (statistics.median(values) * 1000,
                                       values[int(len(values) * 0.95)] * 1000)  # fmt: skip
        report.edits = len([s for s in self.samples if s.kind == "edit" and s.status == 200])
        report.comments = len(self.comment_ids)
        report.purges = len([s for s in self.samples if s.kind == "purge" and s.status == 200])
        report.max_in_flight = self.max_in_flight
        report.killed_down_seconds = max(0.0, self.restarted_at - self.killed_at)
        report.restart_error = self.restart_error

    def check_settled(self, report: SoakReport) -> None:
        """Every page of every node shows every post's last acknowledged version."""
        for index in range(len(self.cluster.nodes)):
            client = self.cluster.client(index)
            for path in ["/", *(post.path for post in self.posts)]:
                status, headers, data = client.request("GET", path)
                shown = {int(s): int(v) for s, v in MARKER.findall(data)}
                behind = {slot: version for slot, version in shown.items()
                          if version < self.acknowledged[slot]}  # fmt: skip
                if status != 200 or behind:
                    report.unsettled.append(
                        f"{path} on node {index}: HTTP {status}, behind {behind} "
                        f"({headers.get('cache-status')})"
                    )
            client.close()

    def check_writes(self, report: SoakReport) -> None:
        """Every edit and comment that returned is in the store."""
        for post in self.posts:
            status, stored = self.cluster.rest(0, "GET", f"{POSTS}/{post.post_id}?context=edit")
            found = MARKER.search(str(stored.get("content", {}).get("raw", "")).encode())
            version = int(found.group(2)) if found else -1
            if status != 200 or version < self.acknowledged[post.slot]:
                report.lost_edits.append(
                    f"post {post.slot}: HTTP {status}, v{version} stored, "
                    f"v{self.acknowledged[post.slot]} acknowledged"
                )
        stored_ids: set[int] = set()
        for post in self.posts:
            page = 1
            while True:
                status, comments = self.cluster.rest(
                    0, "GET", f"{COMMENTS}?post={post.post_id}&status=all&per_page=100&page={page}"
                )
                assert status == 200, comments
                stored_ids.update(int(comment["id"]) for comment in comments)
                if len(comments) < 100:
                    break
                page += 1
        report.lost_comments = sorted(set(self.comment_ids) - stored_ids)


def create_posts(cluster: Cluster, count: int) -> list[SoakPost]:
    """``count`` published posts, each showing its marker at version 0."""
    posts = []
    for slot in range(count):
        status, post = cluster.rest(
            0,
            "POST",
            POSTS,
            {"title": f"Soak post {slot}", "content": f"SOAKp{slot}v0 first words.",
             "status": "publish"},
        )  # fmt: skip
        assert status == 201, post
        posts.append(SoakPost(slot, int(post["id"]), urlsplit(post["link"]).path))
    return posts


def session_of(cluster: Cluster, login: str, password: str) -> dict[str, str]:
    """Log in on node 0; the session's ``Cookie`` and ``X-Site-Nonce`` headers."""
    client = cluster.client(0)
    try:
        cookie = log_in(client, login, password)
        return {"Cookie": cookie, "X-Site-Nonce": rest_nonce(client, cookie)}
    finally:
        client.close()


def run_soak(
    cluster: Cluster,
    *,
    connections: int,
    seconds: float,
    posts: int = 8,
    progress: Callable[[str], None] = lambda line: None,
) -> SoakReport:
    """Start nothing, stop nothing: run the soak on a started ``cluster``; its report."""
    cluster.cli("user", "create", "soaker", "--role", "administrator", "--password", "soak-pw-1")
    soak = Soak(cluster, create_posts(cluster, posts), session_of(cluster, "soaker", "soak-pw-1"),
                killed=len(cluster.nodes) - 1)  # fmt: skip
    report = SoakReport(len(cluster.nodes), connections, seconds, soak.killed)
    count = connections * len(cluster.nodes)
    threads = [threading.Thread(target=soak.connection, args=(n,), daemon=True)
               for n in range(count)]  # fmt: skip
    killer = threading.Thread(target=soak.kill_and_restart, args=(seconds,), daemon=True)
    cpu_before = time.process_time()
    began = time.monotonic()
    for thread in threads:
        thread.start()
    killer.start()
    progress(f"{count} connections on {len(cluster.nodes)} nodes for {seconds:.0f} s")
    time.sleep(seconds)
    killer.join()  # the run goes on until the killed node is back ...
    if soak.restarted_at:  # ... and has answered one of its connections (not forever)
        soak.served_again.wait(SERVED_AGAIN_WAIT)
    soak.stop.set()
    for thread in threads:
        thread.join(60)
    wall = time.monotonic() - began
    report.seconds = wall
    report.client_cpu_seconds = time.process_time() - cpu_before
    progress(f"node {soak.killed} down for {soak.restarted_at - soak.killed_at:.1f} s; checking")
    soak.judge(report)
    report.throughput = report.answered / wall
    report.mean_in_flight = sum(sample.elapsed for sample in soak.samples) / wall
    soak.check_settled(report)
    soak.check_writes(report)
    return report
