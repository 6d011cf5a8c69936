"""RestError: the one error value, its status and its JSON body."""

from __future__ import annotations

import pytest

from sitecache.errors import RestError


def test_first_code_message_and_data_are_what_the_client_sees() -> None:
    error = RestError("rest_invalid_param", "Invalid parameter(s): a", {"status": 400})
    assert (error.code, error.message, error.data) == (
        "rest_invalid_param",
        "Invalid parameter(s): a",
        {"status": 400},
    )
    assert error.status == 400
    assert error.to_dict() == {
        "code": "rest_invalid_param",
        "message": "Invalid parameter(s): a",
        "data": {"status": 400},
    }


def test_data_is_always_present_in_the_body_even_when_none() -> None:
    assert RestError("x", "y").to_dict() == {"code": "x", "message": "y", "data": None}


@pytest.mark.parametrize(
    ("data", "status"),
    [
        (None, 500),
        ({}, 500),
        ({"status": 403}, 403),
        ({"status": "409"}, 409),
        ({"status": "teapot"}, 500),
        ("not a dict", 500),
    ],
)
def test_status_comes_from_the_first_codes_data_else_500(data: object, status: int) -> None:
    assert RestError("code", "message", data).status == status


@pytest.mark.parametrize(
    ("entries", "status"),
    [
        pytest.param([{"status": 400}, {"param": "x"}], 400, id="later-entry-without-status"),
        pytest.param([{"status": 400}, "text", None], 400, id="later-scalar-entries"),
        pytest.param([{"status": 400}, {"status": 404}, {"a": 1}], 404, id="last-with-status"),
        pytest.param([{"a": 1}, {"b": 2}], 500, id="no-entry-has-one"),
    ],
)
def test_status_comes_from_the_last_data_entry_that_has_one(
    entries: list[object], status: int
) -> None:
    # WP_Error + rest_convert_error_to_response: every data entry of the first code is scanned.
    error = RestError("code", "message", entries[0])
    for entry in entries[1:]:
        error.add_data(entry)
    assert error.status == status


def test_statuses_of_other_codes_are_ignored() -> None:
    error = RestError("first", "no status").add("second", "has one", {"status": 409})
    assert error.status == 500


def test_additional_errors_list_later_messages_of_the_first_code_then_other_codes() -> None:
    error = RestError("a", "one", {"status": 400})
    error.add("b", "three", {"param": "x"})
    error.add("a", "two")
    assert error.to_dict() == {
        "code": "a",
        "message": "one",
        "data": {"status": 400},
        "additional_errors": [
            {"code": "a", "message": "two", "data": {"status": 400}},
            {"code": "b", "message": "three", "data": {"param": "x"}},
        ],
    }
    assert error.get_error_codes() == ["a", "b"]
    assert error.get_error_messages() == ["one", "two", "three"]
    assert error.get_error_messages("b") == ["three"]


def test_data_added_twice_keeps_the_newest_and_reports_the_earlier_as_additional_data() -> None:
    error = RestError("a", "one", {"status": 400})
    error.add_data({"status": 404})
    body = error.to_dict()
    assert body["data"] == {"status": 404}
    assert body["additional_data"] == [{"status": 400}]
    assert error.status == 404


def test_with_status_keeps_the_other_data_keys() -> None:
    error = RestError("incorrect_password", "Bad.", {"hint": "x"}).with_status(401)
    assert error.data == {"hint": "x", "status": 401}


def test_an_error_can_be_raised_and_caught_as_an_exception() -> None:
    with pytest.raises(RestError) as caught:
        raise RestError("rest_forbidden", "Sorry, you are not allowed to do that.", {"status": 403})
    assert caught.value.status == 403
    assert str(caught.value) == "Sorry, you are not allowed to do that."
