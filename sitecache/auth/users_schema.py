"""The ``user`` resource schema of ``site/v2/users`` and the argument checks built from it.

One source for REST and the command line: the routes derive their arguments from `user_schema`
with `get_endpoint_args_for_schema`, and `check_user_input` runs exactly those arguments'
validate and sanitize callbacks for the command line. Shapes follow WordPress's users
controller (WordPress 7.1's); the deliberate differences are in the README.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from sitecache.auth.users import LOGIN_PATTERN, MIN_PASSWORD_LENGTH, slugify
from sitecache.errors import RestError
from sitecache.rest import RestRequest
from sitecache.rest.refusals import raise_refusal
from sitecache.schema import get_endpoint_args_for_schema, sanitize_text_field

__all__ = [
    "DEFAULT_AVATAR_SIZES",
    "USER_SCHEMA",
    "check_user_input",
    "public_schema",
    "user_schema",
]

DEFAULT_AVATAR_SIZES: Final = (24, 48, 96)
"""Avatar sizes in pixels; the ``rest_avatar_sizes`` filter changes them."""

_EVERY: Final = ["embed", "view", "edit"]
_PUBLIC: Final = ["embed", "view", "edit"]


def _text(value: Any, request: Any, param: str) -> Any:
    """``sanitize_text_field`` as an argument callback (after schema sanitizing)."""
    return sanitize_text_field(value) if isinstance(value, str) else value


def _username(value: Any, request: Any, param: str) -> Any:
    """``check_username``: a login of letters, digits, spaces and ``_ . @ -`` (1 to 60)."""
    text = str(value).strip()
    if not LOGIN_PATTERN.match(text):
        return RestError(
            "rest_user_invalid_username",
            "This username is invalid because it uses illegal characters. Please enter a "
            "valid username.",
            {"status": 400},
        )
    return text


def _password(value: Any, request: Any, param: str) -> Any:
    """``check_user_password``: not empty, no backslash, at least the minimum length."""
    text = str(value)
    if not text.strip():
        return RestError(
            "rest_user_invalid_password", "Passwords cannot be empty.", {"status": 400}
        )
    if "\\" in text:
        return RestError(
            "rest_user_invalid_password",
            'Passwords cannot contain the "\\" character.',
            {"status": 400},
        )
    if len(text) < MIN_PASSWORD_LENGTH:
        return RestError(
            "rest_user_invalid_password",
            f"A password has at least {MIN_PASSWORD_LENGTH} characters.",
            {"status": 400},
        )
    return text


def _slug(value: Any, request: Any, param: str) -> Any:
    """``sanitize_title`` for user slugs; an empty result is refused."""
    slug = slugify(str(value))
    if not slug:
        return RestError("rest_user_invalid_slug", "Invalid slug.", {"status": 400})
    return slug


def user_schema(avatar_sizes: Sequence[int] = DEFAULT_AVATAR_SIZES) -> dict[str, Any]:
    """The ``user`` schema, with one ``avatar_urls`` property per size (fresh on each call)."""
    return {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "title": "user",
        "type": "object",
        "properties": {**_identity_properties(), **_account_properties(avatar_sizes)},
    }


def _identity_properties() -> dict[str, Any]:
    """The schema's properties from ``id`` to ``link``: who the user is."""
    return {
        "id": {
            "description": "Unique identifier for the user.",
            "type": "integer",
            "context": list(_EVERY),
            "readonly": True,
        },
        "username": {
            "description": "Login name for the user.",
            "type": "string",
            "context": ["edit"],
            "required": True,
            "arg_options": {"sanitize_callback": _username},
        },
        "name": {
            "description": "Display name for the user.",
            "type": "string",
            "context": list(_EVERY),
            "arg_options": {"sanitize_callback": _text},
        },
        "first_name": {
            "description": "First name for the user.",
            "type": "string",
            "context": ["edit"],
            "arg_options": {"sanitize_callback": _text},
        },
        "last_name": {
            "description": "Last name for the user.",
            "type": "string",
            "context": ["edit"],
            "arg_options": {"sanitize_callback": _text},
        },
        "email": {
            "description": "The email address for the user.",
            "type": "string",
            "format": "email",
            "context": ["edit"],
            "required": True,
        },
        "url": {
            "description": "URL of the user.",
            "type": "string",
            "format": "uri",
            "context": list(_EVERY),
        },
        "description": {
            "description": "Description of the user.",
            "type": "string",
            "context": list(_EVERY),
        },
        "link": {
            "description": "Author URL of the user.",
            "type": "string",
            "format": "uri",
            "context": list(_EVERY),
            "readonly": True,
        },
    }


