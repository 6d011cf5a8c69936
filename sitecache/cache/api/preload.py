"""Preload: visit the site's URLs through the cache in-process, as an anonymous visitor.

One preload runs at a time across every process and node sharing the storage: the runner holds
the storage lock ``preload`` (refreshed while it works, released at the end and when the process
exits). Progress lives in the storage as the named value ``preload`` so every worker (and the
command line) sees it; the URL list of the running preload is kept beside it (``preload_urls``)
so that a preload interrupted by a restart resumes where it stopped (`Preloader.resume`).

Pages are fetched by calling the `PageCache` WSGI callable directly with a fresh anonymous
environ: never over loopback HTTP, never with a cookie or credentials.
"""

from __future__ import annotations

import atexit
import io
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import unquote_to_bytes, urlsplit

from sitecache.cache.counters import PRELOAD_LABEL
from sitecache.cache.middleware import PageCache
from sitecache.cache.storage import StorageError

__all__ = ["LOCK_NAME", "PROGRESS_NAME", "Answer", "Preloader", "anonymous_get", "iso_time"]

logger = logging.getLogger("sitecache.cache.preload")

PROGRESS_NAME: Final = "preload"
URLS_NAME: Final = "preload_urls"
CANCEL_NAME: Final = "preload_cancel"
LOCK_NAME: Final = "preload"
LOCK_TTL: Final = 10.0
#: seconds between progress writes (and cancel checks) while running
REPORT_INTERVAL: Final = 0.2
USER_AGENT: Final = "sitecache-preload"


def iso_time(timestamp: float | None) -> str | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` of a Unix time, or ``None``."""
    if not timestamp:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(timestamp))


def _idle() -> dict[str, Any]:
    return {
        "running": False,
        "total": 0,
        "done": 0,
        "failed": 0,
        "current": None,
        "started": None,
        "finished": None,
        "next_run": None,
        "run_id": None,
    }


class Preloader:
    """Starts, cancels, resumes and reports preloads (see the module docstring).

    Args:
        cache: the page cache whose WSGI callable is visited.
        urls: the URLs (absolute, or /paths) one preload visits, in order.
        base_url: ``scheme://host`` of the site (the host a path is fetched on).
        interval: minutes between scheduled preloads (0: only on demand).
    """

    def __init__(
        self,
        cache: PageCache,
        urls: Callable[[], Iterable[str]],
        base_url: Callable[[], str],
        interval: Callable[[], int],
    ) -> None:
        self.cache = cache
        self.engine = cache.engine
        self.urls = urls
        self.base_url = base_url
        self.interval = interval
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._exit_hooked = False

    # ------------------------------------------------------------------ reading
    def state(self, *, strict: bool = False) -> dict[str, Any]:
        """The stored progress, internal fields included (idle when unreadable, unless
        ``strict``: then the `StorageError` is raised)."""
        state = _idle()
        try:
            stored = self.engine.read_record(PROGRESS_NAME)
        except StorageError as exc:
            if strict:
                raise
            self.engine.storage_warning("preload progress unreadable: %s", exc)
            return state
        if stored is not None:
            state.update({key: stored[key] for key in state if key in stored})
        return state

    def progress(self) -> dict[str, Any]:
        """The progress object of ``/preload`` and ``/status`` (times in ISO 8601 UTC)."""
        state = self.state()
        return {
            "running": bool(state["running"]),
            "total": int(state["total"]),
            "done": int(state["done"]),
            "failed": int(state["failed"]),
            "current": state["current"],
            "started": iso_time(state["started"]),
            "finished": iso_time(state["finished"]),
            "next_run": iso_time(state["next_run"]),
        }

    def write_state(self, state: Mapping[str, Any]) -> None:
        """Store the progress (internal fields included).

        Raises:
            StorageError: the storage failed.
        """
        self.engine.write_record(PROGRESS_NAME, state)

    def _next_run(self, now: float) -> float | None:
        minutes = self.interval()
        return now + minutes * 60 if minutes > 0 else None

    # ------------------------------------------------------------------ control
    def start(self, base_url: str | None = None, wait: float = 1.0) -> dict[str, Any]:
        """Start a preload unless one runs anywhere (then nothing changes); the progress.

        ``wait`` seconds are spent waiting for a cancelled preload that is still winding down.
        """
        deadline = time.monotonic() + wait
        while True:
            with self._lock:
                if self._thread is not None and self._thread.is_alive():
                    if self.state()["running"] or time.monotonic() > deadline:
                        return self.progress()
                else:
                    owner = self.engine.acquire(LOCK_NAME, LOCK_TTL)
                    if owner is not None:
                        return self._launch(owner, base_url)
                    if self.state()["running"] or time.monotonic() > deadline:
                        return self.progress()
            time.sleep(0.05)

    def _launch(self, owner: str, base_url: str | None) -> dict[str, Any]:
        base = base_url or self.base_url()
        try:
            urls = [str(url) for url in self.urls()]
            now = self.engine.clock()
            state = {
                **_idle(),
                "running": True,
                "total": len(urls),
                "started": now,
                "next_run": self._next_run(now),
                "run_id": uuid.uuid4().hex,
            }
            self.engine.write_record(URLS_NAME, {"base": base, "urls": urls})
            self.write_state(state)
        except BaseException:
            self.engine.release(LOCK_NAME, owner)
            raise
        self._spawn(owner, state, base, urls)
        return self.progress()

    def _spawn(self, owner: str, state: dict[str, Any], base: str, urls: list[str]) -> None:
        if not self._exit_hooked:
            # A process that exits mid-preload hands it over at once (the next one resumes).
            atexit.register(self._hand_over)
            self._exit_hooked = True
        self._owner = owner
        self._thread = threading.Thread(
            target=self._run, args=(owner, state, base, urls), name="sitecache-preload", daemon=True
        )
        self._thread.start()

    def _hand_over(self) -> None:
        owner = getattr(self, "_owner", None)
        if owner is not None and self._thread is not None and self._thread.is_alive():
            self.engine.release(LOCK_NAME, owner)

    def cancel(self) -> dict[str, Any]:
        """Stop the running preload (wherever it runs); idempotent. The progress after it.

        Raises:
            StorageError: the progress cannot be read (a cancel must not report success).
        """
        state = self.state(strict=True)
        if state["running"]:
            now = self.engine.clock()
            self.engine.write_value(CANCEL_NAME, str(state["run_id"]).encode("utf-8"))
            state.update(running=False, current=None, finished=now)
            self.write_state(state)
        return self.progress()

    def resume(self) -> bool:
        """Continue a preload whose process died (its lock expired); whether one resumed."""
        state = self.state()
        if not state["running"]:
            return False
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return False
            owner = self.engine.acquire(LOCK_NAME, LOCK_TTL)
            if owner is None:
                return False
            try:
                stored = self.engine.read_record(URLS_NAME) or {}
                urls = [str(url) for url in stored.get("urls", [])]
                base = str(stored.get("base") or self.base_url())
            except (StorageError, TypeError):
                self.engine.release(LOCK_NAME, owner)
                raise
            logger.info("resuming the preload at %d of %d", state["done"], len(urls))
            self._spawn(owner, state, base, urls)
            return True

    def wait(self, timeout: float | None = None) -> None:
        """Wait for this process's preload thread to end (tests, the command line)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    # ------------------------------------------------------------------ the work
    def _cancelled(self, run_id: object) -> bool:
        raw = self.engine.read_value(CANCEL_NAME)
        return raw is not None and raw.decode("utf-8", "replace") == str(run_id)

    def _run(self, owner: str, state: dict[str, Any], base: str, urls: list[str]) -> None:
        lost = False
        try:
            reported = time.monotonic()
            for index in range(int(state["done"]), len(urls)):
                # Cancel is checked before every visit (one small read), so it is immediate
                # wherever it was asked for.
                if self._cancelled(state["run_id"]):
                    break
                url = urls[index]
                state["current"] = url
                if time.monotonic() - reported >= REPORT_INTERVAL:
                    reported = time.monotonic()
                    if not self.engine.renew(LOCK_NAME, owner, LOCK_TTL):
                        logger.warning("the preload lost its lock; another process resumes it")
                        lost = True
                        break
                    self.engine.flush_counters()  # `cache stats` elsewhere sees the run
                    self.write_state(state)
                if not self.visit(url, base):
                    state["failed"] += 1
                state["done"] = index + 1
        except Exception:
            logger.exception("the preload stopped on an error")
        finally:
            try:
                # A cancel written while this thread reported is overwritten here with the
                # final state (never "running"); a lost lock leaves the state to the new owner.
                if not lost:
                    # The visits' counts first: whoever reads "finished" (`sitecache cache
                    # preload` in another process) then reads them in `cache stats`.
                    self.engine.flush_counters()
                    now = self.engine.clock()
                    state.update(running=False, current=None, finished=now)
                    state["next_run"] = self._next_run(now)
                    self.write_state(state)
            except StorageError as exc:
                logger.warning("preload progress not written: %s", exc)
            self.engine.release(LOCK_NAME, owner)

    def visit(self, url: str, base: str) -> bool:
        """Fetch ``url`` through the cache as an anonymous visitor; whether it is now cached.

        Counted apart (``preload`` in the stats), not as the visitors' hits and misses."""
        with self.engine.counting_as(PRELOAD_LABEL):
            answer = anonymous_get(self.cache, url, base, USER_AGENT)
        return answer.status == 200 and (
            "; hit" in answer.cache_status or "stored" in answer.cache_status
        )


