"""Compiled validity checks: a schema turned into generated Python that answers "valid or not".

`compile_check` writes one Python function per schema whose answer is exactly whether
`check_value` finds no error. Objects and arrays
nested in it are written inline up to a depth, then in functions of their own. The function
never builds a message: a value it refuses is handed to the reference, which names the error, so
codes, messages and data stay the reference's by construction. Because only the verdict matters,
the properties of an object are checked in the schema's order, not the value's.

Only schemas that cannot report misuse are compiled (`may_report_misuse`); the rare shapes that
have no fast path here (an object given as a list, a non-string key) are checked by the
reference rule for that one value, which is exact and, for such schemas, silent.

SECURITY: schemas come from plugins. No schema value ever becomes source text: every key, bound,
pattern, enum member and sub-schema reaches the generated code as a bound name (``k0``, ``k1``,
...) of the function's namespace; the source holds only this module's templates and fresh names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, cast

from sitecache.schema import compiled_helpers as helpers
from sitecache.schema import php
from sitecache.schema.compiled_helpers import Check
from sitecache.schema.compiled_nodes import CompiledPattern, branches, flag, schema_pattern
from sitecache.schema.types import get_best_type_for_value, is_array, is_boolean, sanitize_array
from sitecache.schema.validation import FORMAT_CHECKS

__all__ = ["Check", "compile_check"]

_INLINE_DEPTH: Final = 12
"""Indentation past which a nested schema gets a function of its own (Python limits nesting)."""
_MISSING: Final = object()


# ---------------------------------------------------------------------- the enum rule
def _enum_check(schema: dict[str, Any], members: list[Any]) -> Check:
    """``rest_validate_enum``: the value sanitized by ``schema`` equals one member."""
    # Imported here: sanitizers need checks (anyOf), checks need sanitizers (enum).
    from sitecache.schema.compiled_sanitizers import Refused, compile_sanitizer

    sanitize = compile_sanitizer(schema)

    def check(value: Any) -> bool:
        try:
            sanitized = sanitize(value)
        except Refused:
            return False
        return any(php.values_equal(sanitized, member) for member in members)

    return check


_HELPERS: Final[dict[str, Any]] = {
    "MISSING": _MISSING,
    "all_unique": helpers.all_unique,
    "best_type": get_best_type_for_value,
    "first_match": helpers.first_match,
    "has_all": helpers.has_all,
    "is_array": is_array,
    "is_boolean": is_boolean,
    "is_digits": helpers.is_digits,
    "is_integral": php.is_integral,
    "is_multiple": helpers.is_multiple,
    "is_numeric": php.is_numeric,
    "object_rule": helpers.object_rule,
    "one_key": helpers.one_key,
    "only_match": helpers.only_match,
    "sanitize_array": sanitize_array,
    "to_number": php.to_number,
}
"""The names generated code calls (the rest it reaches through bound constants)."""


# ---------------------------------------------------------------------- the writer
class _Writer:
    """The source of one generated function and the names it binds."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = dict(_HELPERS)
        self._count = 0

    def bind(self, value: Any) -> str:
        """A fresh name bound to ``value`` in the function's namespace."""
        name = f"k{self._count}"
        self._count += 1
        self.namespace[name] = value
        return name

    def fresh(self) -> str:
        """A fresh local variable name."""
        name = f"v{self._count}"
        self._count += 1
        return name

    def add(self, depth: int, text: str) -> None:
        """One line of source at ``depth`` levels of indentation."""
        self.lines.append("    " * depth + text)

    def build(self) -> Check:
        """The generated function."""
        source = "def check(value):\n" + "\n".join(self.lines) + "\n    return True\n"
        code = compile(source, "<sitecache compiled schema>", "exec")
        exec(code, self.namespace)  # noqa: S102 - the source holds no schema value (see above)
        return cast(Check, self.namespace["check"])


