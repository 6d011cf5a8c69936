"""The examples in module docstrings run as written."""

from __future__ import annotations

import doctest

import sitecache.schema


def test_the_schema_package_docstring_example_runs() -> None:
    result = doctest.testmod(sitecache.schema, raise_on_error=False, verbose=False)
    assert result.attempted > 0
    assert result.failed == 0
