"""Bodies an attacker sends: lone surrogates in JSON (#10 point 2), chunked bodies past the
size limit (#10 point 3) and integers too long for Python's ``int``. Every REST answer stays
JSON."""

from __future__ import annotations

import base64
import io
import json
import math

import pytest
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.rest import RestServer, return_true
from sitecache.rest.http import MAX_BODY_BYTES
from sitecache.rest.json_body import decode_json_body

ECHO = "/site-json/hostile/v1/echo"


def register_echo(app: App) -> None:
    """``hostile/v1/echo`` answers its JSON parameters as they came."""

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "hostile/v1",
            "/echo",
            {
                "methods": ["GET", "POST"],
                "callback": lambda request: {
                    "json": request.get_json_params(),
                    "size": len(request.get_body()),
                },
                "permission_callback": return_true,
            },
        )

    app.hooks.add_action("rest_api_init", register)


def post_json(client: Client, path: str, raw: str) -> TestResponse:
    return client.post(path, data=raw.encode("ascii"), content_type="application/json")


@pytest.mark.parametrize(
    "raw",
    [
        '{"name": "\\ud800"}',
        '{"\\udfff": 1}',
        '["ok", {"deep": ["\\udc80x"]}]',
        '"\\ud83d"',
    ],
)
def test_a_lone_surrogate_in_a_json_body_is_invalid_json_naming_the_reason(
    app: App, raw: str
) -> None:
    register_echo(app)
    response = post_json(Client(app), ECHO, raw)
    assert response.status_code == 400
    assert response.mimetype == "application/json"
    assert response.get_json()["code"] == "rest_invalid_json"
    assert response.get_json()["data"]["json_error_code"] == 10


def test_a_surrogate_pair_is_a_character_not_an_error(app: App) -> None:
    register_echo(app)
    response = post_json(Client(app), ECHO, '{"smile": "\\ud83d\\ude00", "path": "a\\\\ud800"}')
    assert response.status_code == 200
    assert response.get_json()["json"] == {"smile": "\U0001f600", "path": "a\\ud800"}


def test_batch_requests_carrying_a_lone_surrogate_answer_json(app: App) -> None:
    register_echo(app)
    raw = json.dumps(
        {"requests": [{"method": "POST", "path": "/hostile/v1/echo", "body": {"x": "\ud800"}}]}
    )
    response = post_json(Client(app), "/site-json/batch/v1", raw)
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_invalid_json"


def test_an_application_password_name_with_a_lone_surrogate_is_refused_not_a_500(
    app: App,
) -> None:
    user = app.auth.users.create("ada", "correct horse battery", "administrator", "a@example.org")
    password, _ = app.auth.app_passwords.create(user, "cli")
    token = base64.b64encode(f"ada:{password}".encode()).decode()
    response = Client(app).post(
        "/site-json/site/v2/users/me/application-passwords",
        data=b'{"name": "\\ud800"}',
        content_type="application/json",
        headers={"Authorization": f"Basic {token}"},
        environ_base={"REMOTE_ADDR": "127.0.0.1"},
    )
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_invalid_json"


def test_a_handler_answering_a_lone_surrogate_still_answers_valid_json(app: App) -> None:
    def register(server: RestServer) -> None:
        server.register_rest_route(
            "hostile/v1",
            "/surrogate",
            {
                "methods": "GET",
                "callback": lambda request: {"text": "a\ud800b"},
                "permission_callback": return_true,
            },
        )

    app.hooks.add_action("rest_api_init", register)
    response = Client(app).get("/site-json/hostile/v1/surrogate")
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert json.loads(response.get_data()) == {"text": "a\ud800b"}