def compile_check(schema: Mapping[str, Any], *, combiners: bool = True) -> Check:
    """A function answering exactly whether `check_value` accepts a value for ``schema``.

    ``schema`` must be one `may_report_misuse` clears. With ``combiners`` false, ``anyOf`` and
    ``oneOf`` are taken as already satisfied (the rest of a schema after a branch matched).
    """
    writer = _Writer()
    if combiners:
        _node(writer, dict(schema), "value", 1)
    else:
        _rest(writer, dict(schema), "value", 1)
    return writer.build()


# ---------------------------------------------------------------------- schemas
def _child(w: _Writer, schema: Mapping[str, Any], v: str, d: int) -> None:
    if d >= _INLINE_DEPTH:
        w.add(d, f"if not {w.bind(compile_check(schema))}({v}): return False")
    else:
        _node(w, dict(schema), v, d)


def _node(w: _Writer, node: dict[str, Any], v: str, d: int) -> None:
    """``anyOf``, then ``oneOf``, then the type's rules (the order of `check_value`)."""
    matched = ""
    found: list[tuple[Any, dict[str, Any]]] = []
    for keyword, pick in (("anyOf", "first_match"), ("oneOf", "only_match")):
        if keyword in node:
            found = branches(node, keyword)
            checks = w.bind(tuple(compile_check(branch) for _, branch in found))
            matched = w.fresh()
            w.add(d, f"{matched} = {pick}({checks}, {v})")
            w.add(d, f"if {matched} < 0: return False")
    if matched and node.get("type") is None:
        # The type comes from the matched branch (only one combiner: `may_report_misuse`).
        rests = tuple(
            compile_check({**node, "type": branch["type"]}, combiners=False) for _, branch in found
        )
        w.add(d, f"if not {w.bind(rests)}[{matched}]({v}): return False")
    else:
        _rest(w, node, v, d)


def _rest(w: _Writer, node: dict[str, Any], v: str, d: int) -> None:
    type_name = node["type"]
    if not isinstance(type_name, list | tuple):
        _typed(w, node, type_name, v, d)
        return
    chosen = w.fresh()
    w.add(d, f"{chosen} = best_type({v}, {w.bind(tuple(type_name))})")
    keyword = "if"
    for name in dict.fromkeys(type_name):
        w.add(d, f"{keyword} {chosen} == {w.bind(name)}:")
        _typed(w, {**node, "type": name}, name, v, d + 1)
        keyword = "elif"
    if keyword == "elif":
        w.add(d, "else:")
        d += 1
    w.add(d, "return False")


def _typed(w: _Writer, node: dict[str, Any], type_name: str, v: str, d: int) -> None:
    _TYPE_WRITERS[type_name](w, node, v, d)
    _enum(w, node, type_name, v, d)
    if type_name == "string":
        format_name = node.get("format")
        check = FORMAT_CHECKS.get(format_name) if isinstance(format_name, str) else None
        if check is not None:
            w.add(d, f"if {w.bind(check)}({v}, '') is not None: return False")


def _enum(w: _Writer, node: dict[str, Any], type_name: str, v: str, d: int) -> None:
    enum = node.get("enum")
    if enum and isinstance(enum, list | dict | tuple):
        members = list(enum.values()) if isinstance(enum, dict) else list(enum)
        check = w.bind(_enum_check(node, members))
        if type_name == "string" and not ("format" in node or "anyOf" in node or "oneOf" in node):
            # PERF: a plain string sanitizes to itself, as in `_check_enum`.
            strings = w.bind(frozenset(member for member in members if member.__class__ is str))
            w.add(d, f"if ({v} not in {strings}) if {v}.__class__ is str else not {check}({v}):")
        else:
            w.add(d, f"if not {check}({v}):")
        w.add(d + 1, "return False")
    elif enum is not None and not php.is_empty(enum):
        w.add(d, "return False")  # a scalar enum: nothing is one of its members


