"""`check_routes`: every route and method of an application, driven with generated requests.

For each registered route and each of its methods, hypothesis draws requests from the
handler's ``args`` (`sitecache.testing.requests`), sends them through the WSGI application with
werkzeug's test client (no server), authenticated as a user of the given role through an
application password over loopback, and holds each answer to the rules:

- never a 5xx (but WordPress's JSON 501 "not supported" answers, ``rest_trash_not_supported``),
  always a JSON body (204 and HEAD excepted);
- a value broken on purpose in an argument the server validates by its schema alone
  (`argument_is_checked`) is a 400 ``rest_invalid_param`` whose ``details`` give that argument
  the schema rule's code; a valid value is never named in such a 400;
- a 2xx body validates against the route's published schema (each item of a list), and shows
  no property outside the requested ``context`` (``edit`` for writes, as WordPress answers them).

The first answer that breaks a rule raises `AssertionError` naming the route, the method and the
request (hypothesis first shrinks it to a small one).

Routes with side effects run for real, so the application must live in a throwaway data
directory: pass one built on a temporary directory, or a factory ``(data_dir) -> App`` and
`check_routes` makes (and removes) the directory itself. ``DELETE`` methods run last, and the
acting user and its application password are restored before each request if a request
removed or demoted them.
"""

from __future__ import annotations

import base64
import json
import secrets
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from werkzeug.test import Client, TestResponse

from sitecache.app import App
from sitecache.auth.roles import SiteUser
from sitecache.rest.routes import Route
from sitecache.schema import messages, report_misuse_to
from sitecache.schema.validation import check_value
from sitecache.testing.requests import (
    Draft,
    RouteShape,
    argument_is_checked,
    drafts,
    encode_pairs,
)

__all__ = ["RouteCheck", "check_routes"]

AppFactory = Callable[[Path], App]
_LOOPBACK: Final = {"REMOTE_ADDR": "127.0.0.1"}
_CONTEXTS: Final = ("view", "embed", "edit")
_LINK_KEYS: Final = frozenset({"_links", "_embedded"})
SCHEMA_CODES: Final = frozenset(
    {
        messages.INVALID_TYPE,
        messages.INVALID_PARAM,
        messages.PROPERTY_REQUIRED,
        messages.INVALID_PATTERN,
        messages.INVALID_HEX_COLOR,
        messages.INVALID_DATE,
        messages.INVALID_EMAIL,
        messages.INVALID_UUID,
    }
)
"""The codes a schema rule gives: a refusal with another code is the handler's."""


@dataclass
class RouteCheck:
    """What `check_routes` did: requests sent per ``"METHOD route"``."""

    requests: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    """Time spent per ``"METHOD route"`` (drawing, sending, checking)."""

    @property
    def total(self) -> int:
        """Requests sent in all."""
        return sum(self.requests.values())


def check_routes(
    app: App | AppFactory,
    *,
    role: str | None = "administrator",
    max_examples: int = 12,
    namespaces: Iterable[str] | None = None,
    path_values: Mapping[str, Sequence[str]] | None = None,
    allow_any_data_dir: bool = False,
) -> RouteCheck:
    """Drive every route and method of ``app`` with generated requests; raise `AssertionError`
    naming the route, the method and the request at the first wrong answer.

    Args:
        app: an application on a throwaway data directory, or a factory building one on the
            directory it is given (a fresh temporary directory, removed afterwards).
        role: the role of the user the requests act as (created for the run, with an
            application password); ``None`` sends them anonymously.
        max_examples: requests drawn per route and method (hypothesis ``max_examples``).
        namespaces: only the routes of these namespaces (all by default).
        path_values: values to try for route captures by group name (``{"id": ["1"]}``),
            beside values drawn from the capture's regex.
        allow_any_data_dir: run on an application whose data directory is not under the
            system's temporary directory (its data will be changed and deleted).

    Raises:
        AssertionError: an answer broke a rule (see the module's documentation), or a
            ``rest_api_init`` callback raised.
        ValueError: ``app``'s data directory is not a temporary one, or a namespace of
            ``namespaces`` has no registered route (a typo would make the check vacuous).
    """
    if isinstance(app, App):
        _check_throwaway(app, allow_any_data_dir)
        return _Run(app, role, max_examples, path_values or {}).all(namespaces)
    with tempfile.TemporaryDirectory(prefix="sitecache-testing-") as directory:
        built = app(Path(directory))
        return _Run(built, role, max_examples, path_values or {}).all(namespaces)


def _check_throwaway(app: App, allowed: bool) -> None:
    data_dir = Path(app.config.data_dir).resolve()
    temporary = Path(tempfile.gettempdir()).resolve()
    if not allowed and not data_dir.is_relative_to(temporary):
        raise ValueError(
            f"check_routes changes and deletes data: give it an application whose data_dir is "
            f"under {temporary} (it is {data_dir}), a factory, or allow_any_data_dir=True"
        )


