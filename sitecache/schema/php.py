"""How JSON values behave under the PHP rules that the schema engine mirrors.

WordPress's schema functions lean on PHP's value semantics: ``is_numeric``, ``(int)`` and
``(string)`` casts, ``empty()``, arrays that are lists and maps at once. These helpers give the
same answers for Python's JSON values (``dict`` = object, ``list`` = array, plus ``str``, ``int``,
``float``, ``bool`` and ``None``) so that the rule modules can be written once, plainly.

Deliberate differences from PHP, each because Python has no such limit: integers are never
clamped or wrapped to 64 bits, and a float too large for a Python ``int`` conversion cannot occur.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any, TypeGuard

JsonArray = list[Any] | tuple[Any, ...]

# PHP's whitespace for numeric strings and trim(): space, \t, \n, \r, \v, \f (and \0 for trim).
_NUMERIC_WS = " \t\n\r\x0b\x0c"
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_NUMERIC_STRING = re.compile(rf"[{_NUMERIC_WS}]*{_NUMBER}[{_NUMERIC_WS}]*\Z")
_LEADING_NUMBER = re.compile(rf"[{_NUMERIC_WS}]*({_NUMBER})")
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+\Z")
_CANONICAL_INT_KEY = re.compile(r"(?:0|-?[1-9][0-9]*)\Z")
# PCRE's \s without the UCP flag: ASCII whitespace only.
_LIST_SEPARATORS = re.compile(r"[ \t\n\r\x0b\x0c,]+")


# ---------------------------------------------------------------------- kinds of value
def is_list(value: object) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    """True for a JSON array (a Python ``list`` or ``tuple``)."""
    return isinstance(value, list | tuple)


def is_php_array(value: object) -> TypeGuard[dict[Any, Any] | list[Any] | tuple[Any, ...]]:
    """True for anything PHP would hold in an ``array``: a JSON object or a JSON array."""
    return isinstance(value, dict | list | tuple)


def is_scalar(value: object) -> TypeGuard[str | int | float]:
    """PHP ``is_scalar``: strings, numbers and booleans (not ``None``)."""
    return isinstance(value, str | int | float)


def is_int(value: object) -> bool:
    """PHP ``is_int``: a Python ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_float(value: object) -> bool:
    """PHP ``is_float``."""
    return isinstance(value, float)


def normalize_key(key: object) -> int | str:
    """The key PHP would store: canonical decimal strings become ints, bools and floats ints."""
    if isinstance(key, bool):
        return int(key)
    if isinstance(key, int):
        return key
    if isinstance(key, float):
        return int(key) if math.isfinite(key) else 0
    if key is None:
        return ""
    text = str(key)
    if _CANONICAL_INT_KEY.match(text):
        return int(text)
    return text


def array_items(value: Mapping[Any, Any] | JsonArray) -> Iterator[tuple[Any, Any]]:
    """Iterate a PHP array's ``(key, value)`` pairs: a dict's items or a list's indexes."""
    if isinstance(value, dict):
        return iter(value.items())
    return enumerate(value)


def keyed(value: Mapping[Any, Any] | JsonArray) -> dict[int | str, Any]:
    """A PHP array as a map from normalized keys to values."""
    return {normalize_key(key): item for key, item in array_items(value)}


def has_key(container: Mapping[Any, Any] | JsonArray, key: object) -> bool:
    """PHP ``array_key_exists`` with PHP's key normalization (arrays are never keys)."""
    if key.__class__ is str and container.__class__ is dict and key in container:
        return True  # PERF: the common case, a JSON object's own key
    if is_php_array(key) or not isinstance(key, str | int | float | bool | None):
        return False
    if isinstance(container, dict):
        if key in container:
            return True
        wanted = normalize_key(key)
        return any(normalize_key(existing) == wanted for existing in container)
    wanted = normalize_key(key)
    return isinstance(wanted, int) and 0 <= wanted < len(container)


