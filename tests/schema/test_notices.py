"""The misuse seam: notices reach the installed reporter, else become a warning."""

from __future__ import annotations

import threading

import pytest

from sitecache.schema import (
    SchemaMisuseWarning,
    report_misuse_to,
    sanitize_value_from_schema,
    validate_value_from_schema,
)


def test_a_missing_type_becomes_a_warning_when_no_reporter_is_installed() -> None:
    with pytest.warns(SchemaMisuseWarning, match=r'The "type" schema keyword for p is required'):
        assert validate_value_from_schema("x", {}, "p") is True


def test_notices_go_to_the_installed_reporter_and_not_to_warnings() -> None:
    seen: list[tuple[str, str]] = []
    with report_misuse_to(lambda function, message: seen.append((function, message))):
        assert validate_value_from_schema("x", {"type": "strnig"}, "p") is True
        assert sanitize_value_from_schema("x", {}, "q") == "x"
    assert seen == [
        (
            "rest_validate_value_from_schema",
            'The "type" schema keyword for p can only be one of the built-in types: '
            "array, object, string, number, integer, boolean, and null.",
        ),
        ("rest_sanitize_value_from_schema", 'The "type" schema keyword for q is required.'),
    ]


def test_unknown_names_in_a_type_list_are_reported_and_let_the_value_through() -> None:
    seen: list[str] = []
    with report_misuse_to(lambda function, message: seen.append(message)):
        assert validate_value_from_schema("My Value", {"type": ["object", "type"]}, "p") is True
    # As in WordPress: one notice for the list, one for the unknown name it falls back to.
    assert seen == [
        'The "type" schema keyword for p can only contain the built-in types: '
        "array, object, string, number, integer, boolean, and null.",
        'The "type" schema keyword for p can only be one of the built-in types: '
        "array, object, string, number, integer, boolean, and null.",
    ]


def test_an_invalid_pattern_is_reported_and_does_not_match() -> None:
    seen: list[str] = []
    with report_misuse_to(lambda function, message: seen.append(message)):
        error = validate_value_from_schema("abc", {"type": "string", "pattern": "(unclosed"}, "p")
    assert not isinstance(error, bool)
    assert error.code == "rest_invalid_pattern"
    assert seen == ["The pattern (unclosed is not a valid regular expression."]


def test_reporters_are_per_thread_so_concurrent_requests_do_not_mix_notices() -> None:
    results: dict[str, list[str]] = {}
    barrier = threading.Barrier(2)

    def request(name: str) -> None:
        seen: list[str] = []
        with report_misuse_to(lambda function, message: seen.append(message)):
            barrier.wait()
            validate_value_from_schema("x", {}, name)
            barrier.wait()
        results[name] = seen

    threads = [threading.Thread(target=request, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {
        "a": ['The "type" schema keyword for a is required.'],
        "b": ['The "type" schema keyword for b is required.'],
    }


def test_the_previous_reporter_is_restored_after_a_nested_block() -> None:
    outer: list[str] = []
    inner: list[str] = []
    with report_misuse_to(lambda function, message: outer.append(message)):
        with report_misuse_to(lambda function, message: inner.append(message)):
            validate_value_from_schema("x", {}, "inner")
        validate_value_from_schema("x", {}, "outer")
    assert inner == ['The "type" schema keyword for inner is required.']
    assert outer == ['The "type" schema keyword for outer is required.']
