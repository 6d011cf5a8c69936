"""Services of the fault tests' own, which a test stops, restarts, flushes or fills at will:
a PostgreSQL cluster (`OwnPostgres`, ``initdb``/``pg_ctl`` on a free port in a temporary
directory), a ``redis-server`` without persistence (`OwnRedis`) and a size-limited tmpfs
(`TmpfsMount`).

Each class raises `ServiceRefused` when the machine forbids what it needs (no PostgreSQL
binaries, no ``redis-server``, ``mount`` refused): the fixtures turn that into a skip with its
message. Nothing here ever touches the machine's own Redis or PostgreSQL.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = [
    "OwnPostgres",
    "OwnRedis",
    "ServiceRefused",
    "TmpfsMount",
    "free_port",
    "postgres_bin",
    "private_directory",
]

#: Where Debian's PostgreSQL packages put their binaries (the newest version wins).
POSTGRES_ROOT = Path("/usr/lib/postgresql")


class ServiceRefused(RuntimeError):
    """The machine forbids a service a fault test needs (the message says what and why)."""


def free_port() -> int:
    """A TCP port nobody listens on right now, on the loopback address."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def postgres_bin() -> Path:
    """The directory of the newest installed PostgreSQL's ``initdb`` and ``pg_ctl``.

    Raises:
        ServiceRefused: no PostgreSQL server binaries are installed.
    """
    found = sorted(
        POSTGRES_ROOT.glob("*/bin/initdb"),
        key=lambda path: [int(part) for part in path.parts[-3].split(".") if part.isdigit()],
    )
    if not found:
        on_path = shutil.which("initdb")
        if on_path is None:
            raise ServiceRefused(
                f"no PostgreSQL server binaries (initdb) under {POSTGRES_ROOT} or on PATH"
            )
        return Path(on_path).parent
    return found[-1].parent


def private_directory(prefix: str) -> Path:
    """A new directory under the system's temporary directory (mode 0700), for a service
    that runs as another user (pytest's own temporary directories are closed to others)."""
    return Path(tempfile.mkdtemp(prefix=prefix))


def _answers(port: int, payload: bytes, expect: tuple[bytes, ...]) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
            connection.sendall(payload)
            return connection.recv(16).startswith(expect)
    except OSError:
        return False


class OwnPostgres:
    """A PostgreSQL cluster of the test's own in ``directory``, on a free loopback port.

    ``initdb`` refuses to run as root: as root the directory is given to the ``postgres``
    user and every command runs as that user (``su postgres``), as ``.ci/run`` does; that
    user must be able to reach ``directory`` (`private_directory` makes one it can).

    Raises:
        ServiceRefused: no binaries, or no ``postgres`` user to run them as root.
    """

    def __init__(self, directory: Path) -> None:
        self.bin = postgres_bin()
        self.directory = directory
        self.data = directory / "data"
        self.port = free_port()
        self._as_root = os.geteuid() == 0
        if self._as_root:
            try:
                self._owner = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise ServiceRefused("running as root and there is no postgres user") from exc

    @property
    def url(self) -> str:
        """The ``test`` database's URL."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/test"

    def _run(self, command: Sequence[str | Path | int], *, check: bool = True) -> str:
        argv = [str(part) for part in command]
        if self._as_root:
            argv = ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(argv)]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        if check and done.returncode != 0:
            shown = shlex.join(str(part) for part in command)
            raise RuntimeError(f"{shown} failed:\n{done.stdout}\n{done.stderr}")
        return done.stdout

    def init(self) -> None:
        """``initdb`` the cluster, start it and create the ``test`` database."""
        self.directory.mkdir(parents=True, exist_ok=True)
        if self._as_root:
            os.chown(self.directory, self._owner.pw_uid, self._owner.pw_gid)
        self._run([self.bin / "initdb", "-D", self.data, "-A", "trust", "-U", "postgres",
                   "--no-sync"])  # fmt: skip
        self.start()
        self._run([self.bin / "createdb", "-h", "127.0.0.1", "-p", self.port, "-U", "postgres",
                   "test"])  # fmt: skip

    def start(self) -> None:
        """Start the server on its port (the same port every time) and wait until it answers."""
        options = (
            f"-p {self.port} -k {self.directory} -c listen_addresses=127.0.0.1"
            " -c max_connections=200 -c fsync=off -c full_page_writes=off"
        )
        self._run([self.bin / "pg_ctl", "-D", self.data, "-l", self.directory / "postgres.log",
                   "-w", "-t", "60", "-o", options, "start"])  # fmt: skip
        deadline = time.monotonic() + 30
        while not self.answers():
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not answer on port {self.port}")
            time.sleep(0.05)

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (``fast``: every session is ended; ``immediate``: as a crash)."""
        self._run([self.bin / "pg_ctl", "-D", self.data, "-m", mode, "-w", "stop"], check=False)

    def restart(self) -> None:
        """Stop the server (fast) and start it again."""
        self.stop()
        self.start()

    def answers(self) -> bool:
        """Whether the server takes connections (it answers an SSL request)."""
        return _answers(self.port, b"\x00\x00\x00\x08\x04\xd2\x16\x2f", (b"S", b"N"))

    def log(self) -> str:
        """The server's log so far."""
        path = self.directory / "postgres.log"
        return path.read_text(errors="replace") if path.exists() else ""