def _account_properties(avatar_sizes: Sequence[int]) -> dict[str, Any]:
    """The schema's properties from ``locale`` to ``meta``: the account and its avatars."""
    return {
        "locale": {
            "description": "Locale for the user.",
            "type": "string",
            "enum": ["", "en_US"],
            "context": ["edit"],
        },
        "nickname": {
            "description": "The nickname for the user.",
            "type": "string",
            "context": ["edit"],
            "arg_options": {"sanitize_callback": _text},
        },
        "slug": {
            "description": "An alphanumeric identifier for the user.",
            "type": "string",
            "context": list(_EVERY),
            "arg_options": {"sanitize_callback": _slug},
        },
        "registered_date": {
            "description": "Registration date for the user.",
            "type": "string",
            "format": "date-time",
            "context": ["edit"],
            "readonly": True,
        },
        "roles": {
            "description": "Roles assigned to the user.",
            "type": "array",
            "items": {"type": "string"},
            "context": ["edit"],
        },
        "password": {
            "description": "Password for the user (never included).",
            "type": "string",
            "context": [],
            "required": True,
            "arg_options": {"sanitize_callback": _password},
        },
        "capabilities": {
            "description": "All capabilities assigned to the user.",
            "type": "object",
            "context": ["edit"],
            "readonly": True,
        },
        "extra_capabilities": {
            "description": "Any extra capabilities assigned to the user.",
            "type": "object",
            "context": ["edit"],
            "readonly": True,
        },
        "avatar_urls": _avatar_urls(avatar_sizes),
        "meta": {
            "description": "Meta fields.",
            "type": "object",
            "context": ["view", "edit"],
            "properties": {},
        },
    }


def _avatar_urls(avatar_sizes: Sequence[int]) -> dict[str, Any]:
    """The ``avatar_urls`` property: one URL property per size."""
    avatar_properties = {
        str(size): {
            "description": f"Avatar URL with image size of {size} pixels.",
            "type": "string",
            "format": "uri",
            "context": list(_EVERY),
        }
        for size in avatar_sizes
    }
    return {
        "description": "Avatar URLs for the user.",
        "type": "object",
        "context": list(_PUBLIC),
        "readonly": True,
        "properties": avatar_properties,
    }


def public_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema as routes publish it: without ``arg_options`` (``get_public_item_schema``)."""
    properties = {
        name: {key: value for key, value in definition.items() if key != "arg_options"}
        for name, definition in schema["properties"].items()
    }
    return {**schema, "properties": properties}


USER_SCHEMA: Final = user_schema()
"""The schema with the default avatar sizes (what the command line validates with)."""


def check_user_input(method: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Validate and sanitize ``values`` exactly as the REST route for ``method`` would.

    ``method`` is ``"POST"`` (create: ``username``, ``email`` and ``password`` required) or
    ``"PUT"`` (update). Returns the sanitized values.

    Raises:
        InvalidValueError: the route's error (``rest_invalid_param``,
            ``rest_missing_callback_param``...), its ``params`` and ``details`` as details.
    """
    args = get_endpoint_args_for_schema(USER_SCHEMA, "POST" if method == "POST" else "PUT")
    request = RestRequest(method, "/site/v2/users")
    request.set_attributes({"args": args})
    request.set_body_params({key: value for key, value in values.items() if value is not None})
    for check in (request.has_valid_params, request.sanitize_params):
        raise_refusal(check())
    return {key: request.get_param(key) for key in values if request.has_param(key)}
