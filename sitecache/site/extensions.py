"""Installed plugins: discovery through the ``sitecache.plugins`` entry points, the active set
kept in the site's options, and each process loading and unloading plugins to match it.

The plugin protocol: a package declares, in its ``pyproject.toml``::

    [project.entry-points."sitecache.plugins"]
    hello = "sitecache_hello:activate"

and the entry point names a callable receiving the application (``activate(app)``). It adds
hooks (``app.hooks.add_action("rest_api_init", register_routes)``, filters, actions): every
callback it adds while being loaded belongs to the plugin; its ``rest_api_init`` callbacks run
at once when the REST server is already started, and every route they register belongs to the
plugin too. Deactivating removes those callbacks and routes (a deactivated plugin's routes
answer 404). A plugin whose loading raises is reported with the status ``error`` and its
message; the site keeps serving.

The plugin id is ``<distribution>/<entry point name>`` (``sitecache-hello-plugin/hello``),
the shape of WordPress's ``plugin`` path. The active set is the JSON list stored under the
option ``plugins:active``; every process reads it (one indexed SELECT) at most once per
`PluginManager.sync_interval` seconds, so activation on one worker or node reaches all of them
within about a second.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Final

from sitecache.auth.store import SiteStore
from sitecache.domain_errors import OutageError
from sitecache.hooks import Hooks
from sitecache.rest import RestServer
from sitecache.rest.routes import Route

__all__ = ["ENTRY_POINT_GROUP", "InstalledPlugin", "PluginManager", "discover_plugins"]

logger = logging.getLogger("sitecache.plugins")

ENTRY_POINT_GROUP: Final = "sitecache.plugins"
ACTIVE_OPTION: Final = "plugins:active"
CONFIGURED_MESSAGE: Final = (
    "The plugin is loaded by the site's configuration (the plugins setting) and stays active "
    "until it is removed there."
)


@dataclass(frozen=True, slots=True)
class InstalledPlugin:
    """One installed plugin as its package metadata describes it."""

    plugin: str
    name: str
    version: str
    description: str
    author: str
    author_uri: str
    plugin_uri: str
    requires_python: str
    entry_point: EntryPoint | None = None
    loader: Callable[[], Callable[[Any], Any]] | None = None
    """How to get the activate callable (tests; otherwise ``entry_point.load``)."""

    def load(self) -> Callable[[Any], Any]:
        """The callable the entry point names.

        Raises:
            Exception: whatever importing the plugin raised.
        """
        if self.loader is not None:
            return self.loader()
        if self.entry_point is None:
            raise LookupError(f"plugin {self.plugin} has no entry point")
        target = self.entry_point.load()
        if not callable(target):
            raise TypeError(f"plugin {self.plugin}'s entry point is not callable")
        return target  # type: ignore[no-any-return]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-") or "plugin"


def discover_plugins() -> list[InstalledPlugin]:
    """Every plugin installed in this environment (group ``sitecache.plugins``), by id."""
    found: dict[str, InstalledPlugin] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        dist = point.dist
        meta = dist.metadata if dist is not None else None

        def get(key: str, meta: Any = meta) -> str:
            value = meta.get(key) if meta is not None else None
            return str(value) if value else ""

        dist_name = get("Name") or point.module.split(".")[0]
        plugin_id = f"{_slug(dist_name)}/{_slug(point.name)}"
        urls = meta.get_all("Project-URL") if meta is not None else None
        found[plugin_id] = InstalledPlugin(
            plugin=plugin_id,
            name=dist_name,
            version=dist.version if dist is not None else "",
            description=get("Summary"),
            author=get("Author") or get("Author-email"),
            author_uri="",
            plugin_uri=get("Home-page") or (str(urls[0]).split(",")[-1].strip() if urls else ""),
            requires_python=get("Requires-Python"),
            entry_point=point,
        )
    return [found[key] for key in sorted(found)]


@dataclass
class _Loaded:
    """What loading one plugin changed: the hooks it added, and the REST routes before and
    after (`RouteRegistry.revert_routes` takes back exactly the difference)."""

    hooks: list[tuple[str, Callable[..., Any], int]]
    routes_before: dict[str, Route] = field(default_factory=dict)
    routes_after: dict[str, Route] = field(default_factory=dict)


@dataclass
class PluginManager:
    """The installed plugins of one application, and which of them this process runs.

    Args:
        store: the site store (the option ``plugins:active``).
        hooks, server: the application's hooks and REST server.
        host: what a plugin's callable receives (the application).
        discover: lists the installed plugins (tests give their own).
    """

    store: SiteStore
    hooks: Hooks
    server: RestServer
    host: Any
    discover: Callable[[], list[InstalledPlugin]] = discover_plugins
    sync_interval: float = 1.0
    """At most how often (seconds) a process reads the stored active set."""
    errors: dict[str, str] = field(default_factory=dict)
    """Why a plugin that should be active failed to load, by plugin id."""
    configured: set[str] = field(default_factory=set)
    """The ``module:function`` specs the configuration's ``plugins`` loaded at start: an
    installed plugin whose entry point names one of them is already running, for good."""
    _configured_targets: list[Callable[[Any], Any]] = field(default_factory=list)
    _installed: dict[str, InstalledPlugin] | None = None
    _loaded: dict[str, _Loaded] = field(default_factory=dict)
    _seen: str | None = None
    _checked: float = float("-inf")
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)

    # ------------------------------------------------------------------ reading
    def installed(self) -> dict[str, InstalledPlugin]:
        """The installed plugins by id (discovered once per process)."""
        if self._installed is None:
            self._installed = {plugin.plugin: plugin for plugin in self.discover()}
        return self._installed

    def stored_active(self) -> list[str]:
        """The active set as stored (plugin ids)."""
        return _parse(self._read_raw())

    def status(self, plugin_id: str) -> str:
        """``active`` or ``inactive`` as stored (every process answers the same), ``error`` for
        a plugin stored as active that failed to load in this process; a plugin the
        configuration loaded is ``active``. When the store cannot be read, the set last read."""
        self.sync(force=True)
        if self.is_configured(plugin_id):
            return "active"
        if plugin_id not in _parse(self._seen or "[]"):
            return "inactive"
        return "error" if plugin_id in self.errors else "active"

    def note_configured(self, spec: str, target: Callable[[Any], Any]) -> None:
        """Record that the configuration's ``plugins`` loaded ``target`` (named ``spec``), so
        activating the installed plugin it belongs to never runs it a second time."""
        self.configured.add(_spec(spec))
        self._configured_targets.append(target)

    def is_configured(self, plugin_id: str) -> bool:
        """Whether ``plugin_id``'s entry point is one the configuration already loaded (such a
        plugin is active whatever the stored set says, and cannot be deactivated here)."""
        plugin = self.installed().get(plugin_id)
        point = plugin.entry_point if plugin is not None else None
        return point is not None and _spec(point.value) in self.configured

    def _read_raw(self) -> str:
        row = (
            self.store.connection()
            .execute("SELECT value FROM options WHERE name = ?", (ACTIVE_OPTION,))
            .fetchone()
        )
        return "[]" if row is None else str(row[0])

    # ------------------------------------------------------------------ writing
    def set_active(self, plugin_id: str, active: bool) -> str | None:
        """Activate or deactivate ``plugin_id`` here, then store the new active set (every
        other process follows on its next sync). ``None`` on success, else why loading failed
        (the stored set is then left unchanged)."""
        with self._lock:
            self.sync(force=True)
            if active and plugin_id not in self._loaded:
                failure = self._activate(plugin_id)
                if failure is not None:
                    if plugin_id not in _parse(self._seen or "[]"):
                        # Nothing was stored: the plugin stays inactive, here as everywhere.
                        self.errors.pop(plugin_id, None)
                    return failure
            elif not active:
                if self.is_configured(plugin_id):
                    return CONFIGURED_MESSAGE
                self._deactivate(plugin_id)
                self.errors.pop(plugin_id, None)
            with self.store.transaction() as connection:
                row = connection.execute(
                    "SELECT value FROM options WHERE name = ?", (ACTIVE_OPTION,)
                ).fetchone()
                current = set(_parse("[]" if row is None else str(row[0])))
                current = current | {plugin_id} if active else current - {plugin_id}
                raw = json.dumps(sorted(current))
                connection.execute(
                    "INSERT INTO options (name, value) VALUES (?, ?)"
                    " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    (ACTIVE_OPTION, raw),
                )
            self._seen = raw
            self.hooks.do_action("activated_plugin" if active else "deactivated_plugin", plugin_id)
            return None

    # ------------------------------------------------------------------ following the store
    def sync(self, force: bool = False) -> None:
        """Load and unload plugins to match the stored active set (read at most once per
        `sync_interval` unless ``force``)."""
        now = time.monotonic()
        if not force and now - self._checked < self.sync_interval:
            return
        with self._lock:
            self._checked = now
            try:
                raw = self._read_raw()
            except Exception as exc:  # the store is down: keep the plugins, /healthz reports it
                # An outage is reported by the store once, not here on every request.
                log = logger.debug if isinstance(exc, OutageError) else logger.warning
                log("the active plugins cannot be read", exc_info=True)
                return
            if raw == self._seen:
                return
            self._seen = raw
            wanted = set(_parse(raw))
            for plugin_id in list(self._loaded):
                if plugin_id not in wanted:
                    self._deactivate(plugin_id)
            for plugin_id in set(self.errors) - wanted:
                del self.errors[plugin_id]
            for plugin_id in sorted(wanted):
                if plugin_id not in self._loaded and plugin_id not in self.errors:
                    self._activate(plugin_id)

    def _activate(self, plugin_id: str) -> str | None:
        plugin = self.installed().get(plugin_id)
        if plugin is None:
            self.errors[plugin_id] = "The plugin is not installed."
            return self.errors[plugin_id]
        self.server.ensure_initialized()
        mark = self.hooks.mark
        before = dict(self.server.registry.routes)
        try:
            target = plugin.load()
            if any(target is known for known in self._configured_targets):
                self._loaded[plugin_id] = _Loaded([])  # running since start: nothing to undo
                return None
            target(self.host)
            for name, callback, _ in self.hooks.added_since(mark):
                if name == "rest_api_init":
                    callback(self.server)
        except Exception as exc:  # a plugin's own failure: reported, never fatal to the site
            # SECURITY: %r keeps a message's newlines from forging log lines.
            logger.exception("plugin %r failed to load", plugin_id)
            self._undo(self._changes(mark, before))
            self.errors[plugin_id] = f"{type(exc).__name__}: {exc}"
            return self.errors[plugin_id]
        self.errors.pop(plugin_id, None)
        self._loaded[plugin_id] = self._changes(mark, before)
        return None

    def _deactivate(self, plugin_id: str) -> None:
        loaded = self._loaded.pop(plugin_id, None)
        if loaded is not None:
            self._undo(loaded)

    def _changes(self, mark: int, routes_before: dict[str, Route]) -> _Loaded:
        return _Loaded(
            self.hooks.added_since(mark), routes_before, dict(self.server.registry.routes)
        )

    def _undo(self, loaded: _Loaded) -> None:
        for name, callback, priority in loaded.hooks:
            self.hooks.remove_filter(name, callback, priority)
        self.server.registry.revert_routes(loaded.routes_before, loaded.routes_after)


def _spec(text: str) -> str:
    """``module:function`` as written in a configuration or an entry point, spaces dropped."""
    return "".join(text.split())


def _parse(raw: str) -> list[str]:
    try:
        value = json.loads(raw)
    except ValueError:
        return []
    return [str(item) for item in value if isinstance(item, str)] if isinstance(value, list) else []
