"""REST routes for application passwords under ``site/v2/users/<id>|me/application-passwords``.

Mirrors WordPress's application-passwords controller: list, create (the password appears once,
in the 201 answer), read, rename, delete one, delete all, and introspect the password of the
current request. Every route needs a logged-in user (401 ``rest_not_logged_in``); users manage
their own passwords and administrators anyone's (403 otherwise); the routes answer 501
``application_passwords_disabled`` where application passwords are not available.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, Final

from sitecache.auth.app_passwords import (
    MAX_NAME_LENGTH,
    ApplicationPassword,
    ApplicationPasswordPolicy,
    ApplicationPasswords,
)
from sitecache.auth.authenticators import PASSWORD_LISTING
from sitecache.auth.roles import SiteUser
from sitecache.auth.users import UserRepository
from sitecache.domain_errors import InvalidValueError
from sitecache.errors import RestError
from sitecache.rest import (
    RestRequest,
    RestResponse,
    RestServer,
    User,
    authorization_required_status,
)
from sitecache.rest.server import shared_memo
from sitecache.schema import (
    get_endpoint_args_for_schema,
    sanitize_value_from_schema,
    validate_value_from_schema,
)
from sitecache.schema.dates import format_timestamp

__all__ = [
    "APPLICATION_PASSWORD_SCHEMA",
    "ApplicationPasswordRoutes",
    "check_application_password_fields",
]

NAMESPACE: Final = "site/v2"
BASE: Final = "/users/(?P<user_id>(?:[\\d]+|me))/application-passwords"

_APP_ID: Final = {
    "description": "A UUID provided by the application to uniquely identify it. It is "
    "recommended to use an UUID v5 with the URL or DNS namespace.",
    "type": "string",
    "oneOf": [{"type": "string", "format": "uuid"}, {"type": "string", "enum": [""]}],
    "context": ["view", "edit", "embed"],
}

APPLICATION_PASSWORD_SCHEMA: Final[dict[str, Any]] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "title": "application-password",
    "type": "object",
    "properties": {
        "uuid": {
            "description": "The unique identifier for the application password.",
            "type": "string",
            "format": "uuid",
            "context": ["view", "edit", "embed"],
            "readonly": True,
        },
        "app_id": _APP_ID,
        "name": {
            "description": "The name of the application password.",
            "type": "string",
            "required": True,
            "context": ["view", "edit", "embed"],
            "minLength": 1,
            "maxLength": MAX_NAME_LENGTH,
            "pattern": ".*\\S.*",
        },
        "password": {
            "description": "The generated password. Only available after adding an application.",
            "type": "string",
            "context": ["edit"],
            "readonly": True,
        },
        "created": {
            "description": "The GMT date the application password was created.",
            "type": "string",
            "format": "date-time",
            "context": ["view", "edit"],
            "readonly": True,
        },
        "last_used": {
            "description": "The GMT date the application password was last used.",
            "type": ["string", "null"],
            "format": "date-time",
            "context": ["view", "edit"],
            "readonly": True,
        },
        "last_ip": {
            "description": "The IP address the application password was last used by.",
            "type": ["string", "null"],
            "format": "ip",
            "context": ["view", "edit"],
            "readonly": True,
        },
    },
}

_TARGETS: Final = "application_password_targets"
"""The shared-memo key of `ApplicationPasswordRoutes._targets`."""


class _Targets:
    """`ApplicationPasswordRoutes._targets`: per HTTP request, environ and current user.

    Attributes:
        available: whether application passwords are available to the request.
        found: the user each ``user_id`` (``me`` or digits) names, or ``None``.
    """

    __slots__ = ("available", "current", "environ", "found")

    def __init__(self, environ: Mapping[str, Any], current: User, available: bool) -> None:
        self.environ = environ
        self.current = current
        self.available = available
        self.found: dict[str, Any] = {}


_UNRESOLVED: Final[Any] = object()


def _not_logged_in() -> RestError:
    return RestError("rest_not_logged_in", "You are not currently logged in.", {"status": 401})


_CONTEXT_ARG: Final = {
    "context": {
        "description": "Scope under which the request is made; determines fields present in "
        "response.",
        "type": "string",
        "enum": ["view", "embed", "edit"],
        "default": "view",
    }
}


def check_application_password_fields(name: str, app_id: str) -> tuple[str, str]:
    """``(name, app_id)`` checked against `APPLICATION_PASSWORD_SCHEMA` as the REST route checks
    them (the command line uses this, so both accept the same values); the name is stripped.

    Raises:
        InvalidValueError: ``rest_invalid_param`` as REST would answer it, with the message of
            each invalid field in the ``params`` detail.
    """
    properties = APPLICATION_PASSWORD_SCHEMA["properties"]
    clean: dict[str, str] = {}
    invalid: dict[str, str] = {}
    for key, value in (("name", name), ("app_id", app_id)):
        error = validate_value_from_schema(value, properties[key], key)
        if isinstance(error, RestError):
            invalid[key] = error.message
        else:
            clean[key] = str(sanitize_value_from_schema(value, properties[key], key))
    if invalid:
        raise InvalidValueError(
            "rest_invalid_param",
            f"Invalid parameter(s): {', '.join(invalid)}",
            {"params": invalid},
        )
    return clean["name"].strip(), clean["app_id"]


def _is_user_id(raw: object) -> bool:
    """Digits naming an id a database row can have (at most 2**63 - 1)."""
    text = str(raw)
    return text.isascii() and text.isdigit() and len(text) <= 19 and int(text) < 2**63


@lru_cache(maxsize=1024)
def _rfc3339(timestamp: int | None) -> str | None:
    """``Y-m-d\\TH:i:s`` of a timestamp (kept: the same few times are shown on every listing)."""
    return None if timestamp is None else format_timestamp(timestamp).replace(" ", "T")


class ApplicationPasswordRoutes:
    """The controller: permission checks and handlers bound to the site's repositories."""

    def __init__(
        self,
        users: UserRepository,
        passwords: ApplicationPasswords,
        policy: ApplicationPasswordPolicy,
    ) -> None:
        self.users = users
        self.passwords = passwords
        self.policy = policy
        self._server: RestServer | None = None

    @property
    def server(self) -> RestServer:
        """The REST server the routes were registered on."""
        if self._server is None:
            raise RuntimeError("the application-password routes are not registered yet")
        return self._server

    # ------------------------------------------------------------------ registration
    def register(self, server: RestServer) -> None:
        """The ``rest_api_init`` callback."""
        self._server = server

        def schema() -> dict[str, Any]:
            return APPLICATION_PASSWORD_SCHEMA

        self._register_collection(server, schema)
        self._register_items(server, schema)

    def _register_collection(self, server: RestServer, schema: Callable[[], Any]) -> None:
        """``…/application-passwords``: list, create, delete all."""
        server.register_rest_route(
            NAMESPACE,
            BASE,
            [
                {
                    "methods": "GET",
                    "callback": self.get_items,
                    "permission_callback": self._permission("list_app_passwords"),
                    "args": dict(_CONTEXT_ARG),
                },
                {
                    "methods": "POST",
                    "callback": self.create_item,
                    "permission_callback": self._permission("create_app_password"),
                    "args": get_endpoint_args_for_schema(APPLICATION_PASSWORD_SCHEMA, "POST"),
                },
                {
                    "methods": "DELETE",
                    "callback": self.delete_items,
                    "permission_callback": self._permission("delete_app_passwords"),
                    "args": {},
                },
            ],
            schema=schema,
        )

    def _register_items(self, server: RestServer, schema: Callable[[], Any]) -> None:
        """``…/introspect`` and ``…/<uuid>``: one password."""
        server.register_rest_route(
            NAMESPACE,
            f"{BASE}/introspect",
            {
                "methods": "GET",
                "callback": self.introspect,
                "permission_callback": self._permission("read_app_password"),
                "args": dict(_CONTEXT_ARG),
            },
            schema=schema,
        )
        server.register_rest_route(
            NAMESPACE,
            f"{BASE}/(?P<uuid>[\\w\\-]+)",
            [
                {
                    "methods": "GET",
                    "callback": self.get_item,
                    "permission_callback": self._permission("read_app_password"),
                    "args": dict(_CONTEXT_ARG),
                },
                {
                    "methods": "POST, PUT, PATCH",
                    "callback": self.update_item,
                    "permission_callback": self._permission("edit_app_password"),
                    "args": get_endpoint_args_for_schema(
                        APPLICATION_PASSWORD_SCHEMA, "POST, PUT, PATCH"
                    ),
                },
                {
                    "methods": "DELETE",
                    "callback": self.delete_item,
                    "permission_callback": self._permission("delete_app_password"),
                    "args": {},
                },
            ],
            schema=schema,
        )

    # ------------------------------------------------------------------ permissions
    def target_user(self, request: RestRequest, capability: str = "edit_user") -> SiteUser:
        """The user the URL names (``me`` or an id), after the login and availability checks.

        Without ``edit_users``, an unknown id is refused exactly as someone else's id is for
        ``capability``, so the answer does not tell which user ids exist.

        Raises:
            RestError: 401 ``rest_not_logged_in``, 501 ``application_passwords_disabled``,
                404 ``rest_user_invalid_id`` or the refusal of ``capability``.
        """
        current = request.user
        if not current.id:
            raise _not_logged_in()
        return self._target(request, current, self._targets(request, current), capability)

    def _target(
        self, request: RestRequest, current: User, targets: _Targets, capability: str
    ) -> SiteUser:
        """`target_user` for a logged-in ``current`` user, with the request's `_Targets`."""
        if not targets.available:
            raise RestError(
                "application_passwords_disabled",
                "Application passwords are not available.",
                {"status": 501},
            )
        raw = request.get_url_params().get("user_id", "me")
        if raw.__class__ is str:
            found = targets.found.get(raw, _UNRESOLVED)
            if found is _UNRESOLVED:
                found = targets.found[raw] = self._resolve(request, current, raw)
        else:
            found = self._resolve(request, current, raw)
        if found is None:
            if current.can("edit_users"):
                raise RestError("rest_user_invalid_id", "Invalid user ID.", {"status": 404})
            # SECURITY: without edit_users, an unknown id looks like someone else's.
            raise self._forbidden(capability, request)
        return found  # type: ignore[no-any-return]  # a SiteUser (found is typed loosely)

    def _targets(self, request: RestRequest, current: User) -> _Targets:
        """What `target_user` works out for the HTTP request (its internal requests share it):
        whether application passwords are available to it, the user each ``user_id`` names,
        and the permissions granted. Kept for the request's environ and current user only."""
        memo = shared_memo(request)
        environ = request.environ
        known: _Targets | None = memo.get(_TARGETS)
        if known is None or known.environ is not environ or known.current is not current:
            known = memo[_TARGETS] = _Targets(environ, current, self.policy.available(environ))
        return known

    def _resolve(self, request: RestRequest, current: User, raw: Any) -> SiteUser | None:
        """The user ``raw`` (``me``, an id) names, or ``None``."""
        if raw == "me" or raw == str(current.id):
            # The current user was read from the database by authentication, this request.
            return current if isinstance(current, SiteUser) else self._user(request, current.id)
        return self._user(request, int(raw)) if _is_user_id(raw) else None

    def _user(self, request: RestRequest, user_id: int) -> SiteUser | None:
        """The user with ``user_id``, read from the database once per HTTP request (internal
        requests for target hints and embedding share the read)."""
        users: dict[int, SiteUser | None] = shared_memo(request).setdefault("users", {})
        if user_id not in users:
            users[user_id] = self.users.get(user_id)
        return users[user_id]

    def _permission(self, capability: str) -> Any:
        def check(request: RestRequest) -> bool:
            current = request.user
            if not current.id:
                raise _not_logged_in()
            user = self._target(request, current, self._targets(request, current), capability)
            if not current.can(capability, user.id):
                raise self._forbidden(capability, request)
            return True

        return check

    @staticmethod
    def _forbidden(capability: str, request: RestRequest) -> RestError:
        messages = {
            "list_app_passwords": (
                "rest_cannot_list_application_passwords",
                "Sorry, you are not allowed to list application passwords for this user.",
            ),
            "create_app_password": (
                "rest_cannot_create_application_passwords",
                "Sorry, you are not allowed to create application passwords for this user.",
            ),
            "read_app_password": (
                "rest_cannot_read_application_password",
                "Sorry, you are not allowed to read this application password.",
            ),
            "edit_app_password": (
                "rest_cannot_edit_application_password",
                "Sorry, you are not allowed to edit this application password.",
            ),
            "delete_app_password": (
                "rest_cannot_delete_application_password",
                "Sorry, you are not allowed to delete this application password.",
            ),
            "delete_app_passwords": (
                "rest_cannot_delete_application_passwords",
                "Sorry, you are not allowed to delete application passwords for this user.",
            ),
        }
        code, message = messages.get(
            capability, ("rest_forbidden", "Sorry, you are not allowed to do that.")
        )
        return RestError(code, message, {"status": authorization_required_status(request.user)})

    # ------------------------------------------------------------------ shaping
    def _item_url(self, user: SiteUser, uuid: str) -> str:
        return self.server.rest_url(f"/{NAMESPACE}/users/{user.id}/application-passwords/{uuid}")

    def prepare(
        self, user: SiteUser, record: ApplicationPassword, password: str | None = None
    ) -> RestResponse:
        """The item as a response with its ``self`` link."""
        data: dict[str, Any] = {
            "uuid": record.uuid,
            "app_id": record.app_id,
            "name": record.name,
            "created": _rfc3339(record.created),
            "last_used": _rfc3339(record.last_used),
            "last_ip": record.last_ip,
        }
        if password is not None:
            data["password"] = password
        response = RestResponse(data)
        response.add_link("self", self._item_url(user, record.uuid))
        return response

    def _item(self, request: RestRequest) -> tuple[SiteUser, ApplicationPassword]:
        user = self.target_user(request)
        record = self.passwords.get(user, str(request.get_url_params().get("uuid", "")))
        if record is None:
            raise RestError(
                "rest_application_password_not_found",
                "Application password not found.",
                {"status": 404},
            )
        return user, record

    # ------------------------------------------------------------------ handlers
    def get_items(self, request: RestRequest) -> Any:
        """GET: every application password of the user."""
        user = self.target_user(request)
        items = []
        listing = shared_memo(request).get(PASSWORD_LISTING)
        for record in self.passwords.listed(user, listing):
            response = self.prepare(user, record)
            items.append(self.server.response_to_data(response, False))
        return items

    def create_item(self, request: RestRequest) -> Any:
        """POST: a new password, shown once (201, ``Location`` header)."""
        user = self.target_user(request)
        name = str(request["name"]).strip()
        app_id = request["app_id"] or ""
        password, record = self.passwords.create(user, name, app_id)
        response = self.prepare(user, record, password)
        response.set_status(201)
        response.header("Location", self._item_url(user, record.uuid))
        request.set_param("context", "edit")  # the password is an edit-context field
        return response

    def get_item(self, request: RestRequest) -> Any:
        """GET one password."""
        found = self._item(request)
        return self.prepare(*found)

    def update_item(self, request: RestRequest) -> Any:
        """POST/PUT/PATCH: rename a password."""
        found = self._item(request)
        user, record = found
        name = request["name"]
        if isinstance(name, str) and name.strip():
            renamed = self.passwords.rename(user, record.uuid, name.strip())
            record = renamed if renamed is not None else record
        return self.prepare(user, record)

    def delete_item(self, request: RestRequest) -> Any:
        """DELETE one password: ``{"deleted": true, "previous": item}``."""
        found = self._item(request)
        user, record = found
        previous = self.server.response_to_data(self.prepare(user, record), False)
        self.passwords.delete(user, record.uuid)
        return {"deleted": True, "previous": previous}

    def delete_items(self, request: RestRequest) -> Any:
        """DELETE every password of the user: ``{"deleted": true, "count": n}``."""
        user = self.target_user(request)
        return {"deleted": True, "count": self.passwords.delete_all(user)}

    def introspect(self, request: RestRequest) -> Any:
        """GET the application password that authenticated this request."""
        user = self.target_user(request)
        if user.id != request.user.id:
            raise RestError(
                "rest_cannot_introspect_app_password_for_non_authenticated_user",
                "The authenticated application password can only be introspected for the "
                "current user.",
                {"status": authorization_required_status(request.user)},
            )
        record = self.passwords.get(user, request.app_password or "")
        if record is None:
            raise RestError(
                "rest_no_authenticated_app_password",
                "Cannot introspect application password.",
                {"status": 404},
            )
        return self.prepare(user, record)
