"""Site health: each test a function answering ``{test, label, status, badge, description,
actions}`` (WordPress's ``wp-site-health-test`` shape), run over what the app hands in.

The tests are data (`HEALTH_TESTS`, name → function); the cache's probe arrives as a plain
callable from the app's composition (the site never imports the cache).
"""

from __future__ import annotations

import math
import os
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from sitecache.auth.app_passwords import ApplicationPasswordPolicy
from sitecache.auth.db import DatabaseError
from sitecache.auth.store import SiteStore

__all__ = [
    "HEALTH_TESTS",
    "HealthInputs",
    "directory_sizes",
    "run_health_test",
]

_BADGES: Final = {"security": "blue", "performance": "orange"}
MIN_KEY_BYTES: Final = 32
"""The shortest secret key counted as strong (256 bits)."""
WALK_LIMIT: Final = 100_000
"""The most directory entries one size walk visits (the rest is reported as truncated)."""


@dataclass(frozen=True)
class HealthInputs:
    """What the tests look at.

    Args:
        data_dir: the data directory; store: the site store; key: the secret key (bytes);
        key_path: its file (``None`` when it lives in a shared store); debug: the app's debug
        setting; app_passwords: their policy; home_url: the site's configured URL (or "");
        cache_probe: put/get/delete a probe key in the cache storage, returning an error
        message or ``None``; storage_name: what the cache stores in; static_check: ``None``
        when static mode is off, else a callable returning the problems found reading the
        static root as the web server; cache_dir, uploads_dir: sized by ``directory-sizes``.
    """

    data_dir: Path
    store: SiteStore
    key: bytes
    key_path: Path | None
    debug: bool
    app_passwords: ApplicationPasswordPolicy
    home_url: str = ""
    cache_probe: Callable[[], str | None] | None = None
    storage_name: str = ""
    static_check: Callable[[], list[str]] | None = None
    cache_dir: Path | None = None
    uploads_dir: Path | None = None


def _result(
    test: str, label: str, status: str, description: str, badge: str = "security", actions: str = ""
) -> dict[str, Any]:
    """One test's answer in the published shape."""
    return {
        "test": test,
        "label": label,
        "status": status,
        "badge": {"label": badge.capitalize(), "color": _BADGES[badge]},
        "description": f"<p>{description}</p>",
        "actions": actions,
    }


def _verdict(name: str, problem: str | None, good: tuple[str, str], bad: str) -> dict[str, Any]:
    """A performance test's answer: good with ``good`` (label, description) when there is no
    ``problem``, otherwise critical under the label ``bad`` with the problem as description."""
    if problem is None:
        return _result(name, good[0], "good", good[1], "performance")
    return _result(name, bad, "critical", problem, "performance")


def data_directory_writable(inputs: HealthInputs, environ: Mapping[str, Any]) -> dict[str, Any]:
    """Critical unless a temporary file can be written, renamed and removed in the data
    directory (the way every atomic write of the site goes)."""
    problem = None
    try:
        handle, temp = tempfile.mkstemp(dir=inputs.data_dir, prefix=".health-")
        try:
            os.write(handle, b"probe")
        finally:
            os.close(handle)
        target = temp + ".done"
        os.replace(temp, target)
        os.unlink(target)
    except OSError as exc:
        problem = f"Writing a file in the data directory failed: {exc.strerror or exc}."
    return _verdict(
        "data-directory-writable",
        problem,
        ("The data directory is writable", "A file was written and renamed in the data directory."),
        "The data directory is not writable",
    )


def database_integrity(inputs: HealthInputs, environ: Mapping[str, Any]) -> dict[str, Any]:
    """Critical unless the store's own integrity check answers ``ok``."""
    try:
        verdict = inputs.store.integrity_check()
    except (DatabaseError, OSError) as exc:  # the engine's failure is the finding itself
        verdict = f"the check failed: {type(exc).__name__}"
    return _verdict(
        "database-integrity",
        None if verdict == "ok" else f"The database's integrity check answered: {verdict[:200]}",
        (
            "The database passes its integrity check",
            f"The {inputs.store.engine} database answered its integrity check.",
        ),
        "The database reports damage",
    )


def cache_storage(inputs: HealthInputs, environ: Mapping[str, Any]) -> dict[str, Any]:
    """Critical unless a probe key goes into the page cache's storage and comes back."""
    name = "cache-storage"
    if inputs.cache_probe is None:
        return _result(
            name,
            "The page cache is not in use",
            "recommended",
            "No page cache is configured.",
            "performance",
        )
    problem = inputs.cache_probe()
    return _verdict(
        name,
        None if problem is None else f"The probe entry failed ({inputs.storage_name}): {problem}",
        (
            "The page cache storage is reachable and writable",
            f"A probe entry was stored, read back and deleted ({inputs.storage_name}).",
        ),
        "The page cache storage is not usable",
    )


def static_root_readable(inputs: HealthInputs, environ: Mapping[str, Any]) -> dict[str, Any]:
    """Good when static mode is off or the web server can read the static root."""
    name = "static-root-readable"
    if inputs.static_check is None:
        return _result(
            name,
            "Static files are off",
            "good",
            "Pages are served by the application only.",
            "performance",
        )
    problems = inputs.static_check()
    return _verdict(
        name,
        "; ".join(problems) if problems else None,
        (
            "The web server can read the static root",
            "Every directory on the way to the static root can be read by the web server.",
        ),
        "The web server cannot read the static root",
    )


