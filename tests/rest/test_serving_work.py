"""Work the REST server skips per request when it cannot change the answer (#18).

A request that cannot have a body is not read; CURIEs are asked for only when a response has
links (as WordPress's ``get_compact_response_links``); case-insensitive header lookups find the
first matching name, as before.
"""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import pytest
from werkzeug.test import Client, EnvironBuilder

from sitecache.app import App
from sitecache.rest import RestRequest, RestResponse, RestServer, return_true
from sitecache.rest.response import find_header
from tests.rest.support import body_of


def register_body_echo(server: RestServer) -> None:
    server.register_rest_route(
        "serving/v1",
        "/body",
        {
            "methods": ["GET", "POST"],
            "callback": lambda request: {"body": request.get_body().decode()},
            "permission_callback": return_true,
        },
    )


def answer(app: App, **environ: Any) -> Any:
    builder = EnvironBuilder(path="/site-json/serving/v1/body")
    built = builder.get_environ()
    built.update(environ)
    started: list[str] = []
    chunks = app(built, lambda status, headers, exc_info=None: started.append(status))
    return started[0], b"".join(chunks)


@pytest.mark.parametrize(
    ("protocol", "terminated", "read"),
    [("HTTP/1.1", True, ""), ("HTTP/1.0", False, ""), ("HTTP/2", True, '{"a":1}')],
)
def test_a_body_without_length_or_chunks_is_read_only_beyond_http_1(
    app: App, protocol: str, terminated: bool, read: str
) -> None:
    app.hooks.add_action("rest_api_init", register_body_echo)
    status, body = answer(
        app,
        REQUEST_METHOD="POST",
        SERVER_PROTOCOL=protocol,
        CONTENT_TYPE="application/json",
        **{"wsgi.input": io.BytesIO(b'{"a":1}'), "wsgi.input_terminated": terminated},
    )
    assert status.startswith("200")
    assert json.loads(body) == {"body": read}


@pytest.mark.parametrize(
    "framing",
    [{"CONTENT_LENGTH": "7"}, {"HTTP_TRANSFER_ENCODING": "chunked"}],
)
def test_a_framed_body_is_read(app: App, framing: dict[str, str]) -> None:
    app.hooks.add_action("rest_api_init", register_body_echo)
    # A server hands a chunked body over de-chunked, with wsgi.input_terminated.
    stream = {"wsgi.input": io.BytesIO(b'{"a":1}'), "wsgi.input_terminated": True}
    status, body = answer(app, REQUEST_METHOD="POST", **framing, **stream)
    assert status.startswith("200")
    assert json.loads(body) == {"body": '{"a":1}'}


def test_curies_are_asked_for_only_when_a_response_has_links(app: App, client: Client) -> None:
    asked: list[int] = []

    def curies(value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        asked.append(1)
        return value

    def linked(request: RestRequest) -> RestResponse:
        response = RestResponse({"id": 1})
        response.add_link("https://api.w.org/term", "http://example.org/t")
        return response

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "serving/v1",
            "/linked",
            {"methods": "GET", "callback": linked, "permission_callback": return_true},
        )
        register_body_echo(server)

    app.hooks.add_action("rest_api_init", register)
    app.hooks.add_filter("rest_response_link_curies", curies)
    client.get("/site-json/serving/v1/body")
    assert asked == []
    assert body_of(client.get("/site-json/serving/v1/linked"))["_links"]["curies"]
    assert asked == [1]


@pytest.mark.parametrize(
    ("headers", "name", "found"),
    [
        ({"Vary": "a"}, "vary", "Vary"),
        ({"vary": "a", "Vary": "b"}, "Vary", "vary"),
        ({"X-One": "1"}, "Vary", None),
        ({}, "Vary", None),
    ],
)
def test_find_header_gives_the_first_name_in_any_case(
    headers: dict[str, str], name: str, found: str | None
) -> None:
    assert find_header(headers, name) == found


def test_vary_origin_joins_an_existing_vary_in_its_own_case(app: App, client: Client) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "serving/v1",
            "/vary",
            {
                "methods": "GET",
                "callback": lambda r: RestResponse({}, 200, {"vary": "Accept"}),
                "permission_callback": return_true,
            },
        )

    app.hooks.add_action("rest_api_init", register)
    response = client.get("/site-json/serving/v1/vary")
    assert response.headers.getlist("Vary") == ["Accept, Origin"]


def test_the_api_root_link_follows_each_host_and_scheme(app_factory: Any) -> None:
    client = Client(app_factory(site_url=None))
    for base in ("http://one.example", "https://two.example:8443", "http://one.example"):
        link = client.get("/site-json/nowhere", base_url=base).headers["Link"]
        assert link == f'<{base}/site-json/>; rel="https://api.w.org/"'


def test_a_rest_url_filter_added_later_reaches_the_link_header(app: App, client: Client) -> None:
    assert client.get("/site-json/").headers["Link"].startswith("<http://example.org/site-json/>")
    app.hooks.add_filter("rest_url", lambda url, path: url.replace("example.org", "cdn.example"))
    assert client.get("/site-json/").headers["Link"].startswith("<http://cdn.example/site-json/>")


def test_new_settings_reach_the_default_headers(app: App, client: Client) -> None:
    client.get("/site-json/")
    app.server.settings = dataclasses.replace(app.server.settings, api_root_rel="https://x/")
    assert client.get("/site-json/").headers["Link"].endswith('rel="https://x/"')


def test_cors_header_list_filters_still_apply(app: App, client: Client) -> None:
    default = client.get("/site-json/").headers["Access-Control-Expose-Headers"]
    assert default == "X-Site-Total, X-Site-TotalPages, Link"
    app.hooks.add_filter("rest_exposed_cors_headers", lambda names, request: [*names, "X-Extra"])
    app.hooks.add_filter("rest_allowed_cors_headers", lambda names, request: names[:1])
    response = client.get("/site-json/")
    assert response.headers["Access-Control-Expose-Headers"] == default + ", X-Extra"
    assert response.headers["Access-Control-Allow-Headers"] == "Authorization"


def test_a_rest_url_filter_runs_for_every_request(app: App, client: Client) -> None:
    served = iter(range(100))
    app.hooks.add_filter("rest_url", lambda url, path: f"{url}?n={next(served)}")
    first = client.get("/site-json/nowhere").headers["Link"]
    second = client.get("/site-json/nowhere").headers["Link"]
    assert first != second
