"""Requests drawn from a route's argument definitions, for `sitecache.testing.check_routes`.

A `Draft` is one request: the method, a path whose captures (``(?P<id>\\d+)``) are filled, and
argument values, every one valid but at most one (the *broken* argument, with the code the
schema engine must give it). Arguments travel as the REST server receives them from clients:
a query string for ``GET`` and ``DELETE``, a JSON body or (now and then) a form body for the
other methods; a `Transport` of `sitecache.testing.strategies` draws only what each can carry.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import quote, urlencode

from hypothesis import strategies as st

from sitecache.schema import parse_request_arg, validate_request_arg
from sitecache.testing.invalid import Invalid, invalid_from_schema
from sitecache.testing.strategies import Transport, from_schema

__all__ = ["Draft", "RouteShape", "argument_is_checked", "drafts", "encode_pairs"]

Strategy = st.SearchStrategy[Any]

_GROUP_START = re.compile(r"\(\?P<(\w+)>")
_REGEX_SYNTAX = re.compile(r"[\\^$.|?*+()\[\]{}]")
_QUERY_METHODS: Final = frozenset({"GET", "HEAD", "DELETE"})


@dataclass(frozen=True)
class Draft:
    """One request to send: what `check_routes` reports when the answer is wrong."""

    method: str
    path: str
    args: dict[str, Any]
    body: str  # "query", "json" or "form"
    broken: str | None = None
    code: str | None = None

    def describe(self) -> str:
        """The request in one line: method, path, where the arguments went, and what was
        broken on purpose."""
        text = f"{self.method} {self.path} {self.body} {json.dumps(self.args, default=repr)}"
        if self.broken is not None:
            text += f" (argument {self.broken!r} broken: expecting {self.code})"
        return text


@dataclass(frozen=True)
class RouteShape:
    """What requests are drawn from: a route pattern, one method and its arguments."""

    pattern: str
    method: str
    args: Mapping[str, Any]
    path_values: Mapping[str, Sequence[str]] = field(default_factory=dict)
    body_properties: Mapping[str, Any] = field(default_factory=dict)
    """For a write method without ``args``: the writable properties of the route's schema,
    sent in a JSON body (the handler validates it itself, so only "no 5xx" is checked)."""


def argument_is_checked(definition: Mapping[str, Any]) -> bool:
    """Whether the REST server validates this argument by its schema alone, so the error code
    of a rejected value is the schema engine's: its ``validate_callback`` is the default one,
    or it has none and its (default) sanitize step parses it by its ``type``."""
    validate = definition.get("validate_callback")
    if validate is validate_request_arg:
        return True
    if validate is not None:
        return False
    sanitize = definition.get(
        "sanitize_callback", parse_request_arg if "type" in definition else None
    )
    return sanitize is parse_request_arg


def _argument_schema(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The schema part of an argument definition (callbacks and REST keys dropped)."""
    dropped = ("validate_callback", "sanitize_callback", "required", "default", "arg_options")
    return {key: value for key, value in definition.items() if key not in dropped}


def _path(pattern: str) -> list[tuple[str, str]]:
    """The pattern as ``("text", literal)`` and ``("group", name)`` pieces, with each group's
    own regex text under ``("regex", text)`` right after it."""
    pieces: list[tuple[str, str]] = []
    position = 0
    for found in _GROUP_START.finditer(pattern):
        if found.start() < position:
            continue  # a group nested in one already read
        pieces.append(("text", pattern[position : found.start()]))
        depth, index = 1, found.end()
        while index < len(pattern) and depth:
            char = pattern[index]
            if char == "\\":
                index += 2
                continue
            depth += {"(": 1, ")": -1}.get(char, 0)
            index += 1
        pieces.append(("group", found.group(1)))
        pieces.append(("regex", pattern[found.end() : index - 1]))
        position = index
    pieces.append(("text", pattern[position:]))
    return pieces


def _capture_values(regex: str, seeds: Sequence[str]) -> Strategy:
    try:
        compiled = re.compile(regex, re.ASCII)
    except re.error:
        return st.sampled_from(list(seeds)) if seeds else st.nothing()
    matching = [seed for seed in seeds if compiled.fullmatch(seed)]
    drawn = st.from_regex(compiled, fullmatch=True)
    if "/" not in regex:
        # One path segment, unless the capture itself spans segments (a block name such as
        # ``core/archives`` in ``/block-renderer/(?P<name>[a-z0-9-]+/[a-z0-9-]+)``).
        drawn = drawn.filter(lambda text: "/" not in text)
    drawn = drawn.filter(lambda text: len(text) <= 40)
    return st.one_of(st.sampled_from(matching), drawn) if matching else drawn


