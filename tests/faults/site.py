"""A site for the fault tests: `tests.e2e.deployment.Deployment` (``sitecache init``, then
``sitecache serve``: gunicorn with its threaded workers) with the requests the fault rows send
(reads of cached and uncached pages, REST reads, edits, comments) as `tests.faults.load`
operations, and what it takes to check that nothing acknowledged was lost.
"""

from __future__ import annotations

import base64
import itertools
import json
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.e2e.deployment import Deployment
from tests.faults.load import Answer, Recorder, http_request

__all__ = ["FaultSite", "PostEdits"]

REST = "/site-json/site/v2"


@dataclass
class PostEdits:
    """The edits of one post by one writer: the last title acknowledged (2xx)."""

    post_id: int
    acknowledged: int = -1


@dataclass
class FaultSite:
    """One site deployed for a fault row.

    Args:
        root: its private directory (the data directory is ``root/var``).
        config_lines: TOML lines (``database_url``, ``cache_backend``, ...).
    """

    root: Path
    config_lines: list[str] = field(default_factory=list)
    deployment: Deployment = field(init=False)
    created: Recorder = field(default_factory=Recorder)
    comments: Recorder = field(default_factory=Recorder)
    cached_path: str = "/"
    _counter: itertools.count[int] = field(default_factory=itertools.count)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.deployment = Deployment(self.root, self.config_lines)

    # ------------------------------------------------------------------ life
    def init(self, *, demo: bool = True) -> None:
        """``sitecache init`` (the demo content) and an application password."""
        self.deployment.init(demo=demo)

    def serve(self, workers: int = 2, timeout: float = 60) -> None:
        """``sitecache serve`` on a free port the first time, on the same port afterwards
        (the cache's keys name the host and port: a restarted server finds its pages)."""
        deployment = self.deployment
        if not deployment.port:
            deployment.serve("serve", workers=workers, timeout=timeout)
            return
        command = [
            sys.executable, "-m", "sitecache.cli",
            "--config", str(deployment.config_file), "--data-dir", str(deployment.data_dir),
            "serve", "--bind", f"127.0.0.1:{deployment.port}", "--workers", str(workers),
        ]  # fmt: skip
        deployment.launch(
            command,
            environment=deployment.environment(),
            cwd=deployment.root,
            ready_path="/site-json/",
            timeout=timeout,
            what="sitecache serve",
        )

    def stop(self) -> None:
        """Stop the server."""
        self.deployment.stop()

    @property
    def port(self) -> int:
        return self.deployment.port

    @property
    def data_dir(self) -> Path:
        return self.deployment.data_dir

    def log(self) -> str:
        """The server's output so far."""
        return self.deployment.log()

    def _auth(self) -> dict[str, str]:
        token = base64.b64encode(self.deployment.credentials.encode()).decode()
        return {"Authorization": f"Basic {token}"}

    # ------------------------------------------------------------------ requests
    def get(self, path: str, kind: str = "get", timeout: float = 30.0) -> Answer:
        """``GET path`` as an anonymous visitor."""
        return http_request(self.port, kind, "GET", path, timeout=timeout)

    def admin(self, method: str, path: str, body: Any = None, kind: str = "admin") -> Answer:
        """A REST request as the administrator (HTTP Basic, an application password)."""
        headers = self._auth()
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        return http_request(self.port, kind, method, path, payload, headers)

    def admin_json(self, method: str, path: str, body: Any = None) -> Any:
        """The JSON of a 2xx administrator request (asserted)."""
        answer = self.admin(method, path, body)
        assert 200 <= answer.status < 300, (path, answer.status, answer.body[:500])
        return json.loads(answer.body)

    def new_post(self, title: str) -> int:
        """A published post's id (asserted to be created)."""
        found = self.admin_json("POST", f"{REST}/posts", {"title": title, "status": "publish"})
        return int(found["id"])

    # ------------------------------------------------------------------ operations
    def read_rest(self) -> Answer:
        """A REST read that needs the database (the posts, uncached)."""
        return self.get(f"{REST}/posts?per_page=5", "rest-read")

    def read_uncached(self) -> Answer:
        """A page the cache never stores (a query string), rendered from the database."""
        return self.get(f"/search/post/?n={next(self._counter)}", "page-uncached")

    def read_cached(self) -> Answer:
        """A page the cache holds and no writer purges (`warm` it first): a demo post's."""
        return self.get(self.cached_path, "page-cached")

    def warm(self) -> None:
        """Store the page `read_cached` reads (the first demo post's, which the traffic of
        the fault rows never changes: new posts and edits purge the listings, not it)."""
        posts = self.admin_json("GET", f"{REST}/posts?orderby=id&order=asc&per_page=1")
        self.cached_path = urlsplit(posts[0]["link"]).path
        hits = 0
        for _ in range(20):  # stored, then hits (in every worker, for a memory cache)
            answer = self.read_cached()
            assert answer.status == 200, answer
            hits = hits + 1 if b"hit" in (answer.cache_status or b"") else 0
            if hits >= 4:
                return
        raise AssertionError(f"{self.cached_path} is not served from the cache")

    def create(self) -> Answer:
        """Create a post; a 2xx one is recorded (it must exist afterwards)."""
        title = f"fault-{next(self._counter)}"
        answer = self.admin(
            "POST", f"{REST}/posts", {"title": title, "status": "publish"}, kind="create"
        )
        if 200 <= answer.status < 300:
            self.created.add((int(json.loads(answer.body)["id"]), title))
        return answer

    def editor(self, edits: PostEdits) -> Answer:
        """Retitle ``edits``' post ``edit-<post>-<n>``, n one more than the last try."""
        with self._lock:
            attempt = next(self._counter)
        answer = self.admin(
            "POST",
            f"{REST}/posts/{edits.post_id}",
            {"title": f"edit-{edits.post_id}-{attempt}"},
            kind="edit",
        )
        if 200 <= answer.status < 300:
            edits.acknowledged = max(edits.acknowledged, attempt)
        return answer

    def comment(self, post_id: int) -> Answer:
        """A comment by the administrator; a 2xx one is recorded."""
        content = f"comment-{next(self._counter)}"
        answer = self.admin(
            "POST", f"{REST}/comments", {"post": post_id, "content": content}, kind="comment"
        )
        if 200 <= answer.status < 300:
            self.comments.add((int(json.loads(answer.body)["id"]), content))
        return answer

    # ------------------------------------------------------------------ what was kept
    def lost(self, edits: list[PostEdits]) -> list[str]:
        """What was acknowledged (2xx) but is not stored (read once the database answers)."""
        missing = []
        for post_id, title in self.created.saved:
            found = self.admin_json("GET", f"{REST}/posts/{post_id}?context=edit")
            if found["title"]["raw"] != title:
                missing.append(f"post {post_id} {title!r}: {found['title']['raw']!r}")
        for edit in edits:
            if edit.acknowledged < 0:
                continue
            found = self.admin_json("GET", f"{REST}/posts/{edit.post_id}?context=edit")
            stored = int(str(found["title"]["raw"]).rsplit("-", 1)[1])
            # A later try answered 503 may have committed too: never an earlier title.
            if stored < edit.acknowledged:
                missing.append(f"edit of {edit.post_id}: {stored} < {edit.acknowledged}")
        for comment_id, content in self.comments.saved:
            answer = self.admin("GET", f"{REST}/comments/{comment_id}?context=edit")
            body: Mapping[str, Any] = json.loads(answer.body) if answer.status == 200 else {}
            if body.get("content", {}).get("raw") != content:
                missing.append(f"comment {comment_id} {content!r}: {answer.status}")
        return missing
