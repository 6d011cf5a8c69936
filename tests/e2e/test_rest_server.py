"""The REST server end to end: a real gunicorn with 2 workers on a loopback port."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.e2e.server import LiveServer

PLUGINS = ["examples.greetings_plugin:activate"]


def body(response: Any) -> Any:
    return json.loads(response.body)


def test_the_index_lists_the_plugin_namespaces_and_routes(live_server: LiveServer) -> None:
    response = live_server.request("GET", "/site-json/")
    assert response.status == 200
    index = body(response)
    assert {"e2e/v1", "greetings/v1"} <= set(index["namespaces"])
    assert "/e2e/v1/echo" in index["routes"]
    assert index["routes"]["/e2e/v1/echo"]["endpoints"][0]["allow_batch"] == {"v1": True}
    assert index["_links"]["help"][0]["href"].startswith("https://")


def test_every_rest_response_carries_the_fixed_headers(live_server: LiveServer) -> None:
    response = live_server.request("GET", "/site-json/greetings/v1/hello")
    assert response.headers["content-type"] == "application/json; charset=UTF-8"
    assert response.headers["x-robots-tag"] == "noindex"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert (
        response.headers["access-control-expose-headers"] == "X-Site-Total, X-Site-TotalPages, Link"
    )
    assert response.headers["access-control-allow-headers"] == (
        "Authorization, X-Site-Nonce, Content-Disposition, Content-MD5, Content-Type"
    )
    assert response.headers["link"] == (
        f'<{live_server.base_url}/site-json/>; rel="https://api.w.org/"'
    )
    assert response.headers["allow"] == "GET"
    assert response.headers["vary"] == "Origin"


def test_the_example_plugin_validates_and_defaults_its_arguments(live_server: LiveServer) -> None:
    ok = live_server.request("GET", "/site-json/greetings/v1/hello?name=Ada&shout=1")
    assert (ok.status, body(ok)) == (200, {"message": "HELLO, ADA!", "name": "Ada"})
    bad = live_server.request("GET", "/site-json/greetings/v1/hello?name=&greeting=Yo")
    assert bad.status == 400
    error = body(bad)
    assert error["code"] == "rest_invalid_param"
    assert error["message"] == "Invalid parameter(s): name, greeting"
    assert error["data"]["params"] == {
        "name": "name must be at least 1 character long.",
        "greeting": "greeting is not one of Hello, Hi, and Howdy.",
    }


def test_an_anonymous_post_to_the_example_is_refused_with_401(live_server: LiveServer) -> None:
    response = live_server.request("POST", "/site-json/greetings/v1/hello")
    assert response.status == 401
    assert body(response)["code"] == "greetings_cannot_publish"
    assert response.headers["allow"] == "GET"


def test_json_bodies_are_validated_and_sanitized(live_server: LiveServer) -> None:
    headers = {"Content-Type": "application/json"}
    ok = live_server.request(
        "POST", "/site-json/e2e/v1/echo", '{"count": "3", "tags": "a,b"}', headers
    )
    assert (ok.status, body(ok)) == (200, {"count": 3, "tags": ["a", "b"]})
    missing = live_server.request("POST", "/site-json/e2e/v1/echo", "{}", headers)
    assert missing.status == 400
    assert body(missing)["data"] == {"status": 400, "params": ["count"]}
    malformed = live_server.request("POST", "/site-json/e2e/v1/echo", "{nope", headers)
    assert (malformed.status, body(malformed)["code"]) == (400, "rest_invalid_json")


def test_unknown_routes_and_methods_are_404_rest_no_route(live_server: LiveServer) -> None:
    for method, path in [("GET", "/site-json/e2e/v1/nope"), ("DELETE", "/site-json/e2e/v1/echo")]:
        response = live_server.request(method, path)
        assert response.status == 404
        assert body(response)["code"] == "rest_no_route"
        assert "allow" not in response.headers


def test_the_three_url_forms_reach_the_same_route(live_server: LiveServer) -> None:
    paths = [
        "/site-json/e2e/v1/items/3",
        "/index.php/site-json/e2e/v1/items/3",
        "/index.php?rest_route=/e2e/v1/items/3",
        "/?rest_route=/e2e/v1/items/3/",
    ]
    bodies = [body(live_server.request("GET", path)) for path in paths]
    assert all(item["id"] == 3 for item in bodies)


def test_options_describes_the_route_without_running_it(live_server: LiveServer) -> None:
    response = live_server.request("OPTIONS", "/site-json/e2e/v1/crash")
    assert response.status == 200
    assert body(response)["methods"] == ["GET"]
    unknown = live_server.request("OPTIONS", "/site-json/e2e/v1/unknown")
    assert (unknown.status, body(unknown)) == (200, {})


def test_head_sends_the_headers_without_a_body(live_server: LiveServer) -> None:
    response = live_server.request("HEAD", "/site-json/e2e/v1/items/2")
    assert response.status == 200
    assert response.body == b""
    assert response.headers["allow"] == "GET"


def test_cross_origin_requests_get_the_cors_headers(live_server: LiveServer) -> None:
    response = live_server.request(
        "GET", "/site-json/e2e/v1/items/2", headers={"Origin": "https://app.example"}
    )
    assert response.headers["access-control-allow-origin"] == "https://app.example"
    assert (
        response.headers["access-control-allow-methods"] == "OPTIONS, GET, POST, PUT, PATCH, DELETE"
    )
    assert response.headers["access-control-allow-credentials"] == "true"
    assert response.headers["vary"] == "Origin"


def test_context_embed_and_fields_shape_the_response(live_server: LiveServer) -> None:
    edit = body(live_server.request("GET", "/site-json/e2e/v1/items/2?context=edit"))
    assert edit["secret"] == "s"
    view = body(live_server.request("GET", "/site-json/e2e/v1/items/2?_embed"))
    assert "secret" not in view
    assert view["_embedded"]["up"] == [
        {
            "id": 1,
            "_links": {
                "self": [
                    {
                        "href": f"{live_server.base_url}/site-json/e2e/v1/items/1",
                        "targetHints": {"allow": ["GET"]},
                    }
                ]
            },
        }
    ]
    fields = body(live_server.request("GET", "/site-json/e2e/v1/items/2?_fields=title"))
    assert set(fields) == {"title", "_links"}


def test_jsonp_wraps_the_body_and_rejects_bad_callbacks(live_server: LiveServer) -> None:
    response = live_server.request("GET", "/site-json/e2e/v1/items/2?_jsonp=feed.cb")
    assert response.headers["content-type"] == "application/javascript; charset=UTF-8"
    assert response.body.startswith(b'/**/feed.cb({"id":2,')
    assert response.body.endswith(b"})")
    bad = live_server.request("GET", "/site-json/e2e/v1/items/2?_jsonp=alert(1)")
    assert (bad.status, body(bad)["code"]) == (400, "rest_callback_invalid")


def test_a_crashing_handler_answers_a_generic_500_and_logs_the_details(
    live_server: LiveServer,
) -> None:
    response = live_server.request("GET", "/site-json/e2e/v1/crash")
    assert response.status == 500
    assert body(response) == {
        "code": "internal_server_error",
        "message": "There has been a critical error on this website.",
        "data": {"status": 500},
    }
    assert b"secret internal detail" not in response.body
    assert "secret internal detail" in live_server.log()


def test_debug_mode_sends_the_notice_headers(live_server: LiveServer) -> None:
    response = live_server.request("GET", "/site-json/e2e/v1/notice")
    assert response.headers["x-site-doingitwrong"] == "e2e_notice (Called the e2e notice route.)"
    assert response.headers["x-site-deprecatedfunction"] == (
        "e2e_old_function (use e2e_new_function instead)"
    )


def test_an_admin_only_route_refuses_an_anonymous_caller_with_401(live_server: LiveServer) -> None:
    response = live_server.request("GET", "/site-json/e2e/v1/admin-only")
    assert (response.status, body(response)["code"]) == (401, "rest_forbidden")
    assert "allow" not in response.headers


def test_batch_requests_answer_207_with_one_envelope_each(live_server: LiveServer) -> None:
    payload = {
        "requests": [
            {"path": "/e2e/v1/echo", "body": {"count": 2}},
            {"path": "/e2e/v1/echo", "body": {"count": 99}},
            {"path": "/greetings/v1/hello"},
            {"path": "/e2e/v1/items/1"},
        ]
    }
    response = live_server.request(
        "POST", "/site-json/batch/v1", json.dumps(payload), {"Content-Type": "application/json"}
    )
    assert response.status == 207
    results = body(response)["responses"]
    assert [result["status"] for result in results] == [200, 400, 400, 404]
    assert results[0]["body"] == {"count": 2, "tags": []}
    assert results[1]["body"]["data"]["params"] == {
        "count": "count must be between 1 (inclusive) and 10 (inclusive)"
    }
    assert results[2]["body"]["code"] == "rest_batch_not_allowed"
    assert results[3]["body"]["code"] == "rest_no_route"  # batch requests default to POST


def test_both_workers_answer_many_concurrent_requests(live_server: LiveServer) -> None:
    def fetch(number: int) -> tuple[int, Any]:
        response = live_server.request("GET", f"/site-json/e2e/v1/items/{number}?_fields=id")
        return response.status, body(response)["id"]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(fetch, range(1, 65)))
    assert results == [(200, number) for number in range(1, 65)]


def test_the_front_page_points_at_the_api(live_server: LiveServer) -> None:
    response = live_server.request("GET", "/")
    assert response.status == 200
    assert (
        response.headers["link"] == f'<{live_server.base_url}/site-json/>; rel="https://api.w.org/"'
    )
    assert f'<link rel="https://api.w.org/" href="{live_server.base_url}/site-json/">'.encode() in (
        response.body
    )