class _Identity:
    """The user requests act as, with an application password; restored when a request
    deleted the user, changed its role or revoked the password."""

    def __init__(self, app: App, role: str) -> None:
        self.app = app
        self.role = role
        self.login = f"sitecache-testing-{role}-{secrets.token_hex(3)}"
        self.secret = secrets.token_urlsafe(18)
        self.user: SiteUser | None = None
        self.uuid = ""
        self.header = ""

    def ensure(self) -> dict[str, str]:
        """The ``Authorization`` header, after restoring the user and password if needed."""
        users, passwords = self.app.auth.users, self.app.auth.app_passwords
        user = users.get(self.user.id) if self.user is not None else None
        if user is None:
            self.login = f"sitecache-testing-{self.role}-{secrets.token_hex(3)}"
            user = users.create(self.login, self.secret, self.role, f"{self.login}@example.org")
            self.uuid = ""
        elif user.role != self.role:
            user = users.update(user, {"role": self.role})
        self.user = user
        if not self.uuid or passwords.get(user, self.uuid) is None:
            password, record = passwords.create(user, f"check-routes-{secrets.token_hex(3)}")
            self.uuid = record.uuid
            token = base64.b64encode(f"{user.login}:{password}".encode()).decode("ascii")
            self.header = f"Basic {token}"
        return {"Authorization": self.header}

    def seeds(self) -> dict[str, list[str]]:
        """Capture values that name the acting user's own resources."""
        if self.user is None:
            return {}
        return {"id": [str(self.user.id)], "user_id": ["me", str(self.user.id)],
                "uuid": [self.uuid]}  # fmt: skip


class _Run:
    def __init__(
        self, app: App, role: str | None, max_examples: int, path_values: Mapping[str, Any]
    ) -> None:
        self.app = app
        self.client = Client(app)
        self.identity = _Identity(app, role) if role is not None else None
        self.max_examples = max_examples
        self.path_values = path_values
        self.prefix = "/" + app.server.settings.prefix
        self.report = RouteCheck()

    def all(self, namespaces: Iterable[str] | None) -> RouteCheck:
        server = self.app.server
        server.ensure_initialized()
        if server.init_error is not None:
            raise AssertionError(f"rest_api_init failed: {server.init_error.message}")
        wanted = set(namespaces) if namespaces is not None else None
        if wanted is not None:
            unknown = sorted(wanted - set(server.get_namespaces()))
            if unknown:
                raise ValueError(
                    f"check_routes: no route is registered in the namespace(s) "
                    f"{', '.join(unknown)}; registered namespaces: "
                    f"{', '.join(server.get_namespaces()) or '(none)'}"
                )
        work: list[tuple[Route, dict[str, Any], str]] = []
        for route in self.app.server.get_routes().values():
            if wanted is not None and route.namespace not in wanted:
                continue
            for handler in route.handlers:
                for method in handler["methods"]:
                    work.append((route, handler, method))
        work.sort(key=lambda item: item[2] == "DELETE")  # stable: deletions last
        for route, handler, method in work:
            started = time.perf_counter()
            self.route(route, handler, method)
            self.report.seconds[f"{method} {route.pattern}"] = time.perf_counter() - started
        return self.report

    def route(self, route: Route, handler: dict[str, Any], method: str) -> None:
        shape = RouteShape(
            route.pattern,
            method,
            handler.get("args") or {},
            self.path_values,
            _writable_properties(route) if method not in ("GET", "HEAD", "DELETE") else {},
        )
        seeds: dict[str, list[str]] = {}
        if self.identity is not None:
            self.identity.ensure()
            seeds = self.identity.seeds()
        key = f"{method} {route.pattern}"

        @settings(
            max_examples=self.max_examples,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            print_blob=False,
            report_multiple_bugs=False,
        )
        @given(drafts(shape, {**seeds}))
        def one(draft: Draft) -> None:
            self.report.requests[key] = self.report.requests.get(key, 0) + 1
            problem = self.problem(draft, route, handler)
            if problem is not None:
                raise AssertionError(f"{key}: {problem}\n  request: {draft.describe()}")

        try:
            one()
        except Unsatisfiable as exc:
            raise AssertionError(f"{key}: no request could be drawn from its args") from exc

    # ------------------------------------------------------------------ one request
    def send(self, draft: Draft) -> TestResponse:
        headers = self.identity.ensure() if self.identity is not None else {}
        path = self.prefix + draft.path
        if draft.body == "query":
            return self.client.open(
                path, method=draft.method, query_string=encode_pairs(draft.args),
                headers=headers, environ_overrides=_LOOPBACK,
            )  # fmt: skip
        if draft.body == "form":
            data = encode_pairs(draft.args)
            content_type = "application/x-www-form-urlencoded"
        else:
            data = json.dumps(draft.args)
            content_type = "application/json"
        return self.client.open(
            path, method=draft.method, data=data, content_type=content_type,
            headers=headers, environ_overrides=_LOOPBACK,
        )  # fmt: skip

    def problem(self, draft: Draft, route: Route, handler: Mapping[str, Any]) -> str | None:
        """What is wrong with the answer to ``draft``, or ``None``."""
        response = self.send(draft)
        status = response.status_code
        if status >= 500 and not (status == 501 and response.mimetype == "application/json"):
            return f"answered {status}: {response.get_data(as_text=True)[:300]}"
        if status == 204 or draft.method == "HEAD":
            return None
        if response.mimetype != "application/json":
            return f"answered {status} with {response.mimetype!r}, not JSON"
        try:
            body = json.loads(response.get_data(as_text=True))
        except ValueError:
            return f"answered {status} with a body that is not JSON"
        args = handler.get("args") or {}
        refusal = _argument_problem(draft, args, status, body)
        if refusal is not None or not 200 <= status < 300:
            return refusal
        schema = route.options.get("schema")
        if schema is None:
            return None
        published = schema() if callable(schema) else schema
        return _response_problem(body, published, _context(draft, args))


