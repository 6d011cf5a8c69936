"""The page cache's figures in Prometheus's text format (``GET /site-admin/metrics``).

Everything comes from the storage the engine shares with every worker process and node (its
counters, flushed at most once a second, and its index), never from one process alone: a
scrape of any worker reports the whole site. Nothing here is per-visitor or secret.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from sitecache.cache.engine import CacheEngine
from sitecache.cache.latency import histogram
from sitecache.cache.reports import OUTCOMES
from sitecache.cache.storage_log import STORAGE_ERROR_COUNTER

__all__ = ["CONTENT_TYPE", "metrics_text"]

#: The media type of Prometheus's text exposition format.
CONTENT_TYPE: Final = "text/plain; version=0.0.4; charset=utf-8"


def _escape(value: str) -> str:
    """A label value as the text format writes it (backslash, quote and newline escaped)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _family(
    name: str, kind: str, help_text: str, samples: Iterable[tuple[str, Mapping[str, str], float]]
) -> list[str]:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
    for sample, labels, value in samples:
        label_text = ",".join(f'{key}="{_escape(text)}"' for key, text in labels.items())
        number = repr(float(value)) if isinstance(value, float) else str(int(value))
        lines.append(f"{sample}{{{label_text}}} {number}" if label_text else f"{sample} {number}")
    return lines


def _prefixed(counters: Mapping[str, int], prefix: str) -> list[tuple[str, int]]:
    return sorted(
        (name.removeprefix(prefix), value)
        for name, value in counters.items()
        if name.startswith(prefix)
    )


def metrics_text(engine: CacheEngine, progress: Mapping[str, Any]) -> str:
    """The exposition of the shared counters, the index's totals and ``progress`` (the
    preload's, `Preloader.progress`).

    Raises:
        StorageError: the storage failed.
    """
    stats = engine.stats()  # flushes this process's counts first
    counters = engine.stored_counters()
    lines: list[str] = []
    requests = [
        ("sitecache_requests_total", {"outcome": name}, counters.get(name, 0)) for name in OUTCOMES
    ]
    lines += _family("sitecache_requests_total", "counter",
                     "Visitors' requests by cache outcome.", requests)  # fmt: skip
    preload = [
        ("sitecache_preload_requests_total", {"outcome": name}, counters.get(f"preload:{name}", 0))
        for name in OUTCOMES
    ]
    lines += _family("sitecache_preload_requests_total", "counter",
                     "Preload's own visits by cache outcome.", preload)  # fmt: skip
    own = [
        ("sitecache_own_requests_total", {"outcome": name}, counters.get(f"own:{name}", 0))
        for name in OUTCOMES
    ]
    lines += _family("sitecache_own_requests_total", "counter",
                     "The site's own traffic (the cache test, administration requests) by "
                     "cache outcome.", own)  # fmt: skip
    lines += _family(
        "sitecache_bypasses_total",
        "counter",
        "Visitors' bypasses by reason (the Cache-Status detail).",
        [("sitecache_bypasses_total", {"reason": k}, v) for k, v in _prefixed(counters, "bypass:")],
    )
    lines += _family(
        "sitecache_purges_total",
        "counter",
        "Purges by scope.",
        [("sitecache_purges_total", {"scope": k}, v) for k, v in _prefixed(counters, "purge:")],
    )
    lines += _family(
        "sitecache_purged_entries_total",
        "counter",
        "Entries removed or marked stale by purges, by scope.",
        [
            ("sitecache_purged_entries_total", {"scope": k}, v)
            for k, v in _prefixed(counters, "purged_entries:")
        ],
    )
    entries = stats["entries"]
    lines += _family(
        "sitecache_entries",
        "gauge",
        "Stored pages by freshness.",
        [("sitecache_entries", {"status": s}, entries[s]) for s in ("fresh", "expired")],
    )
    sizes = stats["bytes"]
    lines += _family(
        "sitecache_bytes",
        "gauge",
        "Bytes of stored bodies and of their gzip copies.",
        [
            ("sitecache_bytes", {"kind": "body"}, sizes["total"]),
            ("sitecache_bytes", {"kind": "gzip"}, sizes["compressed"]),
        ],
    )
    errors = sum(
        value
        for name, value in counters.items()
        if name == STORAGE_ERROR_COUNTER or name.endswith(":" + STORAGE_ERROR_COUNTER)
    )
    lines += _family("sitecache_storage_errors_total", "counter",
                     "Failures of the cache storage (each one, logged or not).",
                     [("sitecache_storage_errors_total", {}, errors)])  # fmt: skip
    lines += _family(
        "sitecache_preload_running",
        "gauge",
        "Whether a preload is under way (1) or not (0).",
        [("sitecache_preload_running", {}, 1 if progress.get("running") else 0)],
    )
    lines += _family(
        "sitecache_preload_urls",
        "gauge",
        "The current (or last) preload's URLs: to visit, visited, failed.",
        [
            ("sitecache_preload_urls", {"state": state}, int(progress.get(state) or 0))
            for state in ("total", "done", "failed")
        ],
    )
    lines += _histogram_lines(counters)
    return "\n".join(lines) + "\n"


def _histogram_lines(counters: Mapping[str, int]) -> list[str]:
    """``sitecache_request_duration_seconds``: every request the application answered."""
    figures = histogram(counters)
    name = "sitecache_request_duration_seconds"
    samples: list[tuple[str, Mapping[str, str], float]] = [
        (f"{name}_bucket", {"le": bound}, count) for bound, count in figures.buckets
    ]
    samples.append((f"{name}_sum", {}, float(figures.sum_seconds)))
    samples.append((f"{name}_count", {}, figures.count))
    return _family(
        name,
        "histogram",
        "Time the application took to answer a request (until its body was returned).",
        samples,
    )
