"""The operator's endpoints outside the REST routes: metrics, health, the OpenAPI document.

- ``GET /site-admin/metrics``: Prometheus text (`sitecache.cache.api.metrics`), for an
  administrator's session or ``Authorization: Bearer <metrics_token>``; anyone else gets a
  JSON 401 (no credentials) or 403 (a logged-in non-administrator).
- ``GET /healthz``: whether this node can serve the site, for a load balancer. 503 only when
  it cannot (``failing`` names the parts): the site database does not answer (``database``),
  or the data directory cannot be written or its disk is full (``disk``, with ``error``
  ``unwritable`` or ``full``). The cache is disposable: a cache storage that fails (with why:
  ``damaged``, ``full``, ``unwritable``, or ``did not answer``) or a full disk of the cache or
  the static root only degrades the node (pages are served uncached), so the answer stays 200
  with ``"status": "warn"``, that check ``warn`` and ``cache_storage_unusable`` (or
  ``disk_full``) among its ``warnings``. The disks are measured at most once a second; a low
  disk is ``warn``. Within about `HEALTH_TIMEOUT` seconds whatever the services do (each check
  runs in a thread of its own, `sitecache.timed_probe`); ``warnings`` holds the codes of the
  cache's warnings (``GET /status``'s); no authentication, no secrets.
- ``GET /<rest_prefix>-openapi``: the OpenAPI 3.1 document of every route
  (`sitecache.rest.openapi`).

Every answer is ``Cache-Control: no-store`` and their paths are among the page cache's bypass
paths: none is ever looked up or stored.
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from werkzeug.wrappers import Request, Response

from sitecache.auth import AuthService
from sitecache.cache.api import CacheApi
from sitecache.cache.api.metrics import CONTENT_TYPE, metrics_text
from sitecache.cache.deployment import HEALTH_PATH
from sitecache.cache.storage import StorageError, StorageUnusable
from sitecache.disk_space import DiskSpace
from sitecache.rest.openapi import openapi_document
from sitecache.rest.server import RestServer
from sitecache.timed_probe import TimedProbe

__all__ = ["HEALTH_PATH", "METRICS_PATH", "OpsViews", "openapi_path_for"]

logger = logging.getLogger("sitecache")

METRICS_PATH: Final = "/site-admin/metrics"
#: Seconds ``/healthz`` waits for its checks (each runs in a thread of its own): a check still
#: running then is a failure, so a load balancer always gets an answer within about this.
HEALTH_TIMEOUT: Final = 1.5
_NAMES: Final = {"storage": "cache storage", "database": "site database"}
#: The warning of a cache storage that failed its check (``GET /status`` says it too when the
#: storage itself knows; here the check found it).
STORAGE_UNUSABLE: Final = "cache_storage_unusable"
_NO_STORE: Final = {"Cache-Control": "no-store, private"}

View = Callable[[Request], Response]


def openapi_path_for(rest_prefix: str) -> str:
    """``/<rest_prefix>-openapi`` (``/site-json-openapi`` by default)."""
    return "/" + rest_prefix.strip("/") + "-openapi"


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    response = Response(
        json.dumps(body, indent=None, separators=(",", ":")) + "\n",
        status=status,
        mimetype="application/json",
    )
    for name, value in {**_NO_STORE, **(headers or {})}.items():
        response.headers[name] = value
    return response


def _error(code: str, message: str, status: int, **headers: str) -> Response:
    return _json({"code": code, "message": message, "data": {"status": status}}, status, headers)


def _method_not_allowed() -> Response:
    return _error("rest_no_route", "Only GET and HEAD are allowed here.", 405, Allow="GET, HEAD")


class OpsViews:
    """The three endpoints, bound to one application's parts.

    Args:
        server: the REST server (its routes, its settings).
        auth: the auth service (sessions, the site database).
        cache_api: the page cache's management API (its engine and preloader).
        metrics_token: the bearer token that may read the metrics (``""``: none).
        disk: the free-space probe of the health check (``None``: the cache API's).
        data_dir: the directory the site writes to (its database, sessions, logs; ``None``:
            the auth service's).
    """

    def __init__(
        self,
        server: RestServer,
        auth: AuthService,
        cache_api: CacheApi,
        metrics_token: str = "",
        disk: DiskSpace | None = None,
        data_dir: Path | None = None,
    ) -> None:
        self.server = server
        self.auth = auth
        self.cache_api = cache_api
        self.metrics_token = metrics_token
        self.disk = disk if disk is not None else cache_api.disk
        self.data_dir = data_dir if data_dir is not None else auth.data_dir
        #: why the last storage check failed when the storage itself said (``damaged``, ...)
        self._storage_unusable: str | None = None
        # Each check in a thread of its own: /healthz answers in time whatever hangs.
        self._probes = {
            "storage": TimedProbe("storage", self._read_storage),
            "database": TimedProbe("database", self._read_database),
        }

    def close(self) -> None:
        """End the checks' threads (an application that is dropped)."""
        for probe in self._probes.values():
            probe.stop()

    def routes(self) -> dict[str, View]:
        """Path → view."""
        return {
            METRICS_PATH: self.metrics,
            HEALTH_PATH: self.health,
            openapi_path_for(self.server.settings.prefix): self.openapi,
        }

    # ------------------------------------------------------------------ metrics
    def _metrics_refusal(self, request: Request) -> Response | None:
        """``None`` when the request may read the metrics, else the JSON 401/403."""
        token = self.metrics_token
        header = request.headers.get("Authorization", "")
        scheme, _, given = header.partition(" ")
        if token and scheme.lower() == "bearer":
            # SECURITY: constant-time comparison of bytes (a non-ASCII token simply differs).
            if hmac.compare_digest(given.strip().encode("utf-8", "replace"), token.encode()):
                return None
            return _error("rest_forbidden", "The metrics token is not valid.", 401,
                          **{"WWW-Authenticate": 'Bearer realm="metrics"'})  # fmt: skip
        session = self.auth.session_from_environ(request.environ)
        if session is None:
            return _error("rest_forbidden", "Log in as an administrator, or send the metrics "
                          "token, to read the metrics.", 401,
                          **{"WWW-Authenticate": 'Bearer realm="metrics"'})  # fmt: skip
        if not session.user.can("manage_options"):
            return _error("rest_forbidden", "Sorry, you are not allowed to read the metrics.", 403)
        return None

    def metrics(self, request: Request) -> Response:
        """``GET /site-admin/metrics``."""
        if request.method not in ("GET", "HEAD"):
            return _method_not_allowed()
        refusal = self._metrics_refusal(request)
        if refusal is not None:
            return refusal
        api = self.cache_api
        try:
            text = metrics_text(api.engine, api.preloader.progress())
        except StorageError as exc:
            return _error("site_cache_storage_error", f"The cache storage failed: {exc}", 503)
        response = Response(text, content_type=CONTENT_TYPE)
        for name, value in _NO_STORE.items():
            response.headers[name] = value
        return response

    # ------------------------------------------------------------------ health
    def _read_storage(self) -> None:
        try:
            self.cache_api.engine.read_value("status_probe")  # one read: a key lookup, a SQL row
        except StorageUnusable as exc:  # damaged (being started empty), full, unwritable
            self._storage_unusable = exc.kind
            raise
        self._storage_unusable = None

    def _read_database(self) -> None:
        self.auth.store.connection().execute("SELECT COUNT(*) FROM schema_versions").fetchone()

    def _check_disk(self) -> dict[str, Any]:
        """The watched disks (no paths: the check is public): ``fail`` when the site cannot
        write its data directory (not writable, or its disk full), ``warn`` when another disk
        is full (the disk cache, the static root: pages go uncached) or any disk is low."""
        readings = self.disk.readings()
        check: dict[str, Any] = {
            "status": {"ok": "ok", "low": "warn", "full": "warn"}[self.disk.level()],
            "disks": [
                {
                    "free_bytes": reading.free_bytes,
                    "free_percent": reading.free_percent,
                    "level": reading.level,
                }
                for reading in readings
            ],
        }
        site_disk = self.disk.reading_for(self.data_dir)
        if not os.access(self.data_dir, os.W_OK | os.X_OK):
            check.update(status="fail", error="unwritable")
        elif site_disk is not None and site_disk.level == "full":
            check.update(status="fail", error="full")
        return check

    def _checks(self) -> dict[str, dict[str, Any]]:
        """Each check's finding, all run at once and waited for at most `HEALTH_TIMEOUT`."""
        for probe in self._probes.values():
            probe.start()
        deadline = time.monotonic() + HEALTH_TIMEOUT
        found: dict[str, dict[str, Any]] = {}
        for name, probe in self._probes.items():
            failure = probe.result(deadline)
            check: dict[str, Any] = {"status": "ok"}
            if name == "storage":
                check["backend"] = self.cache_api.engine.backend
            if failure is not None:
                logger.warning("health check: the %s did not answer: %s", _NAMES[name], failure)
                if name == "storage":
                    # The cache is disposable: pages are served uncached meanwhile.
                    check.update(status="warn", error=self._storage_unusable or "did not answer")
                else:
                    check.update(status="fail", error="did not answer")
            found[name] = check
        found["disk"] = self._check_disk()
        return found

    def health(self, request: Request) -> Response:
        """``GET /healthz``: ``{"status", "checks": {"storage", "database", "disk"},
        "warnings"}``, within about `HEALTH_TIMEOUT` seconds whatever the checked services do.

        503 (``status`` ``fail``, ``failing`` naming the parts) only when this node cannot
        serve the site: its database does not answer, or its data directory cannot be written.
        Otherwise 200: ``status`` ``warn`` when a part is degraded (the cache storage failed,
        a disk is low, the cache's disk is full), ``ok`` else. ``warnings`` holds the codes of
        `CacheApi.warnings` when the storage answered; when it did not,
        ``cache_storage_unusable`` and the disks' codes."""
        if request.method not in ("GET", "HEAD"):
            return _method_not_allowed()
        checks = self._checks()
        failing = [name for name, check in checks.items() if check["status"] == "fail"]
        degraded = any(check["status"] == "warn" for check in checks.values())
        status = "fail" if failing else "warn" if degraded else "ok"
        body: dict[str, Any] = {"status": status, "checks": checks}
        if failing:
            body["failing"] = failing
        if checks["storage"]["status"] == "ok":
            # The codes of the warnings GET /status and `sitecache cache status` show (the
            # same function over the same inputs); their messages stay behind the login.
            body["warnings"] = [warning["code"] for warning in self._warnings()]
        else:
            disks = [code for code, _ in self.disk.warnings()]
            body["warnings"] = list(dict.fromkeys([STORAGE_UNUSABLE, *disks]))
        return _json(body, 503 if failing else 200)

    def _warnings(self) -> list[dict[str, str]]:
        try:
            return self.cache_api.warnings()
        except StorageError:  # the storage failed since its check
            return [{"code": STORAGE_UNUSABLE}]

    # ------------------------------------------------------------------ OpenAPI
    def openapi(self, request: Request) -> Response:
        """``GET /<rest_prefix>-openapi``: the OpenAPI 3.1 document (servers: this host)."""
        if request.method not in ("GET", "HEAD"):
            return _method_not_allowed()
        # (App.handle runs views in the request's context: the servers entry is this host.)
        return _json(openapi_document(self.server))