# ---------------------------------------------------------------------- chunked bodies
def chunked(client: Client, path: str, body: bytes, content_type: str) -> TestResponse:
    """POST ``body`` as a stream of unknown length, as gunicorn hands a chunked body over."""
    return client.post(
        path,
        input_stream=io.BytesIO(body),
        content_type=content_type,
        headers={"Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},
    )


def json_of_size(size: int) -> bytes:
    prefix, suffix = b'{"x": "', b'"}'
    return prefix + b"a" * (size - len(prefix) - len(suffix)) + suffix


def test_a_chunked_json_body_over_the_limit_is_413_not_truncated(app: App) -> None:
    register_echo(app)
    response = chunked(Client(app), ECHO, json_of_size(MAX_BODY_BYTES + 1), "application/json")
    assert response.status_code == 413
    assert response.get_json()["code"] == "rest_payload_too_large"


def test_a_chunked_json_body_at_the_limit_is_read_whole(app: App) -> None:
    register_echo(app)
    response = chunked(Client(app), ECHO, json_of_size(MAX_BODY_BYTES), "application/json")
    assert response.status_code == 200
    assert response.get_json()["size"] == MAX_BODY_BYTES


def test_a_chunked_login_form_over_the_limit_is_413_not_processed(app: App) -> None:
    app.auth.users.create("ada", "password", "administrator", "a@example.org")
    form = b"log=ada&pwd=password&x=" + b"a" * MAX_BODY_BYTES
    response = chunked(Client(app), "/login", form, "application/x-www-form-urlencoded")
    assert response.status_code == 413
    assert "set-cookie" not in response.headers


def test_a_chunked_body_over_the_limit_with_rest_route_is_a_json_413(app: App) -> None:
    body = b"rest_route=/&x=" + b"a" * MAX_BODY_BYTES
    response = chunked(Client(app), "/?rest_route=/", body, "application/x-www-form-urlencoded")
    assert response.status_code == 413
    assert response.get_json()["code"] == "rest_payload_too_large"


# ---------------------------------------------------------------------- over-long integers
#: An integer literal Python's ``int`` refuses to convert (sys.int_info.default_max_str_digits).
HUGE = "1" + "0" * 5000
ORDER = "/site-json/hostile/v1/order"

# (id, schema of menu_order, integer literal sent, float literal it must answer as, status,
# code of the answer, code of menu_order's detail or None). PHP's json_decode makes an
# integer it cannot hold a float (INF past the double range): the schema judges it as it
# judges 1e999. An unbounded integer takes INF as WordPress's rest_is_integer does and
# sanitizes it to 0 ((int) INF); a bound or another type refuses it, naming menu_order.
OVERLONG_CASES: list[tuple[str, dict[str, object], str, str, int, str | None, str | None]] = [
    ("integer", {"type": "integer"}, HUGE, "1e999", 200, None, None),
    ("integer-maximum", {"type": "integer", "maximum": 100}, HUGE, "1e999", 400,
     "rest_invalid_param", "rest_invalid_param"),
    ("negative-minimum", {"type": "integer", "minimum": 0}, "-" + HUGE, "-1e999", 400,
     "rest_invalid_param", "rest_invalid_param"),
    ("string", {"type": "string"}, HUGE, "1e999", 400, "rest_invalid_param",
     "rest_invalid_type"),
    ("boolean", {"type": "boolean"}, HUGE, "1e999", 400, "rest_invalid_param",
     "rest_invalid_type"),
]  # fmt: skip


def register_order(app: App, schema: dict[str, object]) -> None:
    """``hostile/v1/order`` takes ``menu_order`` of ``schema`` and answers it sanitized."""

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "hostile/v1",
            "/order",
            {
                "methods": "POST",
                "callback": lambda request: {"menu_order": request["menu_order"]},
                "permission_callback": return_true,
                "args": {"menu_order": {**schema, "required": True}},
            },
        )

    app.hooks.add_action("rest_api_init", register)


@pytest.mark.parametrize(
    ("schema", "literal", "float_literal", "status", "code", "detail"),
    [case[1:] for case in OVERLONG_CASES],
    ids=[case[0] for case in OVERLONG_CASES],
)
def test_an_integer_too_long_for_python_is_judged_by_the_schema_not_a_syntax_error(
    app: App,
    schema: dict[str, object],
    literal: str,
    float_literal: str,
    status: int,
    code: str | None,
    detail: str | None,
) -> None:
    register_order(app, schema)
    client = Client(app)
    response = post_json(client, ORDER, '{"menu_order": ' + literal + "}")
    answer = response.get_json()
    assert response.status_code == status, answer
    assert answer == post_json(client, ORDER, '{"menu_order": ' + float_literal + "}").get_json()
    if code is None:
        assert answer == {"menu_order": 0}
        return
    assert answer["code"] == code
    assert list(answer["data"]["params"]) == ["menu_order"]
    assert answer["data"]["details"]["menu_order"]["code"] == detail


def test_integers_too_long_for_python_decode_as_php_floats_anywhere_in_a_body() -> None:
    raw = f'{{"a": [{HUGE}, -{HUGE}], "b": {{"c": {HUGE}}}, "small": 12}}'
    decoded, error = decode_json_body(raw.encode("ascii"))
    assert error is None
    assert decoded == {"a": [math.inf, -math.inf], "b": {"c": math.inf}, "small": 12}
    assert decoded["small"].__class__ is int
    long_but_convertible = "9" * 4300
    decoded, error = decode_json_body(long_but_convertible.encode("ascii"))
    assert (decoded, error) == (int(long_but_convertible), None)