def is_numeric_array(value: object) -> bool:
    """``wp_is_numeric_array``: a PHP array none of whose keys is a (non-numeric) string."""
    if is_list(value):
        return True
    if isinstance(value, dict):
        return all(isinstance(normalize_key(key), int) for key in value)
    return False


# ---------------------------------------------------------------------- numbers
def is_numeric(value: object) -> bool:
    """PHP 8 ``is_numeric``: ints, floats and numeric strings (surrounding whitespace allowed)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, str):
        return _NUMERIC_STRING.match(value) is not None
    return False


def _int_from_float(number: float) -> int:
    return int(number) if math.isfinite(number) else 0


def _safe_float(number: int) -> float:
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


def _number_from_text(text: str) -> int | float:
    if _INTEGER_TEXT.match(text):
        try:
            return int(text)
        except ValueError:  # more digits than Python converts: read it as PHP would, a float
            return float(text)
    return float(text)


def to_number(value: object) -> int | float:
    """The number PHP compares with: ints and floats as they are, numeric strings parsed.

    Non-numeric values follow the ``(float)`` cast. Integer-looking strings stay ints.
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        match = _LEADING_NUMBER.match(value)
        return _number_from_text(match.group(1)) if match else 0
    return to_float(value)


def to_int(value: object) -> int:
    """PHP ``(int)`` cast: '1.10' → 1, '1abc' → 1, '1e3' → 1000, 'abc' → 0, [] → 0, [0] → 1."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return _int_from_float(value)
    if isinstance(value, str):
        match = _LEADING_NUMBER.match(value)
        if not match:
            return 0
        number = _number_from_text(match.group(1))
        return number if isinstance(number, int) else _int_from_float(number)
    if value is None:
        return 0
    if is_php_array(value):
        return 1 if len(value) else 0
    return 1


def to_float(value: object) -> float:
    """PHP ``(float)`` cast: 5 → 5.0, '1.10' → 1.1, 'abc' → 0.0, '' → 0.0, [] → 0.0."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int):
        return _safe_float(value)
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        match = _LEADING_NUMBER.match(value)
        return float(match.group(1)) if match else 0.0
    if value is None:
        return 0.0
    if is_php_array(value):
        return 1.0 if len(value) else 0.0
    return 1.0


def to_bool(value: object) -> bool:
    """PHP ``(bool)`` cast: '', '0', 0, 0.0, [], null are false; everything else true."""
    if isinstance(value, str):
        return value not in ("", "0")
    if isinstance(value, float):
        return value != 0.0 or math.isnan(value)
    if value is None:
        return False
    if is_php_array(value):
        return len(value) > 0
    return bool(value)


def is_empty(value: object) -> bool:
    """PHP ``empty()`` of a present value."""
    return not to_bool(value)


def is_integral(value: object) -> bool:
    """``rest_is_integer``: numeric, and ``round(float) == float`` (so INF counts, NaN not)."""
    if not is_numeric(value):
        return False
    if is_int(value):
        return True
    number = to_float(value)
    if math.isnan(number):
        return False
    if math.isinf(number):
        return True
    return float(round(number)) == number


# ---------------------------------------------------------------------- strings
def format_float(number: float) -> str:
    """A float as PHP's ``(string)`` writes it (the ``precision`` setting of 14 digits)."""
    if math.isnan(number):
        return "NAN"
    if math.isinf(number):
        return "INF" if number > 0 else "-INF"
    text = f"{number:.14G}"
    if "E" not in text:
        return text
    mantissa, exponent = text.split("E")
    if "." not in mantissa:
        mantissa += ".0"
    sign = "-" if exponent.startswith("-") else "+"
    return f"{mantissa}E{sign}{int(exponent.lstrip('+-'))}"


def to_php_string(value: object) -> str:
    """PHP ``(string)`` cast: true → '1', false → '', null → '', 1.0 → '1', arrays → 'Array'."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "1" if value else ""
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if value is None:
        return ""
    if is_php_array(value):
        return "Array"
    return str(value)


def ascii_lower(text: str) -> str:
    """PHP 8 ``strtolower``: only ASCII letters change."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}


