"""Per-application actions and filters, WordPress style.

An action is a named event: ``do_action(name, *args)`` calls every callback added for it. A
filter passes a value through its callbacks: ``apply_filters(name, value, *args)`` returns what
the last callback returned. Callbacks run by ascending priority, then in the order they were
added. Each callback receives only as many arguments as it accepts (WordPress's
``accepted_args``, read from the callback's signature unless given), so a filter callback may
take just the value even when the filter passes more.

Hooks live on an application instance (``app.hooks``); two applications in one process never
see each other's callbacks.

Names are checked against the hooks the package fires (`sitecache.hook_names.HOOKS`) and those
a plugin declared (`Hooks.register_hook`): adding a callback to a name that is neither, and
that has not fired, logs a debug message on the ``sitecache.hooks`` logger (a typo such as
``rest_api_inti`` never runs), naming the closest known hook.
"""

from __future__ import annotations

import difflib
import inspect
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sitecache.hook_names import HOOKS, HookSpec

__all__ = ["Hooks"]

logger = logging.getLogger(__name__)

Callback = Callable[..., Any]


def _accepted_args(callback: Callback) -> int | None:
    """How many positional arguments ``callback`` takes; ``None`` for any number."""
    try:
        signature = inspect.signature(callback)
    except (TypeError, ValueError):  # builtins without a signature take what they are given
        return None
    count = 0
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.VAR_POSITIONAL:
            return None
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


@dataclass(frozen=True, slots=True)
class _Registration:
    callback: Callback
    priority: int
    order: int
    accepted_args: int | None

    def call(self, args: tuple[Any, ...]) -> Any:
        if self.accepted_args is None:
            return self.callback(*args)
        return self.callback(*args[: self.accepted_args])


