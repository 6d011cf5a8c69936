"""The test tiers: which tests start real servers (``e2e``, ``faults``) and which do not.

``make check`` runs the tests marked neither ``e2e`` nor ``faults``: they use the Redis and the
PostgreSQL already running on the machine, but start no server process of their own. A test is
marked by where it lives (`DIRECTORY_MARKS`) or by a fixture that starts servers
(`FIXTURE_MARKS`), and `ServerGuard` fails, loudly and by name, any test that starts a server
process without a mark, so a new one cannot slip into the quick tier unnoticed.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterator, Sequence
from pathlib import PurePath
from typing import Any

import pytest

#: The markers of the tiers that start servers.
SERVER_MARKERS = ("e2e", "faults")

#: Directories whose every test starts real servers, and the mark they get.
DIRECTORY_MARKS = {
    "tests/e2e/": "e2e",
    "tests/examples/": "e2e",
    "tests/faults/": "faults",
}

#: Modules outside those directories that start a server in every test, or that are a build
#: rather than unit tests (the whole documentation site through Sphinx: tens of seconds of
#: CPU, which `make docs` and `make test` still spend).
MODULE_MARKS = {
    "tests/cache/test_http_semantics_e2e.py": "e2e",
    "tests/docs/test_site.py": "e2e",
}

#: Fixtures that start server processes, and the mark a test using one gets.
FIXTURE_MARKS = {
    "live_server": "e2e",
    "private_redis": "faults",
    "own_postgres": "faults",
    "own_redis": "faults",
}

#: Programs that are servers (or start one: a browser, PostgreSQL's cluster tools).
SERVER_PROGRAMS = frozenset(
    {
        "gunicorn",
        "uwsgi",
        "waitress-serve",
        "nginx",
        "redis-server",
        "initdb",
        "pg_ctl",
        "pg_ctlcluster",
        "postgres",
        "postmaster",
        "chromium",
        "chromium-browser",
        "chromedriver",
        "google-chrome",
    }
)

#: Python modules that are servers when run with ``python -m``.
SERVER_MODULES = frozenset({"gunicorn", "uwsgi", "waitress"})

#: Arguments with which a server program only reports and exits (``nginx -t`` checks a
#: configuration, ``--version`` prints one).
REPORT_ONLY_ARGUMENTS = frozenset({"-t", "-T", "-v", "-V", "--version", "-h", "--help"})


def tier_mark(nodeid: str, fixturenames: Sequence[str]) -> str | None:
    """The server marker a test gets by where it lives or the fixtures it uses; ``None`` for
    a test of the quick tier."""
    path = nodeid.split("::", 1)[0]
    for directory, mark in DIRECTORY_MARKS.items():
        if path.startswith(directory):
            return mark
    if path in MODULE_MARKS:
        return MODULE_MARKS[path]
    for name in fixturenames:
        if name in FIXTURE_MARKS:
            return FIXTURE_MARKS[name]
    return None


#: Programs that run a command given as one string after ``-c``.
SHELLS = frozenset({"sh", "bash", "dash", "su", "runuser"})


def _split(text: str) -> list[str]:
    """``text`` split as the shell would (on spaces when its quotes do not balance)."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _words(command: Any) -> tuple[list[str], set[int]]:
    """The words of a command as `subprocess` takes it (a list of str, bytes or paths, or a
    string for ``shell=True``), and the positions of those that name a program: the first, the
    first of the command a shell or ``su`` runs with ``-c``, and any path (``/usr/sbin/nginx``;
    a bare word elsewhere is an argument, as ``su postgres``'s user)."""
    if isinstance(command, str | bytes | os.PathLike):
        words = _split(os.fsdecode(command))
        programs = {0}
    else:
        words = [os.fsdecode(part) for part in command]
        programs = {0}
        if words and PurePath(words[0]).name in SHELLS and "-c" in words[:-1]:
            inner = words.index("-c") + 1
            words[inner : inner + 1] = _split(words[inner])
            programs.add(inner)
    programs |= {index for index, word in enumerate(words) if "/" in word}
    return words, programs


def starts_server(command: Any) -> str | None:
    """The server ``command`` starts (a program of `SERVER_PROGRAMS`, ``python -m gunicorn``,
    ``sitecache serve``), or ``None`` when it starts none (it only reports, as ``nginx -t``)."""
    words, programs = _words(command)
    if any(word in REPORT_ONLY_ARGUMENTS for word in words):
        return None
    for index, word in enumerate(words):
        name = PurePath(word).name
        if name in SERVER_PROGRAMS and index in programs:
            return name
        after = words[index + 1 : index + 2]
        if word == "-m" and after and after[0] in SERVER_MODULES:
            return f"python -m {after[0]}"
        program = (name == "sitecache" and index in programs) or (
            word == "-m" and after[:1] == ["sitecache.cli"]
        )
        if program and "serve" in words[index + 1 :]:
            return "sitecache serve"
    return None


#: The audit events that start a program, and where their command is among the arguments.
_PROGRAM_EVENTS = {"subprocess.Popen": 1, "os.posix_spawn": 1, "os.exec": 1, "os.system": 0}


class ServerGuard:
    """Fails a test that starts a server process without an ``e2e`` or ``faults`` mark.

    Installed once per process (an audit hook cannot be taken back), it looks at every
    program started while a test runs (its fixtures included) and raises `UnmarkedServerError`
    in the test that starts a server without the mark.
    """

    def __init__(self) -> None:
        self.current: pytest.Item | None = None
        self.marked = False

    def install(self) -> None:
        """Watch the programs this process starts from now on."""
        sys.addaudithook(self.audit)

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        """The audit hook: refuse a server started by an unmarked test."""
        where = _PROGRAM_EVENTS.get(event)
        if where is None or self.current is None or self.marked:
            return
        server = starts_server(args[where])
        if server is not None:
            raise UnmarkedServerError(self.current.nodeid, server)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        """Know which test runs (setup, call and teardown), and whether it is marked."""
        self.current = item
        self.marked = any(item.get_closest_marker(name) for name in SERVER_MARKERS)
        try:
            return (yield)
        finally:
            self.current = None


class UnmarkedServerError(RuntimeError):
    """A test of the quick tier started a server process."""

    def __init__(self, nodeid: str, server: str) -> None:
        super().__init__(
            f"{nodeid} starts a server ({server}) but is not marked e2e or faults: `make check`"
            " runs only tests that start no server. Mark it (pytestmark = pytest.mark.e2e), or"
            " name its fixture or module in tests/tiers.py."
        )