class OwnRedis:
    """A ``redis-server`` of the test's own on a free loopback port, never persisting anything
    (as a cache's Redis often runs): a restart loses every key.

    Args:
        directory: its working directory.
        arguments: more ``redis-server`` options (``--maxmemory``, ``--maxmemory-policy``).

    Raises:
        ServiceRefused: ``redis-server`` is not installed.
    """

    def __init__(self, directory: Path, arguments: Sequence[str] = ()) -> None:
        executable = shutil.which("redis-server")
        if executable is None:
            raise ServiceRefused("redis-server is not installed (apt-get install redis-server)")
        self.executable = executable
        self.directory = directory
        self.arguments = list(arguments)
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, db: int = 0) -> str:
        """Its URL (database ``db``)."""
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        """Start it on its port (the same every time) and wait until it answers PING."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.directory), *self.arguments],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while not _answers(self.port, b"PING\r\n", (b"+PONG",)):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop it (SIGTERM; nothing is saved: ``--save ""``)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)

    def restart(self) -> None:
        """Stop it and start it again: every key is gone."""
        self.stop()
        self.start()

    def flushdb(self, db: int = 0) -> None:
        """``FLUSHDB`` on database ``db``."""
        import redis

        redis.Redis(port=self.port, db=db, socket_timeout=5).flushdb()


class TmpfsMount:
    """A tmpfs of ``size`` at ``path``: a disk that fills up for real.

    Raises:
        ServiceRefused: ``mount`` is refused here (not root, or a container without the
            capability).
    """

    def __init__(self, path: Path, size: str) -> None:
        self.path = path
        self.size = size
        self.mounted = False

    def mount(self) -> None:
        """Mount it (the directory is created)."""
        self.path.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.size},mode=0755", "tmpfs", str(self.path)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise ServiceRefused(
                f"mounting a tmpfs is refused here: {done.stderr.strip() or done.returncode}"
            )
        self.mounted = True

    def remount(self, options: str) -> None:
        """Remount it with ``options`` (``ro``, ``rw``)."""
        subprocess.run(["mount", "-o", f"remount,{options}", str(self.path)], check=True)

    def unmount(self) -> None:
        """Unmount it (lazily: a process still holding a file cannot keep it mounted)."""
        if self.mounted:
            with contextlib.suppress(subprocess.CalledProcessError):
                subprocess.run(["umount", "-l", str(self.path)], check=True)
            self.mounted = False

    def fill(self, name: str = "filler") -> Path:
        """Fill it to the last byte with a file ``name``; the file (delete it to free space)."""
        filler = self.path / name
        with filler.open("ab", buffering=0) as handle:
            for size in (1 << 20, 65536, 4096, 512, 1):
                with contextlib.suppress(OSError):
                    while handle.write(b"\0" * size):
                        pass
        return filler
