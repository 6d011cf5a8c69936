"""``/site/v2/themes`` and ``/site/v2/themes/<stylesheet>`` (WordPress 7.1's shapes).

WordPress 7.1 has no REST route to switch themes: ``POST /site/v2/themes/<stylesheet>
{"status": "active"}`` is our extension (``switch_themes``), which sets the ``stylesheet``
option (purging the page cache) for every process.
"""

from __future__ import annotations

from html import escape
from typing import Any, Final

from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.site.rest.base import NAMESPACE, denied, require_capability, require_found
from sitecache.site.themes import Theme, ThemeManager

__all__ = ["THEME_SCHEMA", "ThemesController"]

_STYLESHEET_PATTERN: Final = '(?P<stylesheet>[^\\/:<>\\*\\?"\\\\|]+(?:\\/[^\\/:<>\\*\\?"\\\\|]+)?)'


def _raw_rendered(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "type": "object",
        "readonly": True,
        "properties": {
            "raw": {"description": f"{description} (raw).", "type": "string"},
            "rendered": {"description": f"{description} (HTML).", "type": "string"},
        },
    }


def _plain(kind: str, description: str) -> dict[str, Any]:
    return {"description": description, "type": kind, "readonly": True}


THEME_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "theme",
    "type": "object",
    "properties": {
        "stylesheet": _plain("string", "The theme's stylesheet (its entry point name)."),
        "stylesheet_uri": _plain("string", "The uri for the theme's stylesheet directory."),
        "template": _plain("string", "The theme's template (its stylesheet here)."),
        "template_uri": _plain("string", "The uri for the theme's template directory."),
        "author": _raw_rendered("The theme author"),
        "author_uri": _raw_rendered("The website of the theme author"),
        "description": _raw_rendered("A description of the theme"),
        "is_block_theme": _plain("boolean", "Whether the theme is a block-based theme."),
        "name": _raw_rendered("The name of the theme"),
        "requires_php": _plain("string", "The minimum Python version required."),
        "requires_wp": _plain("string", "The minimum site software version required."),
        "screenshot": _plain("string", "The theme's screenshot URL."),
        "tags": {
            "description": "Tags indicating styles and features of the theme.",
            "type": "object",
            "readonly": True,
            "properties": {
                "raw": {"type": "array", "items": {"type": "string"}},
                "rendered": {"type": "string"},
            },
        },
        "textdomain": _plain("string", "The theme's text domain."),
        "theme_supports": _plain("object", "Features supported by this theme."),
        "theme_uri": _raw_rendered("The URI of the theme's webpage"),
        "version": _plain("string", "The theme's current version."),
        "status": {
            "description": "A named status for the theme.",
            "type": "string",
            "enum": ["inactive", "active"],
        },
        "default_template_types": {
            "description": "A list of default template types.",
            "type": "array",
            "readonly": True,
            "items": {"type": "object"},
        },
        "default_template_part_areas": {
            "description": "A list of allowed area values for template parts.",
            "type": "array",
            "readonly": True,
            "items": {"type": "object"},
        },
    },
}


def _schema() -> dict[str, Any]:
    return THEME_SCHEMA