def php_trim(text: str, characters: str = " \t\n\r\0\x0b") -> str:
    """PHP ``trim`` with its default character list."""
    return text.strip(characters)


def parse_list(value: object) -> list[Any]:
    """``wp_parse_list``: split a scalar on runs of commas and whitespace, dropping empties.

    An array keeps its scalar entries (re-indexed); anything else gives an empty list.
    """
    if is_php_array(value):
        return [item for _, item in array_items(value) if is_scalar(item)]
    if value is None:
        return []
    return [piece for piece in _LIST_SEPARATORS.split(to_php_string(value)) if piece]


def format_count(number: object) -> str:
    """``number_format_i18n`` with no decimals in English: 1000 → '1,000' (half away from 0)."""
    value = to_float(number) if not is_int(number) else number
    if isinstance(value, float):
        if not math.isfinite(value):
            return to_php_string(value)
        value = math.floor(abs(value) + 0.5) * (1 if value >= 0 else -1)
    return f"{value:,}"


def is_singular(number: object) -> bool:
    """The English plural rule of WordPress's ``_n``: singular exactly when ``(int) n == 1``."""
    return to_int(number) == 1


def format_list(items: list[Any]) -> str:
    """``wp_sprintf_l``: 'a', 'a and b', 'a, b, and c' (items cast to strings)."""
    words = [to_php_string(item) for item in items]
    if not words:
        return ""
    if len(words) == 1:
        return words[0]
    if len(words) == 2:
        return f"{words[0]} and {words[1]}"
    return ", ".join(words[:-1]) + f", and {words[-1]}"


def _php_json_value(value: Any) -> Any:
    if isinstance(value, dict):
        if not value:
            return []
        keys = [normalize_key(key) for key in value]
        if keys == list(range(len(keys))):
            return [_php_json_value(item) for item in value.values()]
        return {str(key): _php_json_value(item) for key, item in value.items()}
    if is_list(value):
        return [_php_json_value(item) for item in value]
    return value


def json_compact(value: Any) -> str:
    """``wp_json_encode`` with PHP's defaults: compact, ``\\/`` and ``\\uXXXX`` escapes."""
    text = json.dumps(_php_json_value(value), separators=(",", ":"), ensure_ascii=True)
    return text.replace("/", "\\/")


# ---------------------------------------------------------------------- comparisons
def values_equal(first: Any, second: Any) -> bool:
    """``rest_are_values_equal``: strict equality, arrays key by key, int and float numerically."""
    if is_php_array(first) and is_php_array(second):
        left, right = keyed(first), keyed(second)
        if len(left) != len(right):
            return False
        return all(key in right and values_equal(item, right[key]) for key, item in left.items())
    if (is_int(first) and is_float(second)) or (is_float(first) and is_int(second)):
        return to_float(first) == to_float(second)
    return _identical(first, second)


def _identical(first: Any, second: Any) -> bool:
    """PHP ``===`` for scalars and null."""
    if first is None or second is None:
        return first is second
    if isinstance(first, bool) or isinstance(second, bool):
        return isinstance(first, bool) and isinstance(second, bool) and first is second
    if type(first) is not type(second):
        return False
    return bool(first == second)


def stable_form(value: Any) -> Any:
    """A hashable form of a value under ``rest_stabilize_value`` + ``serialize`` identity.

    Scalars keep their PHP type (1, 1.0, '1' and true differ); arrays are key-sorted, so
    ``{"a":1,"b":2}`` and ``{"b":2,"a":1}`` are the same, as are ``{}`` and ``[]``, while lists
    keep their order.
    """
    if value is None:
        return ("n",)
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int):
        return ("i", value)
    if isinstance(value, float):
        return ("d", repr(value))
    if isinstance(value, str):
        return ("s", value)
    if is_php_array(value):
        pairs = [(key, stable_form(item)) for key, item in keyed(value).items()]
        pairs.sort(key=lambda pair: (isinstance(pair[0], str), str(pair[0])))
        return ("a", tuple(pairs))
    return ("o", id(value))
