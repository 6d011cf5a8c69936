"""Themes: the built-in one plus those installed through the ``sitecache.themes`` entry points,
and each process rendering with the active one.

The theme protocol: a package declares ::

    [project.entry-points."sitecache.themes"]
    quiet = "sitecache_quiet:THEME"

and the entry point names an object with the attributes ``name``, ``version``, ``description``
and ``template_directory`` (a directory of Jinja2 templates: any of ``base.html``,
``single.html``, ``list.html``, ``not_found.html``, ... of ``sitecache/templates``; templates
it leaves out come from the built-in theme), and optionally ``author``, ``author_uri``,
``theme_uri``, ``tags``. Its stylesheet (WordPress's theme id) is the entry point's name.

The active theme is the site option ``stylesheet``: switching it goes through
`ContentService.update_option`, whose ``updated_option`` purges the whole site from the page
cache (`sitecache.invalidation`). Every process reads the option on each request it renders
(one indexed SELECT) and swaps its template loader when it changed.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass, field
from importlib.metadata import entry_points, version
from pathlib import Path
from typing import Any, Final

from jinja2 import BaseLoader, ChoiceLoader, Environment, FileSystemLoader

from sitecache.domain_errors import OutageError
from sitecache.site.content import ContentService

__all__ = ["BUILTIN_THEME", "ENTRY_POINT_GROUP", "Theme", "ThemeManager", "discover_themes"]

logger = logging.getLogger("sitecache.themes")

ENTRY_POINT_GROUP: Final = "sitecache.themes"
_STYLESHEET: Final = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass(frozen=True, slots=True)
class Theme:
    """One installed theme."""

    stylesheet: str
    name: str
    version: str
    description: str
    template_directory: Path | None
    """``None``: the built-in templates only."""
    author: str = ""
    author_uri: str = ""
    theme_uri: str = ""
    tags: tuple[str, ...] = ()


def _builtin() -> Theme:
    try:
        current = version("sitecache")
    except Exception:  # run from a checkout that was never installed
        current = ""
    return Theme(
        stylesheet="sitecache",
        name="sitecache",
        version=current,
        description="The built-in theme: plain, accessible, autoescaped Jinja2 templates.",
        template_directory=None,
        author="sitecache",
    )


BUILTIN_THEME: Final = _builtin()


def discover_themes() -> list[Theme]:
    """The built-in theme, then every theme of the ``sitecache.themes`` group that loads and
    follows the protocol (a broken one is logged and left out)."""
    found = {BUILTIN_THEME.stylesheet: BUILTIN_THEME}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        if not _STYLESHEET.match(point.name) or point.name in found:
            logger.warning("theme entry point %r ignored (bad or duplicate name)", point.name)
            continue
        try:
            target: Any = point.load()
            found[point.name] = Theme(
                stylesheet=point.name,
                name=str(target.name),
                version=str(target.version),
                description=str(target.description),
                template_directory=Path(target.template_directory),
                author=str(getattr(target, "author", "")),
                author_uri=str(getattr(target, "author_uri", "")),
                theme_uri=str(getattr(target, "theme_uri", "")),
                tags=tuple(str(tag) for tag in getattr(target, "tags", ())),
            )
        except Exception:  # a theme's own failure: logged, never fatal to the site
            logger.exception("theme %r cannot be loaded", point.name)
    return list(found.values())


@dataclass
class ThemeManager:
    """The installed themes and the template loader of the active one.

    Args:
        content: the content service (the option ``stylesheet``).
        templates: the environment the site renders with (its loader is swapped).
    """

    content: ContentService
    templates: Environment
    discover: Any = discover_themes
    """Lists the installed themes (tests give their own)."""
    _installed: dict[str, Theme] | None = None
    _base: BaseLoader | None = None
    _current: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def installed(self) -> dict[str, Theme]:
        """The installed themes by stylesheet (discovered once per process)."""
        if self._installed is None:
            self._installed = {theme.stylesheet: theme for theme in self.discover()}
        return self._installed

    def active(self) -> Theme:
        """The theme pages render with (the built-in one when the option names no theme)."""
        stylesheet = str(self.content.get_option("stylesheet"))
        return self.installed().get(stylesheet, self.installed()[BUILTIN_THEME.stylesheet])

    def switch(self, stylesheet: str) -> bool:
        """Make ``stylesheet`` (an installed theme) the active one for every process; the
        option's change purges the page cache. ``False`` when it was already active."""
        if stylesheet not in self.installed():
            raise KeyError(stylesheet)
        changed = self.content.update_option("stylesheet", stylesheet)
        self.sync()
        return changed

    def sync(self) -> None:
        """Render with the active theme's templates (the loader is swapped when it changed;
        when the store cannot be read the current theme stays, and the page's own reads fail)."""
        try:
            theme = self.active()
        except Exception as exc:  # the store is down: /healthz and the page's own reads report it
            # An outage is reported by the store once, not here on every request.
            log = logger.debug if isinstance(exc, OutageError) else logger.warning
            log("the active theme cannot be read", exc_info=True)
            return
        if theme.stylesheet == self._current:
            return
        with self._lock:
            if self._base is None:
                self._base = self.templates.loader
            base = self._base
            directory = theme.template_directory
            self.templates.loader = (
                base
                if directory is None or base is None
                else ChoiceLoader([FileSystemLoader(str(directory)), base])
            )
            self._current = theme.stylesheet
