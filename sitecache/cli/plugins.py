"""``sitecache plugin list|activate|deactivate``: the site's installed plugins from the
command line.

The commands run on the site's own application, as the server's workers do: activating or
deactivating goes through the same `sitecache.site.extensions.PluginManager.set_active` as
``POST /site-json/site/v2/plugins/<plugin>``, so the active set is stored for every worker and
node, and the whole site's pages are purged through the cache's durable purge machinery (the
command waits for the purge webhook's deliveries before it returns).
"""

from __future__ import annotations

import argparse
import json
from typing import Final

from sitecache.app import App
from sitecache.cli.configuration import configure
from sitecache.cli.output import fail, terminal_text
from sitecache.site.extensions import CONFIGURED_MESSAGE

__all__ = ["command_plugin", "run_plugin_command"]

#: ``sitecache plugin list``'s columns.
_COLUMNS: Final = ("plugin", "status", "version", "name")


def command_plugin(args: argparse.Namespace) -> int:
    """``sitecache plugin list|activate|deactivate`` on the site's own application."""
    app = App(configure(args))
    try:
        return run_plugin_command(args, app)
    finally:
        app.close()


def run_plugin_command(args: argparse.Namespace, app: App) -> int:
    """Run ``sitecache plugin <command>`` on ``app``; the exit status (1 for a plugin that is
    not installed, cannot be loaded, or is loaded by the configuration and so cannot be
    deactivated here; the reason is one line on standard error)."""
    if args.plugin_command == "list":
        return _list(app, bool(args.json))
    return _switch(app, str(args.plugin), args.plugin_command == "activate")


def _list(app: App, as_json: bool) -> int:
    manager = app.plugins
    rows = [
        {
            "plugin": plugin.plugin,
            "status": manager.status(plugin.plugin),
            "version": plugin.version,
            "name": plugin.name,
            "error": manager.errors.get(plugin.plugin, ""),
        }
        for plugin in manager.installed().values()
    ]
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("No plugins are installed (entry point group sitecache.plugins).")
        return 0
    widths = {key: max(len(key), *(len(str(row[key])) for row in rows)) for key in _COLUMNS}
    print("  ".join(key.upper().ljust(widths[key]) for key in _COLUMNS).rstrip())
    for row in rows:
        line = "  ".join(str(row[key]).ljust(widths[key]) for key in _COLUMNS).rstrip()
        print(terminal_text(line))
        if row["error"]:
            print(terminal_text(f"  error: {row['error']}"))
    return 0


def _switch(app: App, plugin_id: str, active: bool) -> int:
    manager = app.plugins
    if plugin_id not in manager.installed():
        return fail(f"no installed plugin {plugin_id!r} (see `sitecache plugin list`)")
    if not active and manager.is_configured(plugin_id):
        return fail(f"{plugin_id}: {CONFIGURED_MESSAGE}")
    was = manager.status(plugin_id)
    wanted = "active" if active else "inactive"
    failure = manager.set_active(plugin_id, active)
    webhook = app.cache_api.plugins.get("purge_webhook")
    if webhook is not None and hasattr(webhook, "wait"):
        webhook.wait()  # the purge's notifications leave before the command exits
    if failure is not None:
        return fail(f"{plugin_id} could not be activated: {failure}")
    if was == wanted:
        print(terminal_text(f"{plugin_id} is already {wanted}: nothing changed."))
        return 0
    verb = "activated" if active else "deactivated"
    print(terminal_text(f"{plugin_id} {verb} for every worker; the site's cached pages purged."))
    return 0
