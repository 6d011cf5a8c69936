"""Free space on the disks the site writes to: a cheap probe with a threshold.

`DiskSpace` reads ``os.statvfs`` of each directory it watches (the data directory, the static
root) at most once per `DiskSpace.interval` seconds, and never on a request that does not
ask for it: ``GET /healthz`` (its ``disk`` part) and the cache's ``GET /status`` (warnings
``disk_low`` and ``disk_full``) read it. A directory that does not exist yet is measured where
it would be created (its nearest existing parent); two directories on one file system are
reported once.

A disk is *full* under `FULL_BYTES` free (SQLite cannot write a page, a static copy cannot be
written), *low* under ``low_bytes`` free or under ``low_percent`` of its size, whichever comes
first (by default 100 MB and 5 %).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

__all__ = [
    "DEFAULT_LOW_BYTES",
    "DEFAULT_LOW_PERCENT",
    "FULL_BYTES",
    "DiskLevel",
    "DiskReading",
    "DiskSpace",
]

#: Free bytes under which a disk is low by default (100 MB).
DEFAULT_LOW_BYTES: Final = 100 * 1024 * 1024
#: The share of a disk's size (in percent) under which it is low by default.
DEFAULT_LOW_PERCENT: Final = 5.0
#: Free bytes under which a disk is full (nothing useful can be written).
FULL_BYTES: Final = 1024 * 1024

#: How much room a disk has: enough, low, or none.
DiskLevel = Literal["ok", "low", "full"]
_ORDER: Final[dict[DiskLevel, int]] = {"ok": 0, "low": 1, "full": 2}


@dataclass(frozen=True, slots=True)
class DiskReading:
    """One directory's disk as measured.

    Attributes:
        path: the directory watched.
        free_bytes: bytes an unprivileged process may still write (``f_bavail``).
        total_bytes: the file system's size.
        level: ``"ok"``, ``"low"`` or ``"full"``.
        device: the file system's device number (``st_dev``): which directories it holds.
    """

    path: str
    free_bytes: int
    total_bytes: int
    level: DiskLevel
    device: int = 0

    @property
    def free_percent(self) -> float:
        """Free space as a percentage of the size (one decimal)."""
        if self.total_bytes <= 0:
            return 0.0
        return round(100.0 * self.free_bytes / self.total_bytes, 1)

    def as_json(self) -> dict[str, object]:
        """The reading as ``/healthz`` and ``/status`` show it."""
        return {
            "path": self.path,
            "free_bytes": self.free_bytes,
            "total_bytes": self.total_bytes,
            "free_percent": self.free_percent,
            "level": self.level,
        }


class DiskSpace:
    """The free space of ``paths``' disks, measured at most once per ``interval`` seconds.

    Args:
        paths: the directories to watch (missing ones are measured at their nearest existing
            parent).
        low_bytes: free bytes under which a disk is low.
        low_percent: the share of its size under which a disk is low.
        interval: seconds a measurement is reused.
        clock: monotonic seconds (tests pass a fake one).
        statvfs: ``os.statvfs`` (tests pass a fake one).
    """

    def __init__(
        self,
        paths: Iterable[Path],
        *,
        low_bytes: int = DEFAULT_LOW_BYTES,
        low_percent: float = DEFAULT_LOW_PERCENT,
        interval: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
        statvfs: Callable[[str], os.statvfs_result] = os.statvfs,
    ) -> None:
        self.paths = [Path(path) for path in dict.fromkeys(paths)]
        self.low_bytes = low_bytes
        self.low_percent = low_percent
        self.interval = interval
        self.clock = clock
        self._statvfs = statvfs
        self._lock = threading.Lock()
        self._measured_at = float("-inf")
        self._readings: list[DiskReading] = []

    def level_of(self, free_bytes: int, total_bytes: int) -> DiskLevel:
        """The level of a disk with ``free_bytes`` of ``total_bytes`` free."""
        if free_bytes < FULL_BYTES:
            return "full"
        if free_bytes < self.low_bytes or free_bytes * 100.0 < self.low_percent * total_bytes:
            return "low"
        return "ok"

    def readings(self) -> list[DiskReading]:
        """One reading per disk (the first watched directory on it), measured at most once
        per interval; a directory that cannot be measured is left out."""
        now = self.clock()
        with self._lock:
            if now - self._measured_at >= self.interval:
                self._readings = self._measure()
                self._measured_at = now
            return list(self._readings)

    def reading_for(self, path: Path) -> DiskReading | None:
        """The reading of the disk that holds ``path`` (one of the watched directories, or a
        directory on the same file system), ``None`` when it is not measured."""
        try:
            device = os.stat(_existing(Path(path))).st_dev
        except OSError:
            return None
        return next((r for r in self.readings() if r.device == device), None)

    def level(self) -> DiskLevel:
        """The worst level of the watched disks (``"ok"`` when none could be measured)."""
        levels = [reading.level for reading in self.readings()]
        return max(levels, key=_ORDER.__getitem__, default="ok")

    def warnings(self) -> list[tuple[str, str]]:
        """``("disk_full", message)`` or ``("disk_low", message)`` for each disk that is."""
        found: list[tuple[str, str]] = []
        for reading in self.readings():
            size = f"{_megabytes(reading.free_bytes)} of {_megabytes(reading.total_bytes)}"
            if reading.level == "full":
                found.append(
                    (
                        "disk_full",
                        f"The disk of {reading.path} is full ({size} free): pages are served "
                        "without being cached, static copies are not written and changes to "
                        "the site are refused until space is freed.",
                    )
                )
            elif reading.level == "low":
                found.append(
                    (
                        "disk_low",
                        f"The disk of {reading.path} is almost full ({size} free, "
                        f"{reading.free_percent:g} %): free some space before it runs out.",
                    )
                )
        return found

    def _measure(self) -> list[DiskReading]:
        found: list[DiskReading] = []
        devices: set[int] = set()
        for path in self.paths:
            existing = _existing(path)
            try:
                device = os.stat(existing).st_dev
                result = self._statvfs(str(existing))
            except OSError:
                continue
            if device in devices:
                continue
            devices.add(device)
            free = result.f_bavail * result.f_frsize
            total = result.f_blocks * result.f_frsize
            level = self.level_of(free, total)
            found.append(DiskReading(str(path), free, total, level, device))
        return found


def _existing(path: Path) -> Path:
    """``path``, or its nearest parent that exists (where it would be created)."""
    current = path
    while not current.exists() and current != current.parent:
        current = current.parent
    return current


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"