def _paths(shape: RouteShape, seeds: Mapping[str, Sequence[str]]) -> Strategy:
    """Paths matching the route, captures drawn from the seeds (existing ids) or the regex."""
    pieces = _path(shape.pattern)
    if any(kind == "text" and _REGEX_SYNTAX.search(text) for kind, text in pieces):
        return st.from_regex(re.compile(f"^{shape.pattern}$", re.ASCII), fullmatch=True)
    parts: list[Strategy] = []
    for index, (kind, text) in enumerate(pieces):
        if kind == "text":
            parts.append(st.just(text))
        elif kind == "group":
            regex = pieces[index + 1][1]
            parts.append(
                _capture_values(regex, [*shape.path_values.get(text, ()), *seeds.get(text, ())])
            )
    return st.tuples(*parts).map(lambda found: "".join(quote(part, safe="/") for part in found))


def _captures(pattern: str) -> set[str]:
    return {name for kind, name in _path(pattern) if kind == "group"}


@st.composite
def drafts(draw: st.DrawFn, shape: RouteShape, seeds: Mapping[str, Sequence[str]]) -> Draft:
    """A request for ``shape``: valid arguments, and now and then one broken on purpose."""
    method = shape.method
    if method in _QUERY_METHODS:
        body = "query"
    elif not shape.args and shape.body_properties:
        return draw(_schema_bodies(shape, seeds))
    else:
        body = draw(st.sampled_from(["json", "json", "json", "form"]))
    transport: Transport = "json" if body == "json" else "query"
    captured = _captures(shape.pattern)
    definitions = {
        name: definition
        for name, definition in shape.args.items()
        if isinstance(definition, Mapping) and name not in captured
    }
    breakable = [name for name, definition in definitions.items() if _has_rules(definition)]
    broken: str | None = None
    if breakable:
        coin: bool = draw(st.booleans())
        broken = draw(st.sampled_from(breakable)) if coin else None
    args: dict[str, Any] = {}
    code: str | None = None
    for name, definition in definitions.items():
        schema = _argument_schema(definition)
        if name == broken:
            pair: Invalid = draw(
                invalid_from_schema(schema, transport=transport).filter(
                    lambda found: found.value is not None
                )
            )
            args[name] = pair.value
            code = pair.code
        elif definition.get("required") is True or draw(st.booleans()):
            value = draw(from_schema(schema, transport=transport))
            if value is not None:
                args[name] = value
    path = draw(_paths(shape, seeds))
    return Draft(method, path, args, body, broken, code)


@st.composite
def _schema_bodies(draw: st.DrawFn, shape: RouteShape, seeds: Mapping[str, Sequence[str]]) -> Draft:
    """A JSON body of some of the route's writable properties, now and then one of them invalid
    (not reported as broken: the handler's own checks decide the code)."""
    args: dict[str, Any] = {}
    for name, definition in shape.body_properties.items():
        if not isinstance(definition, Mapping) or not _coin(draw):
            continue
        schema = _argument_schema(definition)
        if draw(st.integers(0, 4)) == 0:
            pair: Invalid = draw(invalid_from_schema(schema))
            args[name] = pair.value
        else:
            args[name] = draw(from_schema(schema))
    return Draft(shape.method, draw(_paths(shape, seeds)), args, "json")


def _coin(draw: st.DrawFn) -> bool:
    flipped: bool = draw(st.booleans())
    return flipped


def _has_rules(definition: Mapping[str, Any]) -> bool:
    """Whether an argument declares a schema a value can break."""
    return any(key in definition for key in ("type", "enum", "anyOf", "oneOf", "format", "pattern"))


def encode_pairs(args: Mapping[str, Any]) -> str:
    """Arguments as a query string or form body in PHP's bracket syntax (``a[0]=1&o[k]=v``)."""
    pairs: list[tuple[str, str]] = []

    def add(key: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for inner, item in value.items():
                add(f"{key}[{inner}]", item)
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                add(f"{key}[{index}]", item)
        else:
            pairs.append((key, value if isinstance(value, str) else json.dumps(value)))

    for name, value in args.items():
        add(name, value)
    return urlencode(pairs)
