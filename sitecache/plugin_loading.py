"""Application plugins: find the callable a plugin spec names.

A spec is ``module.path:function`` (imported as usual) or ``path/to/file.py:function`` (the file
is loaded by its path, so a plugin beside the configuration file works from any directory; a
TOML file's relative paths are made absolute from the file's own directory by
`sitecache.config`, other relative paths are read from the current directory). The same loader
serves the application (`sitecache.app.App.load_plugin`) and ``sitecache serve``'s check before
gunicorn starts, so both accept and refuse exactly the same specs.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from sitecache.config import ConfigError, is_plugin_file

__all__ = ["load_plugin_target"]


def load_plugin_target(spec: str) -> Any:
    """The callable named by ``spec``.

    Raises:
        ConfigError: the module or file cannot be imported (whatever it raised while
            importing), the attribute is missing, or it is not callable.
    """
    location, _, attribute = spec.rpartition(":")
    if not location or not attribute:
        raise ConfigError(f"plugin {spec!r} is not module:function or file.py:function")
    try:
        if is_plugin_file(spec):
            target: Any = _load_file(Path(location))
        else:
            target = importlib.import_module(location)
        for part in attribute.split("."):
            target = getattr(target, part)
    except ConfigError:
        raise
    except Exception as exc:  # an import error, or anything the module raised while importing
        raise ConfigError(f"plugin {spec!r} cannot be loaded: {exc}") from exc
    if not callable(target):
        raise ConfigError(f"plugin {spec!r} is not callable")
    return target


def _load_file(path: Path) -> ModuleType:
    """The module of a plugin file, loaded once per process under a name of its own."""
    path = path.resolve()
    if not path.is_file():
        raise ConfigError(f"plugin file {path} does not exist")
    digest = hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:12]
    name = f"sitecache_plugin_{_identifier(path.stem)}_{digest}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"plugin file {path} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: dataclasses and pickling look it up
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _identifier(text: str) -> str:
    return "".join(char if char.isalnum() else "_" for char in text) or "plugin"
