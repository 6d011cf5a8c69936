"""`RestRequest` on its own: parameter sources, headers, content types and argument checks.

Rules from WordPress's request: parameters are read JSON > POST (form body) > GET
(query) > URL > defaults, JSON only under a JSON media type (for any method), form bodies only
for POST, PUT, PATCH and DELETE; `has_valid_params` reports malformed JSON, then missing
required arguments, then failing ``validate_callback``s, then the route-level callback;
`sanitize_params` rewrites every source in place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from sitecache.errors import RestError
from sitecache.rest import RestRequest, sanitize_request_arg, validate_request_arg

SOURCES = ("JSON", "POST", "GET", "URL", "defaults")


def request_with(
    method: str = "POST",
    present: tuple[str, ...] = SOURCES,
    key: str = "key",
    attributes: Mapping[str, Any] | None = None,
) -> RestRequest:
    """A JSON request holding ``key`` in every source named in ``present``, valued by source."""
    request = RestRequest(method, "/test-ns/echo", attributes)
    request.set_header("Content-Type", "application/json")
    if "JSON" in present:
        request.set_body(json.dumps({key: "JSON"}))
    if "POST" in present:
        request.set_body_params({key: "POST"})
    if "GET" in present:
        request.set_query_params({key: "GET"})
    if "URL" in present:
        request.set_url_params({key: "URL"})
    if "defaults" in present:
        request.set_default_params({key: "defaults"})
    return request


def error_of(result: object) -> RestError:
    """``result`` as a `RestError`, failing the test when it is anything else."""
    assert isinstance(result, RestError), f"expected a RestError, got {result!r}"
    return result


def never_called(value: Any, request: RestRequest, key: str) -> Any:
    raise AssertionError(f"callback called for {key}={value!r}")


# ---------------------------------------------------------------------- precedence
@pytest.mark.parametrize(
    ("present", "winner"),
    [
        (("JSON", "POST", "GET", "URL", "defaults"), "JSON"),
        (("POST", "GET", "URL", "defaults"), "POST"),
        (("GET", "URL", "defaults"), "GET"),
        (("URL", "defaults"), "URL"),
        (("defaults",), "defaults"),
        (("JSON", "defaults"), "JSON"),
        (("POST", "URL"), "POST"),
        (("GET", "defaults"), "GET"),
    ],
)
def test_parameters_are_read_json_then_post_then_get_then_url_then_defaults(
    present: tuple[str, ...], winner: str
) -> None:
    request = request_with("POST", present)

    assert request.get_param("key") == winner
    assert request.get_params() == {"key": winner}


def test_get_params_merges_every_source_with_higher_priority_winning() -> None:
    request = RestRequest("POST", "/test-ns/echo")
    request.set_header("Content-Type", "application/json")
    request.set_body('{"shared": "JSON", "json_only": 1}')
    request.set_body_params({"shared": "POST", "post_only": 2})
    request.set_query_params({"shared": "GET", "get_only": 3})
    request.set_url_params({"shared": "URL", "url_only": 4})
    request.set_default_params({"shared": "defaults", "default_only": 5})

    assert request.get_params() == {
        "shared": "JSON",
        "json_only": 1,
        "post_only": 2,
        "get_only": 3,
        "url_only": 4,
        "default_only": 5,
    }


@pytest.mark.parametrize(
    ("method", "winner"),
    [
        ("POST", "POST"),
        ("PUT", "POST"),
        ("PATCH", "POST"),
        ("DELETE", "POST"),
        ("GET", "GET"),
        ("HEAD", "GET"),
        ("OPTIONS", "GET"),
    ],
)
def test_body_parameters_count_only_for_post_put_patch_and_delete(method: str, winner: str) -> None:
    request = RestRequest(method, "/test-ns/echo")
    request.set_body_params({"key": "POST"})
    request.set_query_params({"key": "GET"})

    assert request.get_param("key") == winner


@pytest.mark.parametrize(
    ("content_type", "is_json"),
    [
        ("application/json", True),
        ("APPLICATION/JSON", True),
        ("Application/Json; charset=UTF-8", True),
        ('application/ld+json; profile="https://www.w3.org/ns/activitystreams"', True),
        ("application/activity+json", True),
        ("application/vnd.api+json", True),
        ("application/json+oembed", True),
        ("application/nojson", False),
        ("application/no.json", False),
        ("application/jsonp", False),
        ("text/json", False),
        ("text/plain", False),
        ("application/x-www-form-urlencoded", False),
        (None, False),
    ],
)
def test_a_json_body_is_read_only_under_a_json_media_type(
    content_type: str | None, is_json: bool
) -> None:
    request = RestRequest("POST", "/test-ns/echo")
    if content_type is not None:
        request.set_header("Content-Type", content_type)
    request.set_body('{"key": "JSON"}')
    request.set_query_params({"key": "GET"})

    assert request.get_param("key") == ("JSON" if is_json else "GET")


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_a_json_body_counts_for_any_method_including_get(method: str) -> None:
    request = request_with(method, ("JSON", "GET"))

    assert request.get_param("key") == "JSON"


def test_a_json_null_falls_through_to_the_next_source() -> None:
    request = RestRequest("POST", "/test-ns/echo")
    request.set_header("Content-Type", "application/json")
    request.set_body('{"key": null}')
    request.set_query_params({"key": "GET"})

    assert request.get_param("key") == "GET"
    assert request.has_param("key")


def test_invalid_json_is_ignored_when_reading_parameters() -> None:
    request = RestRequest("POST", "/test-ns/echo")
    request.set_header("Content-Type", "application/json")
    request.set_body('{"key": ')
    request.set_query_params({"key": "GET"})

    assert request.get_param("key") == "GET"


def test_setting_a_new_body_parses_the_json_again() -> None:
    request = request_with("POST", ("JSON",))
    assert request.get_param("key") == "JSON"

    request.set_body('{"key": "replaced"}')

    assert request.get_param("key") == "replaced"


# ---------------------------------------------------------------------- form bodies
@pytest.mark.parametrize("method", ["PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; charset=UTF-8",
        "Application/X-WWW-Form-Urlencoded",
    ],
)
def test_a_form_body_is_parsed_for_put_patch_and_delete(
    method: str, content_type: str | None
) -> None:
    request = RestRequest(method, "/test-ns/echo")
    if content_type is not None:
        request.set_header("Content-Type", content_type)
    request.set_body("key=form&tags[]=a&tags[]=b")
    request.set_query_params({"key": "GET"})

    assert request.get_param("key") == "form"
    assert request.get_param("tags") == ["a", "b"]


@pytest.mark.parametrize("content_type", ["text/plain", "multipart/form-data; boundary=x"])
def test_a_body_of_another_media_type_is_not_parsed_as_a_form(content_type: str) -> None:
    request = RestRequest("PUT", "/test-ns/echo")
    request.set_header("Content-Type", content_type)
    request.set_body("key=form")

    assert request.get_param("key") is None


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_raw_form_body_is_not_parsed_for_get_or_post(method: str) -> None:
    # POST form bodies come from the server's own form parsing (set_body_params), never
    # from the raw body; a GET form body is ignored.
    request = RestRequest(method, "/test-ns/echo")
    request.set_body("key=form")

    assert request.get_param("key") is None


def test_explicitly_set_body_params_win_over_a_parsed_form_body() -> None:
    request = RestRequest("PUT", "/test-ns/echo")
    request.set_body("key=parsed&other=parsed")
    request.set_body_params({"key": "explicit"})

    assert request.get_param("key") == "explicit"
    assert request.get_param("other") == "parsed"


# ---------------------------------------------------------------------- has_param, set_param
@pytest.mark.parametrize(
    ("setup", "has", "value"),
    [
        pytest.param({"json": '{"key": null}'}, True, None, id="json-null"),
        pytest.param({"json": '{"other": 1}'}, False, None, id="absent"),
        pytest.param({"query": {"key": ""}}, True, "", id="empty-string"),
        pytest.param({"query": {"key": None}}, True, None, id="query-none"),
        pytest.param({"url": {"key": "0"}}, True, "0", id="url-zero-string"),
        pytest.param({"defaults": {"key": False}}, True, False, id="default-false"),
    ],
)
def test_has_param_counts_null_values_where_get_param_does_not(
    setup: dict[str, Any], has: bool, value: Any
) -> None:
    request = RestRequest("POST", "/test-ns/echo")
    request.set_header("Content-Type", "application/json")
    if "json" in setup:
        request.set_body(setup["json"])
    request.set_query_params(setup.get("query", {}))
    request.set_url_params(setup.get("url", {}))
    request.set_default_params(setup.get("defaults", {}))

    assert request.has_param("key") is has
    assert request.get_param("key") == value


def test_has_param_ignores_sources_the_method_does_not_read() -> None:
    request = RestRequest("GET", "/test-ns/echo")
    request.set_body_params({"key": "POST"})

    assert request.has_param("key") is False


def test_set_param_overwrites_the_key_in_every_source_that_holds_it_but_defaults() -> None:
    request = request_with("POST", ("JSON", "GET", "URL", "defaults"))

    request.set_param("key", "new")

    assert request.get_json_params() == {"key": "new"}
    assert request.get_query_params() == {"key": "new"}
    assert request.get_url_params() == {"key": "new"}
    assert request.get_default_params() == {"key": "defaults"}
    assert request.get_body_params() == {}


@pytest.mark.parametrize(
    ("method", "content_type", "source"),
    [
        ("GET", None, "GET"),
        ("POST", None, "POST"),
        ("POST", "application/x-www-form-urlencoded", "POST"),
        ("PUT", None, "POST"),
        ("POST", "application/json", "JSON"),
        ("GET", "application/json", "JSON"),
    ],
)
def test_set_param_creates_a_new_key_in_the_highest_priority_source(
    method: str, content_type: str | None, source: str
) -> None:
    request = RestRequest(method, "/test-ns/echo")
    if content_type is not None:
        request.set_header("Content-Type", content_type)  # the JSON body stays empty
    request.set_default_params({"key": "defaults"})

    request.set_param("key", "new")

    sources = {
        "JSON": request.get_json_params() or {},
        "POST": request.get_body_params(),
        "GET": request.get_query_params(),
    }
    assert sources[source] == {"key": "new"}
    assert [name for name, params in sources.items() if params] == [source]
    assert request.get_default_params() == {"key": "defaults"}
    assert request.get_param("key") == "new"


# ---------------------------------------------------------------------- headers
@pytest.mark.parametrize(
    ("set_as", "get_as"),
    [
        ("Test-Header", "test_header"),
        ("TEST_HEADER", "Test-Header"),
        ("test-header", "TEST-HEADER"),
        ("Test_Header", "test-header"),
    ],
)
def test_header_names_are_canonicalized_lowercase_with_underscores(
    set_as: str, get_as: str
) -> None:
    request = RestRequest()
    request.set_header(set_as, "value")

    assert request.get_header(get_as) == "value"
    assert request.get_headers() == {"test_header": ["value"]}


def test_header_values_are_lists_joined_with_a_bare_comma() -> None:
    request = RestRequest()
    request.set_header("Accept", ["text/html", "application/json"])
    request.add_header("accept", "text/plain")

    assert request.get_header("Accept") == "text/html,application/json,text/plain"
    assert request.get_headers() == {"accept": ["text/html", "application/json", "text/plain"]}


def test_set_header_replaces_earlier_values() -> None:
    request = RestRequest()
    request.set_header("X-Thing", ["a", "b"])

    request.set_header("x_thing", "c")

    assert request.get_header("X-Thing") == "c"


def test_a_missing_header_is_none() -> None:
    assert RestRequest().get_header("X-Missing") is None


@pytest.mark.parametrize(
    ("header", "parsed"),
    [
        (
            "application/json",
            {
                "value": "application/json",
                "type": "application",
                "subtype": "json",
                "parameters": "",
            },
        ),
        (
            "Text/HTML; Charset=UTF-8",
            {
                "value": "text/html",
                "type": "text",
                "subtype": "html",
                "parameters": "Charset=UTF-8",
            },
        ),
        (
            "multipart/form-data; boundary=AbC; x=1",
            {
                "value": "multipart/form-data",
                "type": "multipart",
                "subtype": "form-data",
                "parameters": "boundary=AbC; x=1",
            },
        ),
        (
            "  application/ld+json  ;  profile=x ",
            {
                "value": "application/ld+json",
                "type": "application",
                "subtype": "ld+json",
                "parameters": "profile=x",
            },
        ),
        (
            ";text/html",
            {"value": ";text/html", "type": ";text", "subtype": "html", "parameters": ""},
        ),
        ("text", None),
        ("json; charset=UTF-8", None),
        ("", None),
    ],
)
def test_the_content_type_is_split_into_value_type_subtype_and_parameters(
    header: str, parsed: dict[str, str] | None
) -> None:
    request = RestRequest()
    request.set_header("Content-Type", header)

    assert request.get_content_type() == parsed


def test_a_request_without_content_type_has_none() -> None:
    assert RestRequest().get_content_type() is None


# ---------------------------------------------------------------------- has_valid_params: JSON
@pytest.mark.parametrize("method", ["POST", "GET", "PUT"])
def test_invalid_json_makes_the_request_invalid_with_the_decoder_error(method: str) -> None:
    request = RestRequest(method, "/test-ns/echo")
    request.set_header("Content-Type", "application/json; charset=UTF-8")
    request.set_body('{"key": "value",}')

    error = error_of(request.has_valid_params())

    assert error.code == "rest_invalid_json"
    assert error.message == "Invalid JSON body passed."
    assert error.data == {"status": 400, "json_error_code": 4, "json_error_message": "Syntax error"}


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("text/plain", "{not json"),
        (None, "{not json"),
        ("application/json", ""),
        ("application/json", "0"),
        ("application/json", "null"),
        ("application/json", "[1, 2]"),
    ],
)
def test_a_body_that_is_not_json_or_is_empty_passes_validation(
    content_type: str | None, body: str
) -> None:
    request = RestRequest("POST", "/test-ns/echo")
    if content_type is not None:
        request.set_header("Content-Type", content_type)
    request.set_body(body)

    assert request.has_valid_params() is True


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'{"key": "caf\xe9"}', id="latin-1-byte-in-a-string"),
        pytest.param(b'["\xff\xfe"]', id="invalid-bytes-in-a-list-item"),
        pytest.param(b'{"\xc3": 1}', id="truncated-sequence-in-a-key"),
    ],
)
def test_invalid_utf8_in_a_json_body_is_php_json_error_5(body: bytes) -> None:
    # json_decode: JSON_ERROR_UTF8 (5), "Malformed UTF-8 characters, possibly incorrectly encoded".
    request = RestRequest("POST", "/test-ns/echo")
    request.set_header("Content-Type", "application/json")
    request.set_body(body)

    error = error_of(request.has_valid_params())

    assert error.code == "rest_invalid_json"
    assert error.data == {
        "status": 400,
        "json_error_code": 5,
        "json_error_message": "Malformed UTF-8 characters, possibly incorrectly encoded",
    }
    assert request.get_json_params() is None


def test_invalid_utf8_outside_a_string_is_a_syntax_error() -> None:
    request = RestRequest("POST", "/test-ns/echo")
    request.set_header("Content-Type", "application/json")
    request.set_body(b'{"key": 1}\xff')

    assert error_of(request.has_valid_params()).data["json_error_code"] == 4


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param("123", 123, id="number"),
        pytest.param('"hello"', "hello", id="string"),
        pytest.param("true", True, id="true"),
        pytest.param("[1, 2]", [1, 2], id="list"),
        pytest.param("{}", {}, id="empty-object"),
        pytest.param("[]", [], id="empty-list"),
        pytest.param('{"a": 1}', {"a": 1}, id="object"),
        pytest.param("null", None, id="null"),
        pytest.param("0", None, id="zero-is-an-empty-body"),
        pytest.param("", None, id="empty"),
        pytest.param("{", None, id="invalid"),
    ],
)
def test_get_json_params_returns_the_decoded_body_as_it_is(body: str, expected: Any) -> None:
    # WP_REST_Request::get_json_params returns json_decode's result unchanged.
    request = RestRequest("POST", "/test-ns/echo")
    request.set_header("Content-Type", "application/json")
    request.set_body(body)

    result = request.get_json_params()

    assert result == expected
    assert type(result) is type(expected)


def test_a_scalar_json_body_still_merges_into_the_parameters_as_key_0() -> None:
    request = RestRequest("POST", "/test-ns/echo")
    request.set_header("Content-Type", "application/json")
    request.set_body("123")

    assert request.get_json_params() == 123
    assert request.get_params() == {"0": 123}


def test_get_json_params_is_none_without_a_json_content_type() -> None:
    request = RestRequest("POST", "/test-ns/echo")
    request.set_body('{"a": 1}')

    assert request.get_json_params() is None


def test_the_json_error_is_reported_before_missing_parameters() -> None:
    request = RestRequest("POST", "/test-ns/echo", {"args": {"a": {"required": True}}})
    request.set_header("Content-Type", "application/json")
    request.set_body("{")

    assert error_of(request.has_valid_params()).code == "rest_invalid_json"


# ---------------------------------------------------------------------- has_valid_params: required
def test_missing_required_parameters_are_listed_in_declaration_order() -> None:
    args = {
        "b": {"required": True},
        "optional": {},
        "a": {"required": True},
        "given": {"required": True},
    }
    request = RestRequest("GET", "/test-ns/echo", {"args": args})
    request.set_query_params({"given": "yes"})

    error = error_of(request.has_valid_params())

    assert error.code == "rest_missing_callback_param"
    assert error.message == "Missing parameter(s): b, a"
    assert error.data == {"status": 400, "params": ["b", "a"]}


@pytest.mark.parametrize(
    ("required", "setup", "valid"),
    [
        pytest.param(True, {}, False, id="absent"),
        pytest.param(True, {"query": {"a": ""}}, True, id="empty-string-is-present"),
        pytest.param(True, {"query": {"a": "0"}}, True, id="zero-string-is-present"),
        pytest.param(True, {"query": {"a": None}}, False, id="none-is-missing"),
        pytest.param(True, {"json": '{"a": null}'}, False, id="json-null-is-missing"),
        pytest.param(True, {"defaults": {"a": "d"}}, True, id="default-counts"),
        pytest.param(True, {"url": {"a": "1"}}, True, id="url-param-counts"),
        pytest.param(1, {}, True, id="one-is-not-required"),
        pytest.param("yes", {}, True, id="yes-is-not-required"),
        pytest.param("true", {}, True, id="true-string-is-not-required"),
        pytest.param(False, {}, True, id="false"),
    ],
)
def test_only_required_true_makes_an_absent_or_null_parameter_missing(
    required: Any, setup: dict[str, Any], valid: bool
) -> None:
    request = RestRequest("POST", "/test-ns/echo", {"args": {"a": {"required": required}}})
    request.set_header("Content-Type", "application/json")
    request.set_body(setup.get("json", ""))
    request.set_query_params(setup.get("query", {}))
    request.set_url_params(setup.get("url", {}))
    request.set_default_params(setup.get("defaults", {}))

    result = request.has_valid_params()

    if valid:
        assert result is True
    else:
        assert error_of(result).code == "rest_missing_callback_param"


def test_missing_parameters_are_reported_before_any_validate_callback_runs() -> None:
    args = {
        "a": {"required": True},
        "b": {"validate_callback": never_called},
    }
    request = RestRequest("GET", "/test-ns/echo", {"args": args})
    request.set_query_params({"b": "x"})

    assert error_of(request.has_valid_params()).code == "rest_missing_callback_param"


# ---------------------------------------------------------------------- has_valid_params: callbacks
def test_a_validate_callback_returning_false_gives_invalid_parameter_with_empty_details() -> None:
    args = {"a": {"validate_callback": lambda value, request, key: False}}
    request = RestRequest("GET", "/test-ns/echo", {"args": args})
    request.set_query_params({"a": "x"})

    error = error_of(request.has_valid_params())

    assert error.code == "rest_invalid_param"
    assert error.message == "Invalid parameter(s): a"
    assert error.data == {"status": 400, "params": {"a": "Invalid parameter."}, "details": {}}
    assert isinstance(error.data["details"], dict)


def test_a_validate_callback_error_gives_its_joined_messages_and_a_details_entry() -> None:
    failure = RestError("custom_code", "First problem.", {"status": 400, "extra": 1})
    failure.add("second_code", "Second problem.")
    args = {"a": {"validate_callback": lambda value, request, key: failure}}
    request = RestRequest("GET", "/test-ns/echo", {"args": args})
    request.set_query_params({"a": "x"})

    error = error_of(request.has_valid_params())

    assert error.code == "rest_invalid_param"
    assert error.data["params"] == {"a": "First problem. Second problem."}
    assert error.data["details"] == {
        "a": {
            "code": "custom_code",
            "message": "First problem.",
            "data": {"status": 400, "extra": 1},
            "additional_errors": [
                {"code": "second_code", "message": "Second problem.", "data": None}
            ],
        }
    }


def test_a_single_validate_callback_error_details_are_code_message_and_data() -> None:
    args = {"a": {"validate_callback": lambda value, request, key: RestError("bad", "Bad a.")}}
    request = RestRequest("GET", "/test-ns/echo", {"args": args})
    request.set_query_params({"a": "x"})

    error = error_of(request.has_valid_params())

    assert error.data["details"] == {"a": {"code": "bad", "message": "Bad a.", "data": None}}


def test_every_failing_parameter_is_reported_in_declaration_order() -> None:
    args = {
        "zeta": {"validate_callback": lambda value, request, key: RestError("z", "Bad zeta.")},
        "fine": {"validate_callback": lambda value, request, key: True},
        "alpha": {"validate_callback": lambda value, request, key: False},
    }
    request = RestRequest("GET", "/test-ns/echo", {"args": args})
    request.set_query_params({"alpha": "1", "fine": "2", "zeta": "3"})

    error = error_of(request.has_valid_params())

    assert error.message == "Invalid parameter(s): zeta, alpha"
    assert error.data["params"] == {"zeta": "Bad zeta.", "alpha": "Invalid parameter."}
    assert list(error.data["details"]) == ["zeta"]


def test_a_validate_callback_receives_the_value_the_request_and_the_name() -> None:
    calls: list[tuple[Any, RestRequest, str]] = []

    def validate(value: Any, request: RestRequest, key: str) -> bool:
        calls.append((value, request, key))
        return True

    request = RestRequest("GET", "/test-ns/echo", {"args": {"a": {"validate_callback": validate}}})
    request.set_query_params({"a": "x"})

    assert request.has_valid_params() is True
    assert calls == [("x", request, "a")]


@pytest.mark.parametrize("query", [{}, {"a": None}])
def test_a_validate_callback_is_not_run_for_an_absent_or_null_parameter(
    query: dict[str, Any],
) -> None:
    request = RestRequest(
        "GET", "/test-ns/echo", {"args": {"a": {"validate_callback": never_called}}}
    )
    request.set_query_params(query)

    assert request.has_valid_params() is True


def test_a_validate_callback_sees_a_default_value() -> None:
    seen: list[Any] = []

    def validate(value: Any, request: RestRequest, key: str) -> bool:
        seen.append(value)
        return True

    args = {"a": {"default": "d", "validate_callback": validate}}
    request = RestRequest("GET", "/test-ns/echo", {"args": args})
    request.set_default_params({"a": "d"})

    assert request.has_valid_params() is True
    assert seen == ["d"]


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [
        pytest.param(True, True, id="true"),
        pytest.param(
            False,
            ("rest_invalid_params", "Invalid parameters.", {"status": 400}),
            id="false",
        ),
        pytest.param(
            RestError("route_says_no", "Route says no.", {"status": 409}),
            ("route_says_no", "Route says no.", {"status": 409}),
            id="error-as-is",
        ),
    ],
)
def test_the_route_level_validate_callback_runs_last(outcome: Any, expected: Any) -> None:
    calls: list[RestRequest] = []

    def validate(request: RestRequest) -> Any:
        calls.append(request)
        return outcome

    request = RestRequest("GET", "/test-ns/echo", {"args": {}, "validate_callback": validate})

    result = request.has_valid_params()

    assert calls == [request]
    if expected is True:
        assert result is True
    else:
        error = error_of(result)
        assert (error.code, error.message, error.data) == expected
        if isinstance(outcome, RestError):
            assert error is outcome


def test_the_route_level_validate_callback_is_skipped_when_a_parameter_failed() -> None:
    attributes = {
        "args": {"a": {"validate_callback": lambda value, request, key: False}},
        "validate_callback": lambda request: pytest.fail("route-level callback ran"),
    }
    request = RestRequest("GET", "/test-ns/echo", attributes)
    request.set_query_params({"a": "x"})

    assert error_of(request.has_valid_params()).code == "rest_invalid_param"


# ---------------------------------------------------------------------- sanitize_params
def test_sanitize_params_rewrites_the_parameter_in_every_source() -> None:
    args = {"key": {"sanitize_callback": lambda value, request, key: f"clean-{value}"}}
    request = request_with("POST", SOURCES, attributes={"args": args})

    assert request.sanitize_params() is True

    assert request.get_json_params() == {"key": "clean-JSON"}
    assert request.get_body_params() == {"key": "clean-POST"}
    assert request.get_query_params() == {"key": "clean-GET"}
    assert request.get_url_params() == {"key": "clean-URL"}
    assert request.get_default_params() == {"key": "clean-defaults"}


def test_sanitize_params_leaves_parameters_without_a_definition_alone() -> None:
    args = {"known": {"sanitize_callback": lambda value, request, key: "clean"}}
    request = RestRequest("GET", "/test-ns/echo", {"args": args})
    request.set_query_params({"known": "raw", "unknown": "raw"})

    assert request.sanitize_params() is True
    assert request.get_query_params() == {"known": "clean", "unknown": "raw"}


@pytest.mark.parametrize(
    ("definition", "raw", "clean"),
    [
        pytest.param({"type": "integer"}, "5", 5, id="integer"),
        pytest.param({"type": "number"}, "2.5", 2.5, id="number"),
        pytest.param({"type": "boolean"}, "1", True, id="boolean-one"),
        pytest.param({"type": "boolean"}, "false", False, id="boolean-false"),
        pytest.param({"type": "array", "items": {"type": "integer"}}, "1,2", [1, 2], id="array"),
        pytest.param({"type": "string"}, "text", "text", id="string"),
        pytest.param({"description": "no type"}, "5", "5", id="no-type-no-callback"),
        pytest.param({"type": "integer", "sanitize_callback": None}, "5", "5", id="none-disables"),
        pytest.param(
            {"type": "integer", "sanitize_callback": False}, "5", "5", id="false-disables"
        ),
    ],
)
def test_a_typed_argument_without_sanitize_callback_is_parsed_by_its_schema(
    definition: dict[str, Any], raw: str, clean: Any
) -> None:
    request = RestRequest("GET", "/test-ns/echo", {"args": {"value": definition}})
    request.set_query_params({"value": raw})

    assert request.sanitize_params() is True
    assert request.get_param("value") == clean


def test_a_typed_argument_that_fails_its_schema_makes_sanitize_params_fail() -> None:
    args = {
        "count": {"type": "integer"},
        "status": {"type": "string", "enum": ["draft", "publish"]},
    }
    request = RestRequest("GET", "/test-ns/echo", {"args": args})
    request.set_query_params({"count": "abc", "status": "pending"})

    error = error_of(request.sanitize_params())

    assert error.code == "rest_invalid_param"
    assert error.message == "Invalid parameter(s): count, status"
    assert error.data["status"] == 400
    assert error.data["params"] == {
        "count": "count is not of type integer.",
        "status": "status is not one of draft and publish.",
    }
    assert error.data["details"]["count"]["code"] == "rest_invalid_type"
    assert error.data["details"]["status"]["code"] == "rest_invalid_param"


def test_an_explicit_none_sanitize_callback_lets_an_invalid_value_through() -> None:
    request = RestRequest(
        "GET", "/test-ns/echo", {"args": {"count": {"type": "integer", "sanitize_callback": None}}}
    )
    request.set_query_params({"count": "abc"})

    assert request.sanitize_params() is True
    assert request.get_param("count") == "abc"


def test_a_json_number_given_as_a_string_is_coerced_by_the_schema() -> None:
    request = RestRequest("POST", "/test-ns/echo", {"args": {"count": {"type": "integer"}}})
    request.set_header("Content-Type", "application/json")
    request.set_body('{"count": "7"}')

    assert request.sanitize_params() is True
    assert request.get_param("count") == 7


def test_sanitize_params_without_arguments_is_true_and_changes_nothing() -> None:
    request = RestRequest("GET", "/test-ns/echo", {"args": {}})
    request.set_query_params({"count": "5"})

    assert request.sanitize_params() is True
    assert request.get_query_params() == {"count": "5"}


def test_a_sanitize_callback_receives_the_value_the_request_and_the_name() -> None:
    calls: list[tuple[Any, RestRequest, str]] = []

    def sanitize(value: Any, request: RestRequest, key: str) -> Any:
        calls.append((value, request, key))
        return value

    request = RestRequest("GET", "/test-ns/echo", {"args": {"a": {"sanitize_callback": sanitize}}})
    request.set_query_params({"a": "x"})

    assert request.sanitize_params() is True
    assert calls == [("x", request, "a")]


# ---------------------------------------------------------------------- default callbacks
def test_validate_request_arg_applies_the_arguments_own_schema() -> None:
    request = RestRequest(
        "GET", "/test-ns/echo", {"args": {"count": {"type": "integer", "minimum": 1}}}
    )

    assert validate_request_arg(3, request, "count") is True
    too_small = error_of(validate_request_arg(0, request, "count"))
    assert too_small.code == "rest_invalid_param"
    assert too_small.message == "count must be greater than or equal to 1"
    assert error_of(validate_request_arg("x", request, "count")).code == "rest_invalid_type"


def test_sanitize_request_arg_applies_the_arguments_own_schema() -> None:
    request = RestRequest("GET", "/test-ns/echo", {"args": {"count": {"type": "integer"}}})

    assert sanitize_request_arg("3", request, "count") == 3


def test_the_default_callbacks_leave_an_undeclared_parameter_alone() -> None:
    request = RestRequest("GET", "/test-ns/echo", {"args": {}})

    assert validate_request_arg("anything", request, "unknown") is True
    assert sanitize_request_arg("anything", request, "unknown") == "anything"


def test_the_default_callbacks_work_as_an_arguments_callbacks() -> None:
    definition = {
        "type": "integer",
        "maximum": 10,
        "validate_callback": validate_request_arg,
        "sanitize_callback": sanitize_request_arg,
    }
    good = RestRequest("GET", "/test-ns/echo", {"args": {"n": definition}})
    good.set_query_params({"n": "4"})
    bad = RestRequest("GET", "/test-ns/echo", {"args": {"n": definition}})
    bad.set_query_params({"n": "40"})

    assert good.has_valid_params() is True
    assert good.sanitize_params() is True
    assert good.get_param("n") == 4
    assert error_of(bad.has_valid_params()).data["params"] == {
        "n": "n must be less than or equal to 10"
    }
