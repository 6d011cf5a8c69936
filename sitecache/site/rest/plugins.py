"""``/site/v2/plugins`` and ``/site/v2/block-directory/search`` (WordPress 7.1's shapes).

Plugins are Python packages (`sitecache.site.extensions`): listing, reading, activating and
deactivating are real; installing (``POST /plugins``) and deleting answer
``rest_cannot_manage_plugins`` (400) because packages are managed with pip. The block directory
searches the installed plugins that are not active (each one is a candidate; our extension of
WordPress, which searches wordpress.org).
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any, Final, NoReturn

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.site.extensions import CONFIGURED_MESSAGE, InstalledPlugin, PluginManager
from sitecache.site.rest.base import (
    NAMESPACE,
    collection_params,
    context_param,
    denied,
)

__all__ = ["BLOCK_DIRECTORY_SCHEMA", "PLUGIN_SCHEMA", "PluginsController"]

_CANNOT_MANAGE: Final = "Sorry, you are not allowed to manage plugins."

_ALL: Final = ["view", "edit", "embed"]
_VE: Final = ["view", "edit"]

PLUGIN_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "plugin",
    "type": "object",
    "properties": {
        "plugin": {
            "description": "The plugin file.",
            "type": "string",
            "pattern": "[^.\\/]+(?:\\/[^.\\/]+)?",
            "readonly": True,
            "context": _ALL,
        },
        "status": {
            "description": "The plugin activation status (error: active but failed to load).",
            "type": "string",
            "enum": ["inactive", "active", "error"],
            "context": _ALL,
        },
        "name": {
            "description": "The plugin name.",
            "type": "string",
            "readonly": True,
            "context": _ALL,
        },
        "plugin_uri": {
            "description": "The plugin's website address.",
            "type": "string",
            "readonly": True,
            "context": _VE,
        },
        "author": {
            "description": "The plugin author.",
            "type": "string",
            "readonly": True,
            "context": _VE,
        },
        "author_uri": {
            "description": "Plugin author's website address.",
            "type": "string",
            "readonly": True,
            "context": _VE,
        },
        "description": {
            "description": "The plugin description.",
            "type": "object",
            "readonly": True,
            "context": _VE,
            "properties": {
                "raw": {"description": "The raw plugin description.", "type": "string"},
                "rendered": {"description": "The rendered description.", "type": "string"},
            },
        },
        "version": {
            "description": "The plugin version number.",
            "type": "string",
            "readonly": True,
            "context": _VE,
        },
        "network_only": {
            "description": "Whether the plugin can only be activated network-wide.",
            "type": "boolean",
            "readonly": True,
            "context": _ALL,
        },
        "requires_wp": {
            "description": "Minimum required version of the site software.",
            "type": "string",
            "readonly": True,
            "context": _ALL,
        },
        "requires_php": {
            "description": "Minimum required version of Python (our reading of PHP's).",
            "type": "string",
            "readonly": True,
            "context": _ALL,
        },
        "textdomain": {
            "description": "The plugin's text domain.",
            "type": "string",
            "readonly": True,
            "context": _VE,
        },
        "error": {
            "description": "Why the plugin failed to load (status error), else empty.",
            "type": "string",
            "readonly": True,
            "context": _VE,
        },
    },
}

BLOCK_DIRECTORY_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "block-directory-item",
    "type": "object",
    "properties": {
        name: {"description": description, "type": kind, "context": ["view"]}
        for name, kind, description in (
            ("name", "string", "The block name, in namespace/block-name format."),
            ("title", "string", "The block title, in human readable format."),
            ("description", "string", "A short description of the block."),
            ("id", "string", "The block slug."),
            ("rating", "number", "The star rating of the block."),
            ("rating_count", "integer", "The number of ratings."),
            ("active_installs", "integer", "The number sites that have activated this block."),
            ("author_block_rating", "number", "The average rating of the author's blocks."),
            ("author_block_count", "integer", "The number of blocks published by the author."),
            ("author", "string", "The author's name."),
            ("icon", "string", "The block icon."),
            ("last_updated", "string", "The date when the block was last updated."),
            ("humanized_updated", "string", "When the block was last updated, for humans."),
        )
    },
}

_PLUGIN_PATTERN: Final = "(?P<plugin>[^.\\/]+(?:\\/[^.\\/]+)?)"


def _schema(schema: dict[str, Any]) -> Any:
    def callback() -> dict[str, Any]:
        return schema

    return callback


class PluginsController:
    """The plugin and block-directory routes over a `PluginManager`."""

    def __init__(self, manager: PluginManager) -> None:
        self.manager = manager

    def register(self, server: RestServer) -> None:
        """Register ``/plugins``, ``/plugins/<plugin>`` and ``/block-directory/search``."""
        context = {"context": context_param()}
        status_arg = {
            "description": "The plugin activation status.",
            "type": "string",
            "enum": ["inactive", "active"],
        }
        server.register_rest_route(
            NAMESPACE,
            "/plugins",
            [
                {
                    "methods": "GET",
                    "callback": self.get_items,
                    "permission_callback": self.view_check,
                    "args": {
                        **context,
                        "search": {
                            "description": "Limit results to those matching a string.",
                            "type": "string",
                        },
                        "status": {
                            "description": "Limits results to plugins with the given status.",
                            "type": "array",
                            "items": {"type": "string", "enum": ["inactive", "active"]},
                        },
                    },
                },
                {
                    "methods": "POST",
                    "callback": self.create_item,
                    "permission_callback": self.install_check,
                    "args": {
                        "slug": {
                            "description": "Plugin package to install (not supported: use pip).",
                            "type": "string",
                            "required": True,
                        },
                        "status": {**status_arg, "default": "inactive"},
                    },
                },
            ],
            schema=_schema(PLUGIN_SCHEMA),
        )
        server.register_rest_route(
            NAMESPACE,
            f"/plugins/{_PLUGIN_PATTERN}",
            [
                {
                    "methods": "GET",
                    "callback": self.get_item,
                    "permission_callback": self.view_item_check,
                    "args": dict(context),
                },
                {
                    "methods": "POST, PUT, PATCH",
                    "callback": self.update_item,
                    "permission_callback": self.manage_check,
                    "args": {**context, "status": status_arg},
                },
                {
                    "methods": "DELETE",
                    "callback": self.delete_item,
                    "permission_callback": self.manage_check,
                    "args": dict(context),
                },
            ],
            schema=_schema(PLUGIN_SCHEMA),
        )
        paging = collection_params(offset=False, search=False)
        server.register_rest_route(
            NAMESPACE,
            "/block-directory/search",
            {
                "methods": "GET",
                "callback": self.search_directory,
                "permission_callback": self.directory_check,
                "args": {
                    "context": context_param(default="view"),
                    "term": {
                        "description": "Limit result set to blocks matching the search term.",
                        "type": "string",
                        "required": True,
                        "minLength": 1,
                    },
                    "page": paging["page"],
                    "per_page": paging["per_page"],
                },
            },
            schema=_schema(BLOCK_DIRECTORY_SCHEMA),
        )

    # ------------------------------------------------------------------ permissions
    def view_check(self, request: RestRequest) -> bool:
        """Listing plugins needs ``activate_plugins`` (administrators)."""
        return _require("view", request)

    def view_item_check(self, request: RestRequest) -> bool:
        """Reading a plugin needs ``activate_plugins``."""
        return _require("view_item", request)

    def manage_check(self, request: RestRequest) -> bool:
        """Activating, deactivating (and deleting) need ``activate_plugins``."""
        return _require("manage", request)

    def install_check(self, request: RestRequest) -> bool:
        """Installing needs ``install_plugins``."""
        return _require("install", request)

    def directory_check(self, request: RestRequest) -> bool:
        """The block directory needs ``install_plugins`` and ``activate_plugins``."""
        return _require("directory", request)

    # ------------------------------------------------------------------ callbacks
    def get_items(self, request: RestRequest) -> RestResponse:
        """The installed plugins, filtered by ``search`` and ``status``."""
        search = str(request.get_param("search") or "").lower()
        statuses = request.get_param("status") or []
        items = []
        for plugin in self.manager.installed().values():
            data = self._data(plugin)
            if statuses and data["status"] not in statuses:
                continue
            if search and not _matches(plugin, search):
                continue
            items.append(data)
        return RestResponse(items)

    def get_item(self, request: RestRequest) -> RestResponse:
        """One plugin by id."""
        plugin = self._plugin(request)
        return RestResponse(self._data(plugin))

    def update_item(self, request: RestRequest) -> RestResponse:
        """Activate or deactivate a plugin (``status``), for every process."""
        plugin = self._plugin(request)
        status = request.get_param("status")
        if status == "inactive" and self.manager.is_configured(plugin.plugin):
            raise RestError(
                "rest_plugin_configured",
                CONFIGURED_MESSAGE,
                {"status": 400, "plugin": plugin.plugin},
            )
        if status in ("active", "inactive"):
            failure = self.manager.set_active(plugin.plugin, status == "active")
            if failure is not None:
                raise RestError(
                    "rest_plugin_activation_failed",
                    f"The plugin could not be activated: {failure}",
                    {"status": 500},
                )
        return RestResponse(self._data(plugin))

    def delete_item(self, request: RestRequest) -> NoReturn:
        """Deleting is not supported: plugins are Python packages (404 for an unknown one,
        else 400)."""
        self._plugin(request)
        raise _pip_error()

    def create_item(self, request: RestRequest) -> NoReturn:
        """Installing is not supported: plugins are Python packages (400)."""
        raise _pip_error()

    def search_directory(self, request: RestRequest) -> RestResponse:
        """Installed plugins that are not active and match ``term``, paginated."""
        term = str(request.get_param("term")).lower()
        found = [
            plugin
            for plugin in self.manager.installed().values()
            if self.manager.status(plugin.plugin) == "inactive" and _matches(plugin, term)
        ]
        page = int(request.get_param("page") or 1)
        per_page = int(request.get_param("per_page") or 10)
        items = [_block_item(plugin) for plugin in found[(page - 1) * per_page : page * per_page]]
        return RestResponse(items)

    # ------------------------------------------------------------------ helpers
    def _plugin(self, request: RestRequest) -> InstalledPlugin:
        plugin_id = str(request.get_param("plugin"))
        plugin = self.manager.installed().get(plugin_id)
        if plugin is None:
            raise RestError(
                "rest_plugin_not_found", "Plugin not found.", {"status": 404, "plugin": plugin_id}
            )
        return plugin

    def _data(self, plugin: InstalledPlugin) -> dict[str, Any]:
        status = self.manager.status(plugin.plugin)
        return {
            "plugin": plugin.plugin,
            "status": status,
            "name": plugin.name,
            "plugin_uri": plugin.plugin_uri,
            "author": plugin.author,
            "author_uri": plugin.author_uri,
            "description": {"raw": plugin.description, "rendered": escape(plugin.description)},
            "version": plugin.version,
            "network_only": False,
            "requires_wp": "",
            "requires_php": plugin.requires_python,
            "textdomain": plugin.plugin.split("/")[0],
            "error": self.manager.errors.get(plugin.plugin, "") if status == "error" else "",
        }


def _matches(plugin: InstalledPlugin, term: str) -> bool:
    return any(term in text.lower() for text in (plugin.plugin, plugin.name, plugin.description))


def _block_item(plugin: InstalledPlugin) -> dict[str, Any]:
    return {
        "name": plugin.plugin,
        "title": plugin.name,
        "description": plugin.description,
        "id": plugin.plugin.split("/")[0],
        "rating": 0,
        "rating_count": 0,
        "active_installs": 0,
        "author_block_rating": 0,
        "author_block_count": 0,
        "author": plugin.author,
        "icon": "block-default",
        "last_updated": "",
        "humanized_updated": "",
    }


_CHECKS: Final[Mapping[str, tuple[tuple[str, ...], str, str]]] = {
    "view": (("activate_plugins",), "rest_cannot_view_plugins", _CANNOT_MANAGE),
    "view_item": (("activate_plugins",), "rest_cannot_view_plugin", _CANNOT_MANAGE),
    "manage": (
        ("activate_plugins",),
        "rest_cannot_manage_plugins",
        "Sorry, you are not allowed to manage plugins for this site.",
    ),
    "install": (
        ("install_plugins",),
        "rest_cannot_install_plugin",
        "Sorry, you are not allowed to install plugins on this site.",
    ),
    "directory": (
        ("install_plugins", "activate_plugins"),
        "rest_block_directory_cannot_view",
        "Sorry, you are not allowed to browse the block directory.",
    ),
}
"""Each permission check of the plugin routes: the capabilities it needs (all of them), and
the code and message of its refusal."""


def _require(check: str, request: RestRequest) -> bool:
    """``True`` when the caller has every capability of ``check`` (`_CHECKS`).

    Raises:
        RestError: the check's refusal (401 anonymous, 403 logged in) otherwise.
    """
    capabilities, code, message = _CHECKS[check]
    if not all(request.user.can(capability) for capability in capabilities):
        raise denied(request, code, message)
    return True


def _pip_error() -> RestError:
    return RestError(
        "rest_cannot_manage_plugins",
        "Plugins are Python packages: install and remove them with pip, then restart the site.",
        {"status": 400},
    )
