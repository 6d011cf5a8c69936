"""Traffic for the fault tests and ``bench/faults_bench.py``: threads sending requests of
several kinds while a service fails, every answer recorded (status, time, error code, whether
it was refused properly), and the figures the acceptance asks for.

A refusal is proper when it is a 503 (or 507) with ``Retry-After`` and, for a REST request, a
JSON body ``{code, message, data: {status}}`` (an HTML page for the others), answered within
`REFUSAL_SECONDS`; no request may take `MAX_SECONDS` or more, and none may answer 500.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "HEALTH_KIND",
    "MAX_SECONDS",
    "REFUSAL_SECONDS",
    "Answer",
    "Load",
    "Operation",
    "Recorder",
    "http_request",
]

#: No request may take this long (seconds), whatever fails.
MAX_SECONDS: Final = 10.0
#: A refusal (503/507) must come within this (seconds).
REFUSAL_SECONDS: Final = 5.0
#: The statuses of a proper refusal while a service fails.
REFUSAL_STATUSES: Final = frozenset({503, 507})
#: The kind of the answers of ``/healthz`` (its 503 is a report, not an error).
HEALTH_KIND: Final = "healthz"


@dataclass(frozen=True, slots=True)
class Answer:
    """One request's outcome."""

    kind: str
    status: int
    seconds: float
    started: float
    code: str = ""
    retry_after: str | None = None
    content_type: str = ""
    body: bytes = b""
    error: str = ""
    cache_status: bytes | None = None

    @property
    def refused_properly(self) -> bool:
        """A 503/507 with Retry-After, a JSON error code for REST (HTML for pages), in time;
        for a health check (kind ``healthz``), its 503 report naming what fails."""
        if self.kind == HEALTH_KIND:
            return self.status == 503 and b'"status":"fail"' in self.body
        if self.status not in REFUSAL_STATUSES or self.retry_after is None:
            return False
        if self.seconds >= REFUSAL_SECONDS:
            return False
        if "json" in self.content_type:
            return bool(self.code)
        return "html" in self.content_type


def http_request(
    port: int,
    kind: str,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
) -> Answer:
    """One request over a fresh connection, timed; a transport failure is status 0."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=dict(headers or {}))
        raw = connection.getresponse()
        data = raw.read()
        status = raw.status
        content_type = raw.getheader("Content-Type") or ""
        retry_after = raw.getheader("Retry-After")
        cache_status = raw.getheader("Cache-Status")
    except OSError as exc:
        return Answer(kind, 0, time.monotonic() - started, started, error=repr(exc))
    finally:
        connection.close()
    seconds = time.monotonic() - started
    code = ""
    if "json" in content_type and status >= 400:
        try:
            decoded = json.loads(data)
        except ValueError:
            decoded = None
        if isinstance(decoded, dict) and isinstance(decoded.get("code"), str):
            data_status = (decoded.get("data") or {}).get("status")
            code = decoded["code"] if data_status == status else f"{decoded['code']}?status"
    return Answer(
        kind,
        status,
        seconds,
        started,
        code,
        retry_after,
        content_type,
        data,
        cache_status=cache_status.encode() if cache_status is not None else None,
    )


Operation = Callable[[], Answer]
"""Sends one request and returns its answer (it may record what it wrote, see `Recorder`)."""


@dataclass
class Recorder:
    """What the writers were told was saved (answered 2xx), to look for afterwards."""

    saved: list[Any] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, item: Any) -> None:
        with self._lock:
            self.saved.append(item)


class Load:
    """Threads running operations in a loop until `stop`, every answer kept.

    Args:
        operations: ``name -> (operation, threads)``.
        pause: seconds each thread waits between two requests.
    """

    def __init__(self, operations: Mapping[str, tuple[Operation, int]], pause: float = 0.02):
        self.operations = dict(operations)
        self.pause = pause
        self.answers: list[Answer] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> Load:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start every thread."""
        for name, (operation, count) in self.operations.items():
            for index in range(count):
                thread = threading.Thread(
                    target=self._run, args=(operation,), name=f"load-{name}-{index}", daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def _run(self, operation: Operation) -> None:
        while not self._stop.is_set():
            try:
                answer = operation()
            except Exception as exc:  # the operation's own bug: recorded, never silent
                answer = Answer("error", -1, 0.0, time.monotonic(), error=repr(exc))
            with self._lock:
                self.answers.append(answer)
            self._stop.wait(self.pause)

    def stop(self) -> None:
        """Stop the threads (each ends after its request in flight)."""
        self._stop.set()
        for thread in self._threads:
            thread.join(MAX_SECONDS * 3)

    # ------------------------------------------------------------------ figures
    def between(self, start: float, end: float) -> list[Answer]:
        """The answers to requests started between ``start`` and ``end`` (monotonic)."""
        return [answer for answer in self.answers if start <= answer.started < end]

    def problems(self) -> list[str]:
        """What breaks the acceptance: a 500 (or any 5xx but 503/507), a transport failure,
        an improper refusal, a request of `MAX_SECONDS` or more (empty: none)."""
        found = []
        for answer in self.answers:
            what = f"{answer.kind} {answer.status} in {answer.seconds:.2f} s"
            if answer.status <= 0:
                found.append(f"{what}: {answer.error}")
            elif answer.seconds >= MAX_SECONDS:
                found.append(f"{what}: over {MAX_SECONDS} s")
            elif answer.status >= 500 and not answer.refused_properly:
                found.append(
                    f"{what}: not a proper refusal (code {answer.code!r}, Retry-After "
                    f"{answer.retry_after!r}, {answer.content_type}) {answer.body[:200]!r}"
                )
        return found

    def summary(self) -> dict[str, Any]:
        """Counts and latency percentiles (ms) of every answer."""
        times = sorted(answer.seconds * 1000 for answer in self.answers)
        statuses = Counter(str(answer.status) for answer in self.answers)
        return {
            "requests": len(self.answers),
            "status_counts": dict(sorted(statuses.items())),
            "p50_ms": round(_percentile(times, 50), 1),
            "p99_ms": round(_percentile(times, 99), 1),
            "max_ms": round(times[-1], 1) if times else 0.0,
        }

    def first_success_after(self, moment: float, kinds: set[str] | None = None) -> float | None:
        """Seconds from ``moment`` to the end of the first 2xx/3xx answer of a request started
        after it (of ``kinds``, when given), or ``None``."""
        ends = [
            answer.started + answer.seconds - moment
            for answer in self.answers
            if answer.started >= moment
            and 200 <= answer.status < 400
            and (kinds is None or answer.kind in kinds)
        ]
        return min(ends) if ends else None


def _percentile(values: list[float], percent: float) -> float:
    if not values:
        return 0.0
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(percent) - 1]
