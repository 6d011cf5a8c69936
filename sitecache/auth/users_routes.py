"""REST routes for users: ``site/v2/users``, ``/users/<id>`` and ``/users/me``.

Mirrors WordPress's users controller: list (paginated, ``X-Site-Total``, ``X-Site-TotalPages``
and ``Link`` prev/next), create, read, update and delete (``force=true`` and ``reassign``
required), and the same three for the current user under ``me``. Permissions follow the
capabilities ``list_users``, ``create_users``, ``edit_users``, ``delete_users`` and
``promote_users`` with the 401/403 rule. Callers without ``list_users`` see only users who have
published posts; which users those are is asked of the ``published_author_ids`` filter (the
content store answers it; until then nobody has published anything).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

from sitecache.auth.roles import ROLE_CAPABILITIES, ROLES, SiteUser
from sitecache.auth.users import UserQuery, UserRepository
from sitecache.auth.users_args import ID_ARG, collection_args, delete_args
from sitecache.auth.users_schema import DEFAULT_AVATAR_SIZES, public_schema, user_schema
from sitecache.errors import RestError
from sitecache.rest import (
    RestRequest,
    RestResponse,
    RestServer,
    authorization_required_status,
    return_true,
)
from sitecache.rest.collection_args import context_param
from sitecache.rest.pagination import paginated_response
from sitecache.schema import filter_response_by_context, get_endpoint_args_for_schema
from sitecache.schema.dates import format_timestamp

__all__ = ["UserRoutes", "avatar_url", "collection_args"]

NAMESPACE: Final = "site/v2"
REST_BASE: Final = "users"

_AUTHOR_ROLES: Final = tuple(role for role in ROLES if "edit_posts" in ROLE_CAPABILITIES[role])
"""``who=authors``: the roles that can write posts (WordPress's user level above 0)."""
_SEARCH_ALL: Final = ("login", "email", "display_name", "slug", "url")
_SEARCH_PUBLIC: Final = ("login", "display_name", "slug")
"""What a search matches for callers without ``list_users`` (as WordPress: never e-mails)."""


def avatar_url(email: str, size: int) -> str:
    """A Gravatar URL for an e-mail address (SHA-256 of the trimmed, lower-cased address;
    ``d=mm`` falls back to the mystery person, ``r=g`` keeps it suitable for all audiences)."""
    digest = hashlib.sha256(email.strip().lower().encode("utf-8")).hexdigest()
    return f"https://secure.gravatar.com/avatar/{digest}?s={size}&d=mm&r=g"


def _rfc3339(timestamp: int) -> str:
    return format_timestamp(timestamp).replace(" ", "T") + "+00:00"


def _error(code: str, message: str, request: RestRequest) -> RestError:
    return RestError(code, message, {"status": authorization_required_status(request.user)})


def _invalid_id() -> RestError:
    return RestError("rest_user_invalid_id", "Invalid user ID.", {"status": 404})


def _is_id(raw: object) -> bool:
    text = str(raw)
    return text.isascii() and text.isdigit() and len(text) <= 19 and int(text) < 2**63


class UserRoutes:
    """The users controller: permission checks and handlers bound to the user repository."""

    def __init__(self, users: UserRepository) -> None:
        self.users = users
        self._server: RestServer | None = None

    @property
    def server(self) -> RestServer:
        """The REST server the routes were registered on."""
        if self._server is None:
            raise RuntimeError("the user routes are not registered yet")
        return self._server

    # ------------------------------------------------------------------ registration
    def avatar_sizes(self) -> list[int]:
        """The avatar sizes (filter ``rest_avatar_sizes``, default 24, 48 and 96)."""
        sizes = self.server.hooks.apply_filters("rest_avatar_sizes", list(DEFAULT_AVATAR_SIZES))
        if not isinstance(sizes, Sequence):
            return list(DEFAULT_AVATAR_SIZES)
        return [int(size) for size in sizes if isinstance(size, int) and size > 0]

    def schema(self) -> dict[str, Any]:
        """The ``user`` schema as published (no ``arg_options``), with the current avatar
        sizes."""
        return public_schema(user_schema(self.avatar_sizes()))

    def register(self, server: RestServer) -> None:
        """The ``rest_api_init`` callback: ``/users``, ``/users/<id>`` and ``/users/me``."""
        self._server = server
        schema = user_schema(DEFAULT_AVATAR_SIZES)
        self._register_collection(server, schema)
        self._register_item(server, schema)
        self._register_me(server, schema)

    def _register_collection(self, server: RestServer, schema: dict[str, Any]) -> None:
        server.register_rest_route(
            NAMESPACE,
            f"/{REST_BASE}",
            [
                {
                    "methods": "GET",
                    "callback": self.get_items,
                    "permission_callback": self.get_items_permissions_check,
                    "args": collection_args(),
                },
                {
                    "methods": "POST",
                    "callback": self.create_item,
                    "permission_callback": self.create_item_permissions_check,
                    "args": get_endpoint_args_for_schema(schema, "POST"),
                },
            ],
            schema=self.schema,
            allow_batch={"v1": True},
        )

    def _register_item(self, server: RestServer, schema: dict[str, Any]) -> None:
        server.register_rest_route(
            NAMESPACE,
            f"/{REST_BASE}/(?P<id>[\\d]+)",
            [
                {
                    "methods": "GET",
                    "callback": self.get_item,
                    "permission_callback": self.get_item_permissions_check,
                    "args": {"id": dict(ID_ARG), "context": context_param()},
                },
                {
                    "methods": "POST, PUT, PATCH",
                    "callback": self.update_item,
                    "permission_callback": self.update_item_permissions_check,
                    "args": {
                        "id": dict(ID_ARG),
                        **get_endpoint_args_for_schema(schema, "POST, PUT, PATCH"),
                    },
                },
                {
                    "methods": "DELETE",
                    "callback": self.delete_item,
                    "permission_callback": self.delete_item_permissions_check,
                    "args": delete_args(True),
                },
            ],
            schema=self.schema,
            allow_batch={"v1": True},
        )

    def _register_me(self, server: RestServer, schema: dict[str, Any]) -> None:
        server.register_rest_route(
            NAMESPACE,
            f"/{REST_BASE}/me",
            [
                {
                    "methods": "GET",
                    "callback": self.get_current_item,
                    "permission_callback": return_true,
                    "args": {"context": context_param()},
                },
                {
                    "methods": "POST, PUT, PATCH",
                    "callback": self.update_current_item,
                    "permission_callback": self.update_current_item_permissions_check,
                    "args": get_endpoint_args_for_schema(schema, "POST, PUT, PATCH"),
                },
                {
                    "methods": "DELETE",
                    "callback": self.delete_current_item,
                    "permission_callback": self.delete_current_item_permissions_check,
                    "args": delete_args(False),
                },
            ],
            schema=self.schema,
        )

    # ------------------------------------------------------------------ lookups
    def published_author_ids(self) -> set[int]:
        """Ids of users with published posts (filter ``published_author_ids``; the content
        store answers it, and without content the set is empty)."""
        ids = self.server.hooks.apply_filters("published_author_ids", set())
        return {int(value) for value in ids or () if isinstance(value, int)}

    def _find_user(self, request: RestRequest) -> SiteUser | None:
        """The user the request's ``id`` names, or ``None``.

        The query's (or body's) ``id`` overrides the URL's, as WordPress reads ``$request['id']``;
        anything but the digits of a 64-bit id names no user (never an exception: the ``Allow``
        header asks the permission checks before validation refuses ``?id=x``).
        """
        raw = str(request.get_param("id"))
        return self.users.get(int(raw)) if _is_id(raw) and int(raw) > 0 else None

    def _user(self, request: RestRequest) -> SiteUser:
        """The user the request's ``id`` names.

        Raises:
            RestError: 404 ``rest_user_invalid_id`` when it names none.
        """
        found = self._find_user(request)
        if found is None:
            raise _invalid_id()
        return found

    # ------------------------------------------------------------------ permissions
    def get_items_permissions_check(self, request: RestRequest) -> bool:
        """``list_users`` for the edit context, ordering by e-mail or date, and role filters;
        ``edit_posts`` for ``who=authors``."""
        can_list = request.user.can("list_users")
        if request["context"] == "edit" and not can_list:
            raise _error(
                "rest_forbidden_context", "Sorry, you are not allowed to edit users.", request
            )
        if request["orderby"] in ("email", "registered_date") and not can_list:
            raise _error(
                "rest_forbidden_orderby",
                "Sorry, you are not allowed to order users by this parameter.",
                request,
            )
        if request["who"] == "authors" and not request.user.can("edit_posts"):
            raise _error(
                "rest_forbidden_who",
                "Sorry, you are not allowed to query users by this parameter.",
                request,
            )
        if request["roles"] and not can_list:
            raise _error(
                "rest_user_cannot_view",
                "Sorry, you are not allowed to filter users by role.",
                request,
            )
        return True

    def get_item_permissions_check(self, request: RestRequest) -> bool:
        """Yourself always; anyone with ``list_users``; a published author for everybody in
        the view and embed contexts. Callers without ``list_users`` get the same answer for an
        unknown id as for a user they may not see."""
        can_list = request.user.can("list_users")
        user = self._find_user(request)
        if user is None:
            # SECURITY: without list_users, an unknown id looks like a hidden user.
            raise _invalid_id() if can_list else self._cannot_view(request)
        if request.user.id and user.id == request.user.id:
            return True
        if request["context"] == "edit" and not can_list:
            raise _error(
                "rest_forbidden_context", "Sorry, you are not allowed to edit users.", request
            )
        if can_list or user.id in self.published_author_ids():
            return True
        raise self._cannot_view(request)

    @staticmethod
    def _cannot_view(request: RestRequest) -> RestError:
        return _error("rest_user_cannot_view", "Sorry, you are not allowed to list users.", request)

    def create_item_permissions_check(self, request: RestRequest) -> bool:
        """``create_users``; giving a role other than the default needs ``promote_users``."""
        if not request.user.can("create_users"):
            raise _error(
                "rest_cannot_create_user",
                "Sorry, you are not allowed to create new users.",
                request,
            )
        return True

    def update_item_permissions_check(self, request: RestRequest) -> bool:
        """``edit_user`` on the user; changing roles needs ``promote_user``."""
        user = self._find_user(request)
        if user is None:
            raise _invalid_id() if request.user.can("list_users") else self._cannot_edit(request)
        if not request.user.can("edit_user", user.id):
            raise self._cannot_edit(request)
        if request["roles"] is not None and not request.user.can("promote_user", user.id):
            raise _error(
                "rest_cannot_edit_roles",
                "Sorry, you are not allowed to edit roles of this user.",
                request,
            )
        return True

    @staticmethod
    def _cannot_edit(request: RestRequest) -> RestError:
        return _error("rest_cannot_edit", "Sorry, you are not allowed to edit this user.", request)

    def delete_item_permissions_check(self, request: RestRequest) -> bool:
        """``delete_user`` (the ``delete_users`` capability), even on yourself."""
        user = self._find_user(request)
        if user is None:
            raise _invalid_id() if request.user.can("list_users") else self._cannot_delete(request)
        if not request.user.can("delete_user", user.id):
            raise self._cannot_delete(request)
        return True

    @staticmethod
    def _cannot_delete(request: RestRequest) -> RestError:
        return _error(
            "rest_user_cannot_delete", "Sorry, you are not allowed to delete this user.", request
        )

    @staticmethod
    def _not_logged_in() -> RestError:
        return RestError("rest_not_logged_in", "You are not currently logged in.", {"status": 401})

    def _as_current(self, request: RestRequest) -> RestRequest:
        """Point the request at the current user (``me``); returns it.

        Raises:
            RestError: 401 ``rest_not_logged_in`` for an anonymous caller.
        """
        if not request.user.id:
            raise self._not_logged_in()
        request.set_url_params({"id": str(request.user.id)})
        return request

    def update_current_item_permissions_check(self, request: RestRequest) -> bool:
        """A logged-in user may edit themself (roles still need ``promote_user``)."""
        return self.update_item_permissions_check(self._as_current(request))

    def delete_current_item_permissions_check(self, request: RestRequest) -> bool:
        """Deleting yourself needs ``delete_users`` like deleting anyone."""
        return self.delete_item_permissions_check(self._as_current(request))

    # ------------------------------------------------------------------ shaping
    def item_url(self, user: SiteUser) -> str:
        """The REST URL of one user."""
        return self.server.rest_url(f"/{NAMESPACE}/{REST_BASE}/{user.id}")

    def author_link(self, user: SiteUser) -> str:
        """The author archive: ``{home}/author/{slug}/``."""
        return f"{self.server.home_url()}/author/{user.slug}/"

    def prepare(self, user: SiteUser) -> RestResponse:
        """Every field of the user (the server drops those the context hides) and its links."""
        granted = sorted(ROLE_CAPABILITIES.get(user.role, frozenset()))
        avatars: dict[str, str] = {}
        for size in self.avatar_sizes():
            url = self.server.hooks.apply_filters(
                "get_avatar_url", avatar_url(user.email, size), user, size
            )
            avatars[str(size)] = str(url)
        data: dict[str, Any] = {
            "id": user.id,
            "username": user.login,
            "name": user.display_name,
            "first_name": user.first_name,
            "last_name": user.last_name,
            "email": user.email,
            "url": user.url,
            "description": user.description,
            "link": self.author_link(user),
            "locale": user.locale,
            "nickname": user.nickname,
            "slug": user.slug,
            "roles": [user.role],
            "registered_date": _rfc3339(user.registered),
            "capabilities": {**dict.fromkeys(granted, True), user.role: True},
            "extra_capabilities": {user.role: True},
            "avatar_urls": avatars,
            "meta": {},
        }
        response = RestResponse(data)
        response.add_link("self", self.item_url(user))
        response.add_link("collection", self.server.rest_url(f"/{NAMESPACE}/{REST_BASE}"))
        return response

    def _edit_data(self, user: SiteUser) -> Any:
        data = self.server.response_to_data(self.prepare(user), False)
        return filter_response_by_context(data, self.schema(), "edit")

    # ------------------------------------------------------------------ reading
    def get_items(self, request: RestRequest) -> Any:
        """GET the collection, one page at a time, with the totals and prev/next links."""
        per_page = int(request["per_page"] or 10)
        page = int(request["page"] or 1)
        offset = request["offset"]
        roles = [str(role) for role in request["roles"] or []]
        include = [int(value) for value in request["include"] or []]
        if request["who"] == "authors":
            roles = [role for role in (roles or _AUTHOR_ROLES) if role in _AUTHOR_ROLES] or [""]
        elif not request.user.can("list_users"):
            # WordPress lists only users with published posts to such callers.
            published = self.published_author_ids()
            include = [i for i in include if i in published] if include else sorted(published)
            if not include:
                include = [0]  # nobody: no user has id 0
        can_list = request.user.can("list_users")
        query = UserQuery(
            search=str(request["search"] or ""),
            # SECURITY: without list_users, searching never matches e-mail addresses or urls.
            search_columns=_SEARCH_ALL if can_list else _SEARCH_PUBLIC,
            include=include,
            exclude=[int(value) for value in request["exclude"] or []],
            slugs=[str(value) for value in request["slug"] or []],
            roles=roles,
            orderby=str(request["orderby"] or "name"),
            order=str(request["order"] or "asc"),
            limit=per_page,
            offset=int(offset) if offset else (page - 1) * per_page,
        )
        users, total = self.users.query(query)
        items = [self.server.response_to_data(self.prepare(user), False) for user in users]
        return paginated_response(self.server, request, items, total, per_page, page)

    def get_item(self, request: RestRequest) -> Any:
        """GET one user."""
        return self.prepare(self._user(request))

    def get_current_item(self, request: RestRequest) -> Any:
        """GET the current user (401 ``rest_not_logged_in`` for an anonymous caller)."""
        if not request.user.id:
            raise self._not_logged_in()
        user = self.users.get(request.user.id)
        if user is None:
            raise self._not_logged_in()
        return self.prepare(user)

    # ------------------------------------------------------------------ writing
    def _role(self, request: RestRequest, user: SiteUser | None) -> str | None:
        """The one role of ``roles`` (``None`` when not given), after WordPress's checks."""
        roles = request["roles"]
        if roles is None:
            return None
        names = [str(role) for role in roles]
        if len(names) != 1:
            raise RestError(
                "rest_user_invalid_role", "A user has exactly one role here.", {"status": 400}
            )
        role = names[0]
        if role not in ROLES:
            raise RestError(
                "rest_user_invalid_role", f"The role {role} does not exist.", {"status": 400}
            )
        if (
            user is not None
            and user.id == request.user.id
            and "edit_users" not in ROLE_CAPABILITIES[role]
        ):
            raise _error(
                "rest_user_invalid_role",
                "Sorry, you are not allowed to give users that role.",
                request,
            )
        return role

    @staticmethod
    def _profile(request: RestRequest) -> dict[str, Any]:
        fields = {
            "first_name": "first_name",
            "last_name": "last_name",
            "url": "url",
            "description": "description",
            "locale": "locale",
            "nickname": "nickname",
            "slug": "slug",
            "name": "display_name",
            "email": "email",
        }
        return {column: request[key] for key, column in fields.items() if request.has_param(key)}

    def create_item(self, request: RestRequest) -> Any:
        """POST: a new user (201, ``Location``, the edit context)."""
        role = self._role(request, None)
        if role is not None and role != "subscriber" and not request.user.can("promote_users"):
            raise _error(
                "rest_cannot_edit_roles",
                "Sorry, you are not allowed to edit roles of this user.",
                request,
            )
        profile = self._profile(request)
        email = profile.pop("email", None)
        display_name = profile.pop("display_name", None)
        user = self.users.create(
            str(request["username"]),
            str(request["password"]),
            role or "subscriber",
            email=str(email) if email is not None else None,
            display_name=str(display_name) if display_name else None,
            profile={key: str(value) for key, value in profile.items()},
        )
        self.server.hooks.do_action("user_register", user.id)
        request.set_param("context", "edit")
        response = self.prepare(user)
        response.set_status(201)
        response.header("Location", self.item_url(user))
        return response

    def update_item(self, request: RestRequest) -> Any:
        """POST/PUT/PATCH: change the user's profile, e-mail, role or password."""
        user = self._user(request)
        username = request["username"]
        if username is not None and str(username) != user.login:
            raise RestError(
                "rest_user_invalid_argument", "Username isn't editable.", {"status": 400}
            )
        role = self._role(request, user)
        changes = self._profile(request)
        if role is not None:
            changes["role"] = role
        if "email" in changes:
            existing = self.users.find(str(changes["email"]))
            if existing is not None and existing.id != user.id:
                raise RestError(
                    "rest_user_invalid_email", "Invalid email address.", {"status": 400}
                )
        updated = self.users.update(user, changes)
        if request["password"] is not None:
            self.users.set_password(updated, str(request["password"]))
        self.server.hooks.do_action("profile_update", updated.id, user)
        request.set_param("context", "edit")
        return self.prepare(updated)

    def update_current_item(self, request: RestRequest) -> Any:
        """POST/PUT/PATCH ``me``."""
        return self.update_item(self._as_current(request))

    def delete_item(self, request: RestRequest) -> Any:
        """DELETE with ``force=true``: ``{"deleted": true, "previous": user}``.

        ``reassign`` must name another existing user (or be ``false``); it is handed to the
        ``delete_user`` action, which the content store uses to give the posts away.
        """
        user = self._user(request)
        if request["force"] is not True:
            raise RestError(
                "rest_trash_not_supported",
                "Users do not support trashing. Set 'force' to true to delete.",
                {"status": 501},
            )
        reassign = request["reassign"]
        if reassign is not None:
            target = self.users.get(int(reassign))
            if target is None or target.id == user.id:
                raise RestError(
                    "rest_user_invalid_reassign",
                    "Invalid user ID for reassignment.",
                    {"status": 400},
                )
        if self.users.is_last_administrator(user):
            # Refused before the delete_user action runs (it may give the posts away); the
            # repository checks again inside its transaction.
            raise RestError(
                "rest_user_last_administrator",
                "The site's last administrator cannot be deleted.",
                {"status": 409},
            )
        previous = self._edit_data(user)
        self.server.hooks.do_action("delete_user", user.id, reassign, user)
        if not self.users.delete(user):
            raise RestError("rest_cannot_delete", "The user cannot be deleted.", {"status": 500})
        self.server.hooks.do_action("deleted_user", user.id, reassign, user)
        return {"deleted": True, "previous": previous}

    def delete_current_item(self, request: RestRequest) -> Any:
        """DELETE ``me``."""
        return self.delete_item(self._as_current(request))