# ---------------------------------------------------------------------- per-type rules
def _null(w: _Writer, node: dict[str, Any], v: str, d: int) -> None:
    w.add(d, f"if {v} is not None: return False")


def _boolean(w: _Writer, node: dict[str, Any], v: str, d: int) -> None:
    w.add(d, f"if {v} is not True and {v} is not False and not is_boolean({v}): return False")


def _number(w: _Writer, node: dict[str, Any], v: str, d: int, integer: bool = False) -> None:
    """``is_numeric``, then ``multipleOf`` and the bounds; for an integer also
    ``rest_is_integer`` (a number without fraction), checked with the number here."""
    number = w.fresh()
    if integer:  # a float may have a fraction: it takes the general path
        w.add(d, f"if {v}.__class__ is int:")
    else:
        w.add(d, f"if {v}.__class__ is int or {v}.__class__ is float:")
    w.add(d + 1, f"{number} = {v}")
    w.add(d, f"elif {v}.__class__ is str and is_digits({v}):")  # PERF: a query string's "20"
    w.add(d + 1, f"{number} = int({v})")
    general = f"is_numeric({v}) and is_integral({v})" if integer else f"is_numeric({v})"
    w.add(d, f"elif {general}:")
    w.add(d + 1, f"{number} = to_number({v})")
    w.add(d, "else:")
    w.add(d + 1, "return False")
    divisor = node.get("multipleOf")
    if divisor is not None:
        w.add(d, f"if not is_multiple({number}, {w.bind(php.to_float(divisor))}): return False")
    minimum, maximum = node.get("minimum"), node.get("maximum")
    if minimum is not None:
        below = "<=" if flag(node.get("exclusiveMinimum")) else "<"
        w.add(d, f"if {number} {below} {w.bind(php.to_number(minimum))}: return False")
    if maximum is not None:
        above = ">=" if flag(node.get("exclusiveMaximum")) else ">"
        w.add(d, f"if {number} {above} {w.bind(php.to_number(maximum))}: return False")


def _integer(w: _Writer, node: dict[str, Any], v: str, d: int) -> None:
    _number(w, node, v, d, integer=True)


def _string(w: _Writer, node: dict[str, Any], v: str, d: int) -> None:
    w.add(d, f"if not isinstance({v}, str): return False")
    if node.get("minLength") is not None:
        w.add(d, f"if len({v}) < {w.bind(php.to_number(node['minLength']))}: return False")
    if node.get("maxLength") is not None:
        w.add(d, f"if len({v}) > {w.bind(php.to_number(node['maxLength']))}: return False")
    if node.get("pattern") is not None:
        w.add(d, f"if {w.bind(_pattern(node['pattern']))}.search({v}) is None: return False")


def _pattern(pattern: Any) -> CompiledPattern:
    compiled = schema_pattern(pattern)
    if compiled is None:  # `may_report_misuse` keeps such schemas away; refuse to compile them
        raise ValueError("an invalid pattern reports misuse: not compiled")
    return compiled


def _array(w: _Writer, node: dict[str, Any], v: str, d: int) -> None:
    items = w.fresh()
    w.add(d, f"if {v}.__class__ is list:")
    w.add(d + 1, f"{items} = {v}")
    w.add(d, f"elif is_array({v}):")
    w.add(d + 1, f"{items} = sanitize_array({v})")
    w.add(d, "else:")
    w.add(d + 1, "return False")
    if node.get("items") is not None:
        item = w.fresh()
        w.add(d, f"for {item} in {items}:")
        _child(w, node["items"], item, d + 1)
    _counts(w, node, items, d, "minItems", "maxItems")
    unique = node.get("uniqueItems")
    if unique is not None and flag(unique):
        w.add(d, f"if not all_unique({items}): return False")