def _request_is_tls(environ: Mapping[str, Any]) -> bool:
    """The request's scheme as the server sees it (a trusted proxy has already set it)."""
    return environ.get("wsgi.url_scheme") == "https"


def tls_in_use(inputs: HealthInputs, environ: Mapping[str, Any]) -> dict[str, Any]:
    """Good when the request and the configured home URL both use HTTPS; recommended
    otherwise (critical would lock out local development)."""
    name = "https-status"
    home_tls = urlsplit(inputs.home_url).scheme == "https" if inputs.home_url else None
    if _request_is_tls(environ) and home_tls is not False:
        return _result(name, "Your site is using HTTPS", "good", "Requests arrive over HTTPS.")
    where = "this request" if not _request_is_tls(environ) else "the site URL"
    return _result(
        name,
        "Your site does not use HTTPS",
        "recommended",
        f"HTTPS is not in use for {where}: cookies and passwords travel in clear text.",
    )


def key_entropy_bits(key: bytes) -> float:
    """The key's Shannon entropy in bits (per-byte entropy times its length)."""
    if not key:
        return 0.0
    counts = Counter(key)
    per_byte = -sum(c / len(key) * math.log2(c / len(key)) for c in counts.values())
    return per_byte * len(key)


def secret_key_strength(inputs: HealthInputs, environ: Mapping[str, Any]) -> dict[str, Any]:
    """Critical for a key shorter than 32 bytes or with under 128 bits of entropy;
    recommended when its file is readable by others than its owner."""
    name = "secret-key"
    bits = key_entropy_bits(inputs.key)
    if len(inputs.key) < MIN_KEY_BYTES or bits < 128:
        return _result(
            name,
            "The secret key is weak",
            "critical",
            f"The secret key has {len(inputs.key)} bytes (about {bits:.0f} bits of entropy);"
            f" sessions and nonces need at least {MIN_KEY_BYTES} random bytes.",
        )
    if inputs.key_path is not None:
        try:
            mode = stat.S_IMODE(inputs.key_path.stat().st_mode)
        except OSError as exc:
            return _result(
                name, "The secret key file cannot be read", "critical", str(exc.strerror or exc)
            )
        if mode & 0o077:
            return _result(
                name,
                "The secret key file is readable by others",
                "recommended",
                f"The secret key file has mode {mode:o}; only its owner should read it (600).",
            )
    return _result(name, "The secret key is strong", "good", "The secret key is long and random.")


def debug_off(inputs: HealthInputs, environ: Mapping[str, Any]) -> dict[str, Any]:
    """Recommended while the app's debug setting (debug headers and notices) is on."""
    name = "debug-off"
    if inputs.debug:
        return _result(
            name,
            "Debugging is on",
            "recommended",
            "Debug mode adds notices and debug headers to responses; turn it off in production.",
        )
    return _result(name, "Debugging is off", "good", "Responses carry no debug information.")


def application_passwords_available(
    inputs: HealthInputs, environ: Mapping[str, Any]
) -> dict[str, Any]:
    """Good when application passwords may be used for this request (enabled, and HTTPS or
    local under ``auto``)."""
    name = "application-passwords"
    if inputs.app_passwords.available(environ):
        return _result(
            name,
            "Application passwords are available",
            "good",
            "Applications can authenticate with application passwords.",
        )
    return _result(
        name,
        "Application passwords are not available",
        "recommended",
        f"Application passwords are {inputs.app_passwords.mode!r}: under 'auto' they need HTTPS"
        " or a local request.",
    )


HEALTH_TESTS: Final[Mapping[str, Callable[[HealthInputs, Mapping[str, Any]], dict[str, Any]]]] = {
    "data-directory-writable": data_directory_writable,
    "database-integrity": database_integrity,
    "cache-storage": cache_storage,
    "static-root-readable": static_root_readable,
    "https-status": tls_in_use,
    "secret-key": secret_key_strength,
    "debug-off": debug_off,
    "application-passwords": application_passwords_available,
}
"""Every site-health test by name (the route ``/site-health/tests/<name>``)."""


def run_health_test(name: str, inputs: HealthInputs, environ: Mapping[str, Any]) -> dict[str, Any]:
    """The named test's answer (``KeyError`` for an unknown name)."""
    return HEALTH_TESTS[name](inputs, environ)


def _directory_size(path: Path | None, limit: int) -> dict[str, Any]:
    """``{path, size, files, truncated}`` of ``path`` by a walk visiting at most ``limit``
    entries (symbolic links are not followed); ``size`` is ``None`` when it does not exist."""
    if path is None or not path.is_dir():
        return {"path": str(path) if path else "", "size": None, "files": 0, "truncated": False}
    size = files = seen = 0
    truncated = False
    for root, dirs, names in os.walk(path, followlinks=False):
        for entry in names:
            seen += 1
            if seen > limit:
                truncated = True
                break
            try:
                info = os.lstat(os.path.join(root, entry))
            except OSError:
                continue  # removed while walking: not part of the size any more
            size += info.st_size
            files += 1
        seen += len(dirs)
        if truncated or seen > limit:
            truncated = True
            break
    return {"path": str(path), "size": size, "files": files, "truncated": truncated}


def directory_sizes(inputs: HealthInputs, limit: int = WALK_LIMIT) -> dict[str, Any]:
    """The sizes of the data, cache and uploads directories (bounded walks)."""
    return {
        "data_dir": _directory_size(inputs.data_dir, limit),
        "cache_dir": _directory_size(inputs.cache_dir, limit),
        "uploads_dir": _directory_size(inputs.uploads_dir, limit),
    }
