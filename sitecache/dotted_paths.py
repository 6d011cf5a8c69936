"""Objects named by a dotted path, ``package.module:attribute``, as Django finds a cache
backend by its path: the configuration names a third-party storage backend this way
(``cache_backend = "package.module:factory"``).

`dotted_path_problem` says in words why a path cannot be used (the configuration lists it with
its other problems); `import_dotted` gives the object. Only the standard library is imported
here: the configuration checks a path before anything else of the package is loaded.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Final

__all__ = ["DOTTED_PATH_PATTERN", "dotted_path_problem", "import_dotted", "is_dotted_path"]

#: ``package.module:attribute``: Python identifiers joined by dots, on either side of a colon.
DOTTED_PATH_PATTERN: Final = r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$"


def is_dotted_path(text: str) -> bool:
    """Whether ``text`` has the form of a dotted path (`DOTTED_PATH_PATTERN`), whether or not
    it names anything."""
    return re.match(DOTTED_PATH_PATTERN, text) is not None


def import_dotted(path: str) -> Any:
    """The object ``path`` names: its module imported, then each dotted part of the attribute
    looked up.

    Raises:
        ValueError: ``path`` is not ``package.module:attribute``.
        LookupError: the module cannot be imported (whatever it raised while importing) or
            has no such attribute; the message says which, in words.
    """
    if not is_dotted_path(path):
        raise ValueError(f"{path!r} is not package.module:attribute")
    location, _, attribute = path.partition(":")
    try:
        target: Any = importlib.import_module(location)
    except ModuleNotFoundError as exc:
        raise LookupError(f"there is no module {exc.name or location!r}") from exc
    except Exception as exc:  # anything the module raised while importing
        raise LookupError(
            f"the module {location!r} cannot be imported: {type(exc).__name__}: {exc}"
        ) from exc
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise LookupError(f"the module {location!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    return target


def dotted_path_problem(path: str) -> str | None:
    """Why ``path`` names no callable object, in words (``None``: it names one)."""
    try:
        target = import_dotted(path)
    except (ValueError, LookupError) as refused:
        return str(refused)
    if not callable(target):
        return f"{path} is not callable (its type is {type(target).__name__})"
    return None
