"""The block types a site renders on the server, held by one `BlockTypeRegistry` per
application (``app.blocks``), and how a block's attributes are checked.

A block type is WordPress's ``WP_Block_Type`` reduced to what a server-rendered block needs: a
name (``namespace/name``), an attribute schema and a render callback, plus the descriptive
fields ``site/v2/block-types`` publishes. Attributes are validated and sanitized by the schema
engine (`sitecache.schema`) against ``{"type": "object", "properties": <attributes>,
"additionalProperties": false}``, as WordPress's block renderer route does, then completed
with each attribute's ``default``.

A render callback is ``callback(attributes, inner, block)``: the prepared attributes, the
block's inner text (``""`` for a void block) and the `BlockContext` of the page. It returns a
`RenderedBlock` (HTML and the ``Cache-Tag`` tags of what it lists), `markupsafe.Markup`
(HTML, no tags) or a ``str`` (text: escaped).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from markupsafe import Markup, escape

from sitecache.errors import RestError
from sitecache.schema import sanitize_value_from_schema, validate_value_from_schema

if TYPE_CHECKING:
    from sitecache.site.blocks.context import BlockContext

__all__ = [
    "BLOCK_NAME",
    "BlockType",
    "BlockTypeError",
    "BlockTypeRegistry",
    "RenderCallback",
    "RenderedBlock",
]

BLOCK_NAME: Final = re.compile(r"^[a-z][a-z0-9-]*/[a-z][a-z0-9-]*$")
"""A block type's name, as WordPress's block-type schema writes it."""
_TYPES: Final = frozenset({"array", "object", "string", "number", "integer", "boolean", "null"})


class BlockTypeError(ValueError):
    """A block type registered wrongly (a bad name, a duplicate, a malformed attribute)."""


@dataclass(frozen=True, slots=True)
class RenderedBlock:
    """A block's output: its HTML and the ``Cache-Tag`` tags of the content it shows."""

    html: Markup
    tags: tuple[str, ...] = ()


RenderCallback = Callable[
    [dict[str, Any], str, "BlockContext"], "RenderedBlock | Markup | str | None"
]


@dataclass(frozen=True)
class BlockType:
    """One server-rendered block type (see the module docstring)."""

    name: str
    attributes: Mapping[str, Mapping[str, Any]]
    render_callback: RenderCallback
    title: str = ""
    description: str = ""
    category: str | None = None
    icon: str | None = None
    keywords: tuple[str, ...] = ()
    supports: Mapping[str, Any] = field(default_factory=dict)
    textdomain: str | None = None

    @property
    def namespace(self) -> str:
        """The part of the name before the slash (``core``)."""
        return self.name.split("/", 1)[0]

    @property
    def is_dynamic(self) -> bool:
        """Rendered on the server (always, for the blocks of this registry)."""
        return True

    def attributes_schema(self) -> dict[str, Any]:
        """The schema a block's attributes are checked against."""
        return {
            "type": "object",
            "properties": {key: dict(value) for key, value in self.attributes.items()},
            "additionalProperties": False,
        }

    def prepare_attributes(
        self, given: Any, param: str = "attributes"
    ) -> dict[str, Any] | RestError:
        """``given`` validated, sanitized and completed with the defaults, or the first
        problem as the schema engine reports it (``rest_invalid_type``,
        ``rest_invalid_param``, ``rest_invalid_pattern``, ...), named from ``param``."""
        schema = self.attributes_schema()
        verdict = validate_value_from_schema(given, schema, param)
        if isinstance(verdict, RestError):
            return verdict
        clean = sanitize_value_from_schema(given, schema, param)
        if isinstance(clean, RestError):
            return clean
        prepared = {
            key: copy.deepcopy(value["default"])
            for key, value in self.attributes.items()
            if "default" in value
        }
        prepared.update(clean if isinstance(clean, dict) else {})
        return prepared

    def render(self, attributes: dict[str, Any], inner: str, block: BlockContext) -> RenderedBlock:
        """The callback's output for prepared ``attributes``, as a `RenderedBlock` (text is
        escaped; ``None`` renders nothing)."""
        output = self.render_callback(attributes, inner, block)
        if isinstance(output, RenderedBlock):
            return output
        if output is None:
            return RenderedBlock(Markup(""))
        if isinstance(output, Markup):
            return RenderedBlock(output)
        return RenderedBlock(escape(str(output)))


def _check_attributes(name: str, attributes: Mapping[str, Any]) -> None:
    """Raise `BlockTypeError` unless every attribute has a known type and a valid default."""
    for key, schema in attributes.items():
        if not isinstance(schema, Mapping):
            raise BlockTypeError(f"{name}: attribute {key!r} is not a schema")
        types = schema.get("type")
        listed = types if isinstance(types, list) else [types]
        if not listed or any(kind not in _TYPES for kind in listed):
            raise BlockTypeError(f"{name}: attribute {key!r} has no valid type ({types!r})")
        if "default" in schema:
            verdict = validate_value_from_schema(schema["default"], dict(schema), key)
            if isinstance(verdict, RestError):
                raise BlockTypeError(
                    f"{name}: the default of {key!r} is invalid: {verdict.message}"
                )


class BlockTypeRegistry:
    """The block types of one application, by name (``WP_Block_Type_Registry``)."""

    def __init__(self) -> None:
        self._types: dict[str, BlockType] = {}

    def register(self, block_type: BlockType) -> BlockType:
        """Add ``block_type``.

        Raises:
            BlockTypeError: the name is not ``namespace/name`` in lowercase letters, digits
                and hyphens, is taken, the callback is not callable or an attribute schema is
                malformed (a missing or unknown type, a default its own schema refuses).
        """
        if not BLOCK_NAME.match(block_type.name):
            raise BlockTypeError(
                f"block type names must be namespace/name in lowercase letters, digits and "
                f"hyphens: {block_type.name!r}"
            )
        if block_type.name in self._types:
            raise BlockTypeError(f"block type {block_type.name!r} is already registered")
        if not callable(block_type.render_callback):
            raise BlockTypeError(f"{block_type.name}: render_callback is not callable")
        _check_attributes(block_type.name, block_type.attributes)
        self._types[block_type.name] = block_type
        return block_type

    def unregister(self, name: str) -> BlockType | None:
        """Remove the block type ``name``; the one removed, or ``None``."""
        return self._types.pop(name, None)

    def get(self, name: str) -> BlockType | None:
        """The block type ``name``, or ``None``."""
        return self._types.get(name)

    # ------------------------------------------------------------------ a plugin's footprint
    def snapshot(self) -> dict[str, BlockType]:
        """The registered block types now (taken before and after a plugin loads)."""
        return dict(self._types)

    def take_back(self, before: Mapping[str, BlockType], after: Mapping[str, BlockType]) -> None:
        """Take back what changed between the snapshots ``before`` and ``after`` (a deactivated
        plugin's block types): a type it registered goes, one it replaced comes back, one it
        unregistered is registered again; a type changed since by someone else stays."""
        for name in set(before) | set(after):
            earlier, changed = before.get(name), after.get(name)
            if earlier is changed or self._types.get(name) is not changed:
                continue
            if earlier is None:
                self._types.pop(name, None)
            else:
                self._types[name] = earlier

    def __contains__(self, name: object) -> bool:
        return name in self._types

    def __iter__(self) -> Iterator[BlockType]:
        return iter(list(self._types.values()))

    def names(self) -> Iterable[str]:
        """Every registered name, in registration order."""
        return list(self._types)