@dataclass(frozen=True, slots=True)
class Answer:
    """What an in-process anonymous GET got back."""

    status: int
    headers: list[tuple[str, str]]
    body_size: int

    def header(self, name: str) -> str:
        """The first value of the header ``name`` ("" when absent)."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), "")

    @property
    def cache_status(self) -> str:
        """The ``Cache-Status`` header."""
        return self.header("Cache-Status")


def anonymous_get(app: Callable[..., Iterable[bytes]], url: str, base: str, agent: str) -> Answer:
    """GET ``url`` (absolute, or a /path on ``base``) from the WSGI ``app`` in-process."""
    parts = urlsplit(url)
    if parts.scheme and parts.netloc:
        base = f"{parts.scheme}://{parts.netloc}"
    base_parts = urlsplit(base)
    scheme = base_parts.scheme or "http"
    host = base_parts.netloc or "localhost"
    name, _, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not name or not port.isdigit():
        name, port = host, "443" if scheme == "https" else "80"
    # SECURITY: a bare environ: no cookie, no Authorization, from the loopback address.
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(parts.path or "/").decode("latin-1"),
        "QUERY_STRING": parts.query,
        "SERVER_NAME": name,
        "SERVER_PORT": port,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": host,
        "HTTP_USER_AGENT": agent,
        "HTTP_ACCEPT_ENCODING": "gzip",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scheme,
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    seen: dict[str, Any] = {"status": "500", "headers": []}

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        seen["status"] = status
        seen["headers"] = list(headers)
        return lambda data: None

    result = app(environ, start_response)
    size = 0
    try:
        for chunk in result:
            size += len(chunk)
    finally:
        close = getattr(result, "close", None)
        if callable(close):
            close()
    try:
        status = int(str(seen["status"]).split(" ", 1)[0])
    except ValueError:
        status = 500
    return Answer(status, seen["headers"], size)