def _writable_properties(route: Route) -> dict[str, Any]:
    """The properties of the route's published schema a client may send (not ``readonly``)."""
    schema = route.options.get("schema")
    published = schema() if callable(schema) else schema
    properties = published.get("properties") if isinstance(published, Mapping) else None
    if not isinstance(properties, Mapping):
        return {}
    return {
        name: definition
        for name, definition in properties.items()
        if isinstance(definition, Mapping) and not definition.get("readonly")
    }


def _argument_problem(draft: Draft, args: Mapping[str, Any], status: int, body: Any) -> str | None:
    """A broken argument not refused with its rule's code, or a valid one refused."""
    details: Mapping[str, Any] = {}
    if status == 400 and isinstance(body, dict) and body.get("code") == "rest_invalid_param":
        data = body.get("data")
        found = data.get("details") if isinstance(data, dict) else None
        details = found if isinstance(found, dict) else {}
    for name, detail in details.items():
        definition = args.get(name)
        if name == draft.broken or name not in draft.args or not isinstance(definition, Mapping):
            continue
        code = detail.get("code") if isinstance(detail, dict) else None
        if code in SCHEMA_CODES and argument_is_checked(definition):
            return f"refused the valid value of {name!r}: {json.dumps(detail)}"
    if draft.broken is None or not argument_is_checked(args[draft.broken]):
        return None
    detail = details.get(draft.broken)
    code = detail.get("code") if isinstance(detail, dict) else None
    if code != draft.code:
        answer = json.dumps(body)[:300]
        return (
            f"argument {draft.broken!r} should be refused with {draft.code}; "
            f"answered {status} {answer}"
        )
    return None


def _context(draft: Draft, args: Mapping[str, Any]) -> str:
    if draft.method not in ("GET", "HEAD"):
        return "edit"  # WordPress answers writes in the edit context (create_item, ...)
    sent = draft.args.get("context")
    if isinstance(sent, str) and sent in _CONTEXTS:
        return sent
    definition = args.get("context")
    default = definition.get("default") if isinstance(definition, Mapping) else None
    return default if isinstance(default, str) else "view"


def _keyed_collection(body: Mapping[str, Any], properties: Mapping[str, Any]) -> bool:
    """Whether ``body`` is a map of items (every value an object of published fields)."""
    return bool(body) and all(
        isinstance(item, dict) and set(item) - _LINK_KEYS <= set(properties)
        for item in body.values()
    )


def _response_problem(body: Any, schema: Mapping[str, Any], context: str) -> str | None:
    """How a 2xx body breaks the published schema in ``context``, or ``None``."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return None
    items = body if isinstance(body, list) else [body]
    if isinstance(body, dict) and _keyed_collection(body, properties):
        items = list(body.values())  # /types, /statuses, /taxonomies: items by their name
    closed = schema.get("additionalProperties") is False
    notices: list[tuple[str, str]] = []
    with report_misuse_to(lambda function, message: notices.append((function, message))):
        for item in items:
            if not isinstance(item, dict):
                return f"answered an item that is not an object: {json.dumps(item)[:200]}"
            for key, value in item.items():
                if key in _LINK_KEYS:
                    continue
                definition = properties.get(key)
                if not isinstance(definition, Mapping):
                    if closed:
                        return f"answered {key!r}, which the schema does not publish"
                    continue
                contexts = definition.get("context")
                if isinstance(contexts, list) and context not in contexts:
                    return f"answered {key!r} in context {context!r} (only {contexts})"
                error = check_value(value, definition, key)
                if error is not None:
                    return f"answered {key}={json.dumps(value)[:200]}: {error.message}"
    return None
