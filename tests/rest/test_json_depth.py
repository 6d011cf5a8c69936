"""PHP's 512-level limit, checked member by member (#18).

A compact collection (an array of several items) is written item by item; an item is walked
only when its own text has more than 511 brackets, so collections of shallow items are never
walked, while one deep item anywhere is still refused with PHP's message.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import sitecache.rest.json_encoding as json_encoding
from sitecache.rest.json_encoding import encode_json
from tests.rest.test_hot_path import _outcome, _reference_encode, nested


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The limit of every exact walk of the data, in order."""
    seen: list[int] = []
    walk = json_encoding._too_deep

    def counting(data: Any, limit: int) -> bool:
        seen.append(limit)
        return walk(data, limit)

    monkeypatch.setattr(json_encoding, "_too_deep", counting)
    return seen


def member(brackets: int) -> dict[str, Any]:
    """A shallow object written with about ``brackets`` brackets."""
    return {"links": [{"href": str(number)} for number in range(brackets // 2)]}


def test_a_collection_of_shallow_items_is_not_walked(walks: list[int]) -> None:
    collection = [member(40) for _ in range(200)]  # 8,000 brackets in all
    assert json.loads(encode_json(collection)) == collection
    assert walks == []


def test_only_the_item_with_many_brackets_is_walked(walks: list[int]) -> None:
    answer = [member(10), member(1200), "text"]
    assert json.loads(encode_json(answer)) == answer
    assert walks == [511]


def test_an_object_with_many_brackets_is_walked_whole(walks: list[int]) -> None:
    answer = {"small": member(10), "wide": member(1200)}
    assert json.loads(encode_json(answer)) == answer
    assert walks == [512]


@pytest.mark.parametrize(
    ("depth", "refused"), [(511, False), (512, False), (513, True), (700, True)]
)
def test_one_deep_item_among_many_is_refused(depth: int, refused: bool) -> None:
    collection: list[Any] = [member(20) for _ in range(50)]
    collection.insert(25, nested(depth - 1))  # one level below the collection itself
    outcome = _outcome(encode_json, collection, False)
    assert outcome == _outcome(_reference_encode, collection, False)
    assert (outcome == ("error", "Maximum stack depth exceeded")) is refused


@pytest.mark.parametrize("pretty", [False, True])
def test_a_cycle_is_refused_as_before(pretty: bool) -> None:
    cyclic: list[Any] = [1]
    cyclic.append({"again": cyclic})
    assert _outcome(encode_json, cyclic, pretty) == _outcome(_reference_encode, cyclic, pretty)
    assert _outcome(encode_json, cyclic, pretty)[0] == "error"


@pytest.mark.parametrize(
    "answer",
    [
        {1: "int key", "b": [1.5, None, True]},
        {"é": "ünï", 'quote"': "back\\slash", "nl": "a\nb", "ctl": "\x00"},
        ("tuple", ["root"]),
        {"only": []},
        [[], {}, "", 0],
        [{"a": 1}, ["é\n"], 2.5, None, True],
    ],
)
def test_item_by_item_writes_the_bytes_json_dumps_writes(answer: Any) -> None:
    expected = json.dumps(answer, separators=(",", ":"), ensure_ascii=False)
    assert encode_json(answer) == expected