class ThemesController:
    """The theme routes over a `ThemeManager`."""

    def __init__(self, manager: ThemeManager) -> None:
        self.manager = manager

    def register(self, server: RestServer) -> None:
        """Register ``/themes`` and ``/themes/<stylesheet>``."""
        status = {
            "description": "Limit result set to themes assigned one or more statuses.",
            "type": "array",
            "items": {"type": "string", "enum": ["active", "inactive"]},
        }
        server.register_rest_route(
            NAMESPACE,
            "/themes",
            {
                "methods": "GET",
                "callback": self.get_items,
                "permission_callback": self.list_check,
                "args": {"status": status},
            },
            schema=_schema,
        )
        server.register_rest_route(
            NAMESPACE,
            f"/themes/{_STYLESHEET_PATTERN}",
            [
                {
                    "methods": "GET",
                    "callback": self.get_item,
                    "permission_callback": self.item_check,
                    "args": {},
                },
                {
                    "methods": "POST, PUT, PATCH",
                    "callback": self.update_item,
                    "permission_callback": self.switch_check,
                    "args": {
                        "status": {
                            "description": "active switches the site to this theme.",
                            "type": "string",
                            "enum": ["active"],
                            "required": True,
                        }
                    },
                },
            ],
            schema=_schema,
        )

    # ------------------------------------------------------------------ permissions
    def list_check(self, request: RestRequest) -> bool:
        """``switch_themes``; only ``status=active`` is open to those who can ``edit_posts``."""
        if request.user.can("switch_themes"):
            return True
        if request.get_param("status") == ["active"] and request.user.can("edit_posts"):
            return True
        raise denied(
            request, "rest_cannot_view_themes", "Sorry, you are not allowed to view themes."
        )

    def item_check(self, request: RestRequest) -> bool:
        """``switch_themes``; the active theme is open to those who can ``edit_posts``."""
        if request.user.can("switch_themes"):
            return True
        active = self.manager.active().stylesheet == request.get_param("stylesheet")
        if active and request.user.can("edit_posts"):
            return True
        code = "rest_cannot_view_active_theme" if active else "rest_cannot_view_themes"
        raise denied(request, code, "Sorry, you are not allowed to view this theme.")

    def switch_check(self, request: RestRequest) -> bool:
        """Switching needs ``switch_themes`` (administrators)."""
        return require_capability(
            request,
            "switch_themes",
            "rest_cannot_switch_themes",
            "Sorry, you are not allowed to switch themes.",
        )

    # ------------------------------------------------------------------ callbacks
    def get_items(self, request: RestRequest) -> RestResponse:
        """Every installed theme (filtered by ``status``), with totals headers."""
        statuses = request.get_param("status") or []
        active = self.manager.active().stylesheet
        items = [
            self._data(theme, active)
            for theme in self.manager.installed().values()
            if not statuses or self._status(theme, active) in statuses
        ]
        response = RestResponse(items)
        response.header("X-Site-Total", str(len(items)))
        response.header("X-Site-TotalPages", "1")
        return response

    def get_item(self, request: RestRequest) -> RestResponse:
        """One theme by stylesheet."""
        theme = self._theme(request)
        return RestResponse(self._data(theme, self.manager.active().stylesheet))

    def update_item(self, request: RestRequest) -> RestResponse:
        """Make the theme active for every process (purges the page cache)."""
        theme = self._theme(request)
        self.manager.switch(theme.stylesheet)
        return RestResponse(self._data(theme, self.manager.active().stylesheet))

    # ------------------------------------------------------------------ helpers
    def _theme(self, request: RestRequest) -> Theme:
        stylesheet = str(request.get_param("stylesheet"))
        return require_found(
            self.manager.installed().get(stylesheet), "rest_theme_not_found", "Theme not found."
        )

    @staticmethod
    def _status(theme: Theme, active: str) -> str:
        return "active" if theme.stylesheet == active else "inactive"

    def _data(self, theme: Theme, active: str) -> dict[str, Any]:
        def pair(text: str) -> dict[str, str]:
            return {"raw": text, "rendered": escape(text)}

        return {
            "stylesheet": theme.stylesheet,
            "stylesheet_uri": "",
            "template": theme.stylesheet,
            "template_uri": "",
            "author": pair(theme.author),
            "author_uri": pair(theme.author_uri),
            "description": pair(theme.description),
            "is_block_theme": False,
            "name": pair(theme.name),
            "requires_php": "",
            "requires_wp": "",
            "screenshot": "",
            "tags": {"raw": list(theme.tags), "rendered": escape(", ".join(theme.tags))},
            "textdomain": theme.stylesheet,
            "theme_supports": {},
            "theme_uri": pair(theme.theme_uri),
            "version": theme.version,
            "status": self._status(theme, active),
            "default_template_types": [],
            "default_template_part_areas": [],
        }