def _counts(w: _Writer, node: dict[str, Any], v: str, d: int, low: str, high: str) -> None:
    if node.get(low) is not None:
        w.add(d, f"if len({v}) < {w.bind(php.to_number(node[low]))}: return False")
    if node.get(high) is not None:
        w.add(d, f"if len({v}) > {w.bind(php.to_number(node[high]))}: return False")


def _object(w: _Writer, node: dict[str, Any], v: str, d: int) -> None:
    w.add(d, f"if {v}.__class__ is not dict:")
    w.add(d + 1, f"if not object_rule({v}, {w.bind(node)}): return False")
    w.add(d, "else:")
    w.add(d + 1, "pass")
    names = _required_names(node)
    if names:
        w.add(d + 1, f"if not has_all({v}, {w.bind(tuple(names))}): return False")
    _properties(w, node, v, d + 1)
    _counts(w, node, v, d + 1, "minProperties", "maxProperties")


def _required_names(node: dict[str, Any]) -> list[Any]:
    """``required`` as a list of names, else the properties flagged ``required: true``."""
    required, properties = node.get("required"), node.get("properties")
    if php.is_php_array(required):
        return list(required.values()) if isinstance(required, dict) else list(required)
    if isinstance(properties, Mapping):
        return [
            name
            for name, child in properties.items()
            if isinstance(child, Mapping) and child.get("required") is True
        ]
    return []


def _properties(w: _Writer, node: dict[str, Any], v: str, d: int) -> None:
    """Each declared property present, then (only when some key is left) the other keys."""
    properties, patterns = node.get("properties"), node.get("patternProperties")
    declared = [
        (name, child)
        for name, child in (properties.items() if isinstance(properties, Mapping) else ())
        if child is not None
    ]
    additional = node.get("additionalProperties")
    if declared:
        count = w.fresh()
        w.add(d, f"{count} = 0")
        for name, child in declared:
            item = w.fresh()
            w.add(d, f"{item} = {v}.get({w.bind(name)}, MISSING)")
            w.add(d, f"if {item} is not MISSING:")
            w.add(d + 1, f"{count} += 1")
            _child(w, child, item, d + 1)
        w.add(d, f"if {count} != len({v}):")
    elif isinstance(patterns, Mapping) or additional is False or isinstance(additional, Mapping):
        w.add(d, f"if {v}:")
    else:
        return  # no key outside the declared ones is ever checked
    key, item = w.fresh(), w.fresh()
    w.add(d + 1, f"for {key}, {item} in {v}.items():")
    if declared:
        w.add(d + 2, f"if {key} in {w.bind(frozenset(name for name, _ in declared))}: continue")
    w.add(d + 2, f"if {key}.__class__ is not str:")
    w.add(d + 3, f"if not one_key({w.bind(node)}, {key}, {item}): return False")
    w.add(d + 3, "continue")
    keyword = "if"
    for pattern, child in patterns.items() if isinstance(patterns, Mapping) else ():
        w.add(d + 2, f"{keyword} {w.bind(_pattern(pattern))}.search({key}) is not None:")
        _additional(w, additional if child is None else child, child is None, item, d + 3)
        keyword = "elif"
    if keyword == "elif":
        w.add(d + 2, "else:")
    _additional(w, additional, True, item, d + 3 if keyword == "elif" else d + 2)


def _additional(w: _Writer, schema: Any, is_additional: bool, v: str, d: int) -> None:
    """The check of a key no declared property names: its pattern's schema, else
    ``additionalProperties`` (``false`` refuses it; a schema checks it; else it passes)."""
    if is_additional and schema is False:
        w.add(d, "return False")
    elif not is_additional or isinstance(schema, Mapping):
        _child(w, schema, v, d)
    else:
        w.add(d, "pass")


_TYPE_WRITERS: Final[dict[str, Callable[[_Writer, dict[str, Any], str, int], None]]] = {
    "null": _null,
    "boolean": _boolean,
    "object": _object,
    "array": _array,
    "number": _number,
    "string": _string,
    "integer": _integer,
}
