"""The error-code reference names every code the package can answer with.

The reference is generated from the source's syntax tree (`sitecache_docs.errors`); this test
finds the codes another way, by searching the source text for the shapes an error code is
written in, so a new way of making an error that the generator does not read fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sitecache_docs.errors import error_codes_reference

import sitecache
from sitecache.cache.api.schemas import STATUS_WARNINGS

PACKAGE = Path(sitecache.__file__).resolve().parent
_CODE = r'"([a-z][a-z0-9]*(?:_[a-z0-9]+)+)"'
#: Where a code is written: made into an error (RestError, a domain exception, a helper named
#: for errors or refusals, with or without a request before it, a subclass's ``__init__``), a
#: ``code=`` keyword, a JSON body's ``"code"``.
SHAPES = [
    re.compile(r"\b\w*(?:Error|error|denied|refused|refusal)\(\s*(?:\w+,\s*)?" + _CODE),
    re.compile(r"Error\.__init__\(\s*self,\s*" + _CODE),
    re.compile(r"\bcode=" + _CODE),
    re.compile(r'"code":\s*' + _CODE),
]


def codes_in_the_source() -> dict[str, str]:
    """Each code the source writes in one of `SHAPES`, with the first file that does."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for shape in SHAPES:
            for code in shape.findall(text):
                found.setdefault(code, str(path.relative_to(PACKAGE.parent)))
    return {code: where for code, where in found.items() if code not in STATUS_WARNINGS}


@pytest.fixture(scope="module")
def reference() -> str:
    """The generated table (reading the whole package takes a few seconds: once)."""
    return error_codes_reference().text


def test_every_error_code_of_the_source_is_in_the_reference(reference: str) -> None:
    listed = set(re.findall(r"^\| `([a-z0-9_]+)` \|", reference, re.M))
    found = codes_in_the_source()
    assert len(found) > 100  # the search does find the package's codes
    missing = {code: where for code, where in found.items() if code not in listed}
    assert missing == {}, f"error codes missing from the reference: {missing}"


def test_the_codes_made_by_helpers_are_listed_with_their_statuses(reference: str) -> None:
    rows = {
        row.split(" | ")[0].strip("| `"): row.split(" | ")[1] for row in reference.splitlines()[2:]
    }
    assert rows["rest_cannot_edit"] == "401, 403"  # denied(request, code, ...)
    assert rows["rest_no_route"] == "404, 405"  # the operator endpoints' _error(..., 405)
    assert rows["site_storage_full"] == "507"  # StorageFullError.__init__(self, code, ...)
    assert rows["rest_callback_invalid"]  # written as a JSON body