@dataclass
class Hooks:
    """The actions and filters of one application."""

    _hooks: dict[str, list[_Registration]] = field(default_factory=dict)
    _done: dict[str, int] = field(default_factory=dict)
    _declared: dict[str, HookSpec] = field(default_factory=dict)
    _counter: int = 0
    _version: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def version(self) -> int:
        """Counts changes to the callbacks (adding or removing one): what is worked out from
        the registered callbacks can be kept while this stays the same."""
        return self._version

    # ------------------------------------------------------------------ names
    def register_hook(self, spec: HookSpec) -> None:
        """Declare a hook a plugin fires (its name, kind and arguments), so adding callbacks
        to it is not taken for a typo.

        Raises:
            ValueError: the package fires a hook of that name, or a plugin declared it
                differently.
        """
        if spec.name in HOOKS:
            raise ValueError(f"{spec.name!r} is one of the package's own hooks")
        with self._lock:
            known = self._declared.setdefault(spec.name, spec)
        if known != spec:
            raise ValueError(f"the hook {spec.name!r} is already declared differently")

    def hook_spec(self, name: str) -> HookSpec | None:
        """The specification of the hook ``name``: the package's, or one a plugin declared."""
        return HOOKS.get(name) or self._declared.get(name)

    @property
    def declared(self) -> Mapping[str, HookSpec]:
        """The hooks plugins declared on these hooks, by name."""
        return dict(self._declared)

    def _check_name(self, name: str, callback: Callback) -> None:
        """Log (debug) a callback added to a hook that is neither known nor fired yet."""
        if name in HOOKS or name in self._declared or name in self._done:
            return
        if not logger.isEnabledFor(logging.DEBUG):
            return
        close = difflib.get_close_matches(name, [*HOOKS, *self._declared], n=1)
        logger.debug(
            "a callback (%s) was added to the hook %r, which nothing fires%s; a plugin that"
            " fires its own hook declares it with hooks.register_hook(HookSpec(...))",
            getattr(callback, "__qualname__", repr(callback)),
            name,
            f" (did you mean {close[0]!r}?)" if close else "",
        )

    # ------------------------------------------------------------------ registering
    def add_filter(
        self, name: str, callback: Callback, priority: int = 10, accepted_args: int | None = None
    ) -> None:
        """Run ``callback`` when the filter ``name`` is applied (lower priorities first); a
        name neither fired by the package, declared by a plugin nor fired yet is logged at
        debug level (a typo never runs)."""
        self._check_name(name, callback)
        accepted = _accepted_args(callback) if accepted_args is None else accepted_args
        with self._lock:
            self._counter += 1
            entries = list(self._hooks.get(name, ()))
            entries.append(_Registration(callback, priority, self._counter, accepted))
            entries.sort(key=lambda entry: (entry.priority, entry.order))
            self._hooks[name] = entries  # replaced, never mutated: a running hook keeps its list
            self._version += 1

    def add_action(
        self, name: str, callback: Callback, priority: int = 10, accepted_args: int | None = None
    ) -> None:
        """Run ``callback`` when the action ``name`` fires (lower priorities first); an
        unknown name is logged as `add_filter` says."""
        self.add_filter(name, callback, priority, accepted_args)

    def remove_filter(self, name: str, callback: Callback, priority: int = 10) -> bool:
        """Remove ``callback`` added to ``name`` at ``priority``; ``True`` if it was there."""
        with self._lock:
            entries = self._hooks.get(name, [])
            kept = [e for e in entries if not (e.callback == callback and e.priority == priority)]
            if len(kept) == len(entries):
                return False
            self._hooks[name] = kept
            self._version += 1
            return True

    def remove_action(self, name: str, callback: Callback, priority: int = 10) -> bool:
        """Remove an action callback; ``True`` if it was there."""
        return self.remove_filter(name, callback, priority)

    def remove_all(self, name: str) -> None:
        """Remove every callback of ``name``."""
        with self._lock:
            if self._hooks.pop(name, None):
                self._version += 1

    @property
    def mark(self) -> int:
        """A point in the history of additions: `added_since` lists the callbacks added after."""
        return self._counter

    def added_since(self, mark: int) -> list[tuple[str, Callback, int]]:
        """``(name, callback, priority)`` of every callback added after ``mark`` and still
        registered, in the order they were added (what a plugin's loader registered)."""
        found = [
            (entry.order, name, entry.callback, entry.priority)
            for name, entries in self._hooks.items()
            for entry in entries
            if entry.order > mark
        ]
        return [(name, callback, priority) for _, name, callback, priority in sorted(found)]

    # ------------------------------------------------------------------ running
    def apply_filters(self, name: str, value: Any, *args: Any) -> Any:
        """Pass ``value`` (and ``args``) through every callback of ``name``; return the result."""
        entries = self._hooks.get(name)
        if not entries:
            return value
        for entry in entries:
            value = entry.call((value, *args))
        return value

    def do_action(self, name: str, *args: Any) -> None:
        """Call every callback of ``name`` with ``args``."""
        with self._lock:
            self._done[name] = self._done.get(name, 0) + 1
        for entry in self._hooks.get(name, ()):
            entry.call(args)

    def do_action_reporting(self, name: str, *args: Any) -> tuple[Callback, Exception] | None:
        """`do_action`, but an exception a callback raises is returned with that callback
        instead of propagating; the callbacks after it do not run (as after a fatal error)."""
        with self._lock:
            self._done[name] = self._done.get(name, 0) + 1
        for entry in self._hooks.get(name, ()):
            try:
                entry.call(args)
            except Exception as exc:  # returned as a value: the caller reports it
                return entry.callback, exc
        return None

    # ------------------------------------------------------------------ asking
    def has_filter(self, name: str, callback: Callback | None = None) -> bool:
        """Whether ``name`` has any callback (or this ``callback``)."""
        entries = self._hooks.get(name, ())
        if callback is None:
            return bool(entries)
        return any(entry.callback == callback for entry in entries)

    def callbacks(self, name: str) -> tuple[Callback, ...]:
        """The callbacks of ``name`` in the order they run."""
        return tuple(entry.callback for entry in self._hooks.get(name, ()))

    def has_action(self, name: str, callback: Callback | None = None) -> bool:
        """Whether the action ``name`` has any callback (or this ``callback``)."""
        return self.has_filter(name, callback)

    def did_action(self, name: str) -> int:
        """How many times the action ``name`` has fired."""
        return self._done.get(name, 0)
