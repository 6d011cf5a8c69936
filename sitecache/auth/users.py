"""Users: creating, finding, listing, updating and deleting registered users, and their passwords.

A user's profile (``slug``, ``url``, ``first_name``, ``last_name``, ``nickname``,
``description``, ``locale``) lives in the same row as the login; the slug (WordPress's
``user_nicename``) names the author archive and is unique.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from sitecache.auth.db import DbConnection, IntegrityError, Row
from sitecache.auth.passwords import PasswordHasher
from sitecache.auth.roles import ROLES, SiteUser
from sitecache.auth.store import SiteStore, sql_values
from sitecache.bounded_memo import BoundedMemo
from sitecache.domain_errors import ConflictError, InvalidValueError, NotFoundError
from sitecache.schema import is_email

__all__ = [
    "LOGIN_PATTERN",
    "LOGIN_RULE",
    "MIN_PASSWORD_LENGTH",
    "PROFILE_FIELDS",
    "USER_COLUMNS",
    "UserChangeListener",
    "UserQuery",
    "UserRepository",
    "slugify",
    "user_from_row",
]

MIN_PASSWORD_LENGTH: Final = 8
LOGIN_PATTERN: Final = re.compile(r"^[A-Za-z0-9 _.@-]{1,60}\Z")
#: `LOGIN_PATTERN` in words (the refusal of a new user's login, here and on the command line).
LOGIN_RULE: Final = (
    "A login is 1 to 60 characters: ASCII letters (a-z, A-Z), digits (0-9), spaces and "
    "_ . @ - (no accented letters or other scripts)."
)
PROFILE_FIELDS: Final = (
    "slug",
    "url",
    "first_name",
    "last_name",
    "nickname",
    "description",
    "locale",
)
"""The profile columns `UserRepository.update` (and ``create``'s ``profile``) accept."""
USER_COLUMNS: Final = (
    "id",
    "login",
    "email",
    "display_name",
    "role",
    "registered",
    *PROFILE_FIELDS,
)
"""The ``users`` columns a `SiteUser` is built from (`user_from_row`); the password hash is not
one of them."""
_BUILT_KEPT: Final = 256
"""Most users kept built from their rows (`UserRepository._from_row`)."""
_UPDATABLE: Final = frozenset({"email", "display_name", "role", *PROFILE_FIELDS})
_ORDER_COLUMNS: Final[Mapping[str, str]] = {
    "id": "id",
    "name": "lower(display_name)",
    "registered_date": "registered",
    "slug": "slug",
    "email": "email",
    "url": "url",
    "username": "login",
}
"""``orderby`` values and the SQL they sort by (fixed strings, never user input)."""


def slugify(text: str) -> str:
    """A user slug from a login (``sanitize_title`` of WordPress, for logins): lower case,
    spaces and dots become hyphens, anything but letters, digits, ``_`` and ``-`` is dropped."""
    lowered = text.strip().lower().replace(" ", "-").replace(".", "-")
    kept = re.sub(r"[^a-z0-9_-]", "", lowered)
    return re.sub(r"-{2,}", "-", kept).strip("-")[:50]


@dataclass(frozen=True, slots=True)
class UserQuery:
    """What `UserRepository.query` selects: every field narrows the result (empty = any)."""

    search: str = ""
    search_columns: Collection[str] = ("login", "email", "display_name", "slug", "url")
    include: Collection[int] = ()
    exclude: Collection[int] = ()
    slugs: Collection[str] = ()
    roles: Collection[str] = ()
    orderby: str = "name"
    order: str = "asc"
    limit: int = 10
    offset: int = 0


def _already_used(field: str) -> ConflictError:
    noun = "email address" if field == "email" else "username"
    return ConflictError(f"existing_user_{field}", f"Sorry, that {noun} is already used.")


def user_from_row(row: Row) -> SiteUser:
    """The `SiteUser` of a row that holds the `USER_COLUMNS` by name (a row of ``users``, or of
    a join that selects them unrenamed)."""
    return SiteUser(
        id=int(row["id"]),
        login=str(row["login"]),
        email=str(row["email"]),
        display_name=str(row["display_name"]),
        role=str(row["role"]),
        registered=int(row["registered"]),
        **{name: str(row[name]) for name in PROFILE_FIELDS},
    )


class UserChangeListener(Protocol):
    """Told of each change to a user's row inside the change's own transaction, then once
    more after it committed: what a change owes elsewhere (the pages showing the user's name
    to purge) is recorded with the change itself, so a crash cannot keep one without the
    other."""

    def user_changing(
        self, db: DbConnection, before: SiteUser, changed: Mapping[str, str] | None
    ) -> None:
        """Inside the transaction: ``before`` is the user as it was; ``changed`` the columns
        written and their new values, or ``None`` when the user is being deleted."""

    def user_changed(self) -> None:
        """After the transaction committed."""


class UserRepository:
    """The users of one site.

    Args:
        store: the site database.
        hasher: how passwords are hashed.
        clock: seconds since the epoch (``time.time``).
    """

    def __init__(
        self,
        store: SiteStore,
        hasher: PasswordHasher,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.hasher = hasher
        self.clock = clock
        self.change_listeners: list[UserChangeListener] = []
        """Told of every profile change and deletion (`UserChangeListener`)."""
        self._built: BoundedMemo[tuple[Any, ...], SiteUser] = BoundedMemo(_BUILT_KEPT)
        """Users built from single-row reads, by the row's values: a `SiteUser` is immutable
        and an edited row is another key (at most `_BUILT_KEPT`, then all are dropped)."""

    def _from_row(self, row: Row) -> SiteUser:
        """`_user` of ``row``, built once per distinct row (every authenticated request reads
        its user)."""
        key = tuple(row)
        user = self._built.get(key)
        if user is None:
            user = self._built.keep(key, user_from_row(row))
        return user

    def create(
        self,
        login: str,
        password: str,
        role: str = "subscriber",
        email: str | None = None,
        display_name: str | None = None,
        profile: Mapping[str, str] | None = None,
    ) -> SiteUser:
        """Register a user.

        Raises:
            ConflictError: ``existing_user_login``, ``existing_user_email``.
            InvalidValueError: ``invalid_username``, ``invalid_email``, ``invalid_role``,
                ``weak_password`` or ``rest_user_invalid_slug``.
            ValueError: ``profile`` names a field that is not in `PROFILE_FIELDS`.
        """
        fields = {name: str(value) for name, value in (profile or {}).items()}
        unknown = set(fields) - set(PROFILE_FIELDS)
        if unknown:
            raise ValueError(f"unknown profile fields: {', '.join(sorted(unknown))}")
        login = login.strip()
        address = _check_new_user(login, password, role, email)
        try:
            with self.store.transaction() as db:
                for field, value in (("login", login), ("email", address)):
                    taken = db.execute(
                        f"SELECT 1 FROM users WHERE lower({field}) = lower(?)",  # noqa: S608 - fixed names
                        (value,),
                    ).fetchone()
                    if taken is not None:
                        raise _already_used(field)
                fields["slug"] = self._new_slug(db, fields.get("slug", ""), login)
                fields.setdefault("nickname", login)
                columns = ", ".join(fields)
                cursor = db.execute(
                    "INSERT INTO users (login, email, display_name, role, password_hash,"  # noqa: S608 - names checked above
                    f" registered, {columns}) VALUES (?, ?, ?, ?, ?, ?"
                    f"{', ?' * len(fields)}) RETURNING id",
                    (
                        login,
                        address,
                        display_name or login,
                        role,
                        self.hasher.hash(password),
                        int(self.clock()),
                        *fields.values(),
                    ),
                )
                user_id = int(cursor.fetchone()[0])
        except IntegrityError as exc:  # a concurrent insert won the race
            raise _already_used("email" if "email" in str(exc) else "login") from exc
        found = self.get(user_id)
        if found is None:  # pragma: no cover - the row was inserted in this very transaction
            raise RuntimeError(f"user {user_id} vanished right after it was created")
        return found

    def get(self, user_id: int) -> SiteUser | None:
        """The user with this id, or ``None``."""
        row = (
            self.store.connection()
            .execute("SELECT * FROM users WHERE id = ?", sql_values([user_id]))
            .fetchone()
        )
        return None if row is None else self._from_row(row)

    def find(self, login_or_email: str) -> SiteUser | None:
        """The user with this login, or else this e-mail address (case-insensitive)."""
        connection = self.store.connection()
        row = connection.execute(
            "SELECT * FROM users WHERE lower(login) = lower(?)", (login_or_email,)
        ).fetchone()
        if row is None and "@" in login_or_email:
            row = connection.execute(
                "SELECT * FROM users WHERE lower(email) = lower(?)", (login_or_email,)
            ).fetchone()
        return None if row is None else self._from_row(row)

    def find_by_slug(self, slug: str) -> SiteUser | None:
        """The user whose slug (author-archive name) is ``slug``, or ``None``."""
        row = (
            self.store.connection()
            .execute("SELECT * FROM users WHERE slug = ?", (slug,))
            .fetchone()
        )
        return None if row is None else self._from_row(row)

    def all(self) -> list[SiteUser]:
        """Every user, by id."""
        rows = self.store.connection().execute("SELECT * FROM users ORDER BY id").fetchall()
        return [user_from_row(row) for row in rows]

    def count(self) -> int:
        """How many users are registered."""
        return int(self.store.connection().execute("SELECT COUNT(*) FROM users").fetchone()[0])

    def check_password(self, user: SiteUser, password: str) -> bool:
        """Whether ``password`` is this user's password (constant-time)."""
        row = (
            self.store.connection()
            .execute("SELECT password_hash FROM users WHERE id = ?", (user.id,))
            .fetchone()
        )
        if row is None:
            self.hasher.burn(password)
            return False
        return self.hasher.verify(password, str(row["password_hash"]))

    def set_password(self, user: SiteUser, password: str) -> None:
        """Replace a user's password (and end every session of theirs).

        Raises:
            InvalidValueError: ``weak_password``.
        """
        if len(password) < MIN_PASSWORD_LENGTH:
            raise _weak_password()
        with self.store.transaction() as db:
            db.execute(
                "UPDATE users SET password_hash = ? WHERE id = ?",
                (self.hasher.hash(password), user.id),
            )
            db.execute("DELETE FROM sessions WHERE user_id = ?", (user.id,))

    # ------------------------------------------------------------------ listing
    def query(self, query: UserQuery) -> tuple[list[SiteUser], int]:
        """One page of the users ``query`` selects, and how many it selects in all.

        ``search`` matches the ``search_columns`` (login, e-mail, display name, slug and url by
        default) as a case-insensitive substring (``*`` at either end is accepted and ignored,
        as WordPress adds them).
        """
        columns = [column for column in _SEARCHED if column in query.search_columns]
        where: list[str] = []
        params: list[Any] = []
        term = query.search.strip().strip("*")
        if term and not columns:
            where.append("1 = 0")
        elif term:
            pattern = "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            where.append(
                "("
                + " OR ".join(f"lower({column}) LIKE lower(?) ESCAPE '\\'" for column in columns)
                + ")"
            )
            params.extend([pattern] * len(columns))
        for column, values in (
            ("id", query.include),
            ("slug", query.slugs),
            ("role", query.roles),
        ):
            if values:
                where.append(f"{column} IN ({', '.join('?' * len(values))})")
                params.extend(values)
        if query.exclude:
            where.append(f"id NOT IN ({', '.join('?' * len(query.exclude))})")
            params.extend(query.exclude)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        direction = "DESC" if query.order == "desc" else "ASC"
        column = _ORDER_COLUMNS.get(query.orderby, "lower(display_name)")
        connection = self.store.connection()
        total = int(
            connection.execute(
                f"SELECT COUNT(*) FROM users{clause}",  # noqa: S608 - fixed fragments, values bound
                sql_values(params),
            ).fetchone()[0]
        )
        rows = connection.execute(
            f"SELECT * FROM users{clause} ORDER BY {column} {direction}, id {direction}"  # noqa: S608 - fixed fragments, values bound
            " LIMIT ? OFFSET ?",
            sql_values([*params, query.limit, query.offset]),
        ).fetchall()
        users = [user_from_row(row) for row in rows]
        if query.orderby in ("include", "include_slugs"):
            keys: list[Any] = list(query.include if query.orderby == "include" else query.slugs)
            position = {key: index for index, key in enumerate(keys)}
            users.sort(
                key=lambda user: position.get(
                    user.id if query.orderby == "include" else user.slug, len(keys)
                ),
                reverse=query.order == "desc",
            )
        return users, total

    def count_role(self, role: str) -> int:
        """How many users have ``role``."""
        row = (
            self.store.connection()
            .execute("SELECT COUNT(*) FROM users WHERE role = ?", (role,))
            .fetchone()
        )
        return int(row[0])

    def is_last_administrator(self, user: SiteUser) -> bool:
        """Whether ``user`` is the site's only administrator (deleting or demoting them is
        refused)."""
        stored = self.get(user.id)
        return (
            stored is not None
            and stored.role == "administrator"
            and self.count_role("administrator") == 1
        )

    # ------------------------------------------------------------------ changing
    def update(self, user: SiteUser, changes: Mapping[str, Any]) -> SiteUser:
        """Change a user's e-mail, display name, role or profile; returns the user as stored.

        Raises:
            ConflictError: ``existing_user_email``; ``rest_user_last_administrator`` when the
                change would leave the site without an administrator.
            InvalidValueError: ``invalid_email``, ``invalid_role``, ``rest_user_invalid_slug``.
            NotFoundError: ``rest_user_invalid_id`` when the user is gone.
            ValueError: a field that cannot be changed (the login, the id).
        """
        unknown = set(changes) - _UPDATABLE
        if unknown:
            raise ValueError(f"cannot update: {', '.join(sorted(unknown))}")
        fields = {name: str(value) for name, value in changes.items()}
        if "role" in fields and fields["role"] not in ROLES:
            raise _invalid_role()
        if "email" in fields and not is_email(fields["email"]):
            raise _invalid_email()
        if not fields:
            return self._reload(user.id)
        try:
            with self.store.transaction() as db:
                if "email" in fields:
                    taken = db.execute(
                        "SELECT 1 FROM users WHERE lower(email) = lower(?) AND id != ?",
                        (fields["email"], user.id),
                    ).fetchone()
                    if taken is not None:
                        raise _already_used("email")
                if "slug" in fields:
                    fields["slug"] = slugify(fields["slug"])
                    if not fields["slug"]:
                        raise _invalid_slug()
                    self._check_slug_free(db, fields["slug"], user.id)
                if fields.get("role", "administrator") != "administrator":
                    _keep_an_administrator(db, user.id, "lose the administrator role")
                assignments = ", ".join(f"{name} = ?" for name in fields)
                cursor = db.execute(
                    f"UPDATE users SET {assignments} WHERE id = ?",  # noqa: S608 - names checked above
                    (*fields.values(), user.id),
                )
                if cursor.rowcount == 0:
                    raise _no_such_user()
                for listener in self.change_listeners:
                    listener.user_changing(db, user, fields)
        except IntegrityError as exc:  # a concurrent update won the race
            raise _already_used("email") from exc
        for listener in self.change_listeners:
            listener.user_changed()
        return self._reload(user.id)

    def delete(self, user: SiteUser) -> bool:
        """Delete a user with their sessions and application passwords; ``False`` if gone.

        Raises:
            ConflictError: ``rest_user_last_administrator``: the site keeps an administrator.
        """
        with self.store.transaction() as db:
            _keep_an_administrator(db, user.id, "be deleted")
            cursor = db.execute("DELETE FROM users WHERE id = ?", (user.id,))
            if cursor.rowcount > 0:
                for listener in self.change_listeners:
                    listener.user_changing(db, user, None)
        for listener in self.change_listeners:
            listener.user_changed()
        return bool(cursor.rowcount > 0)

    # ------------------------------------------------------------------ helpers
    def _reload(self, user_id: int) -> SiteUser:
        found = self.get(user_id)
        if found is None:
            raise _no_such_user()
        return found

    def _new_slug(self, db: DbConnection, given: str, login: str) -> str:
        """A new user's slug: the one given, if free; else one made unique from the login."""
        if not given:
            return self._unique_slug(db, slugify(login) or "user", None)
        slug = slugify(given)
        if not slug:
            raise _invalid_slug()
        self._check_slug_free(db, slug, None)
        return slug

    @staticmethod
    def _check_slug_free(db: DbConnection, slug: str, user_id: int | None) -> None:
        row = db.execute(
            "SELECT 1 FROM users WHERE slug = ? AND id != ?", (slug, user_id or 0)
        ).fetchone()
        if row is not None:
            raise _invalid_slug()

    @staticmethod
    def _unique_slug(db: DbConnection, base: str, user_id: int | None) -> str:
        candidate, suffix = base, 2
        while (
            db.execute(
                "SELECT 1 FROM users WHERE slug = ? AND id != ?", (candidate, user_id or 0)
            ).fetchone()
            is not None
        ):
            candidate, suffix = f"{base}-{suffix}", suffix + 1
        return candidate


_SEARCHED: Final = ("login", "email", "display_name", "slug", "url")


def _check_new_user(login: str, password: str, role: str, email: str | None) -> str:
    """Refuse a new user's login, role, password or e-mail address (checked in this order);
    returns the address (a placeholder under ``example.invalid`` when none is given)."""
    if not LOGIN_PATTERN.match(login):
        raise InvalidValueError(
            "invalid_username",
            LOGIN_RULE,
        )
    if role not in ROLES:
        raise _invalid_role()
    if len(password) < MIN_PASSWORD_LENGTH:
        raise _weak_password()
    address = email if email is not None else f"{login.replace(' ', '.')}@example.invalid"
    if not is_email(address):
        raise _invalid_email()
    return address


def _keep_an_administrator(db: DbConnection, user_id: int, what: str) -> None:
    """Refuse (inside the write transaction, so two requests cannot race past it) a change
    that would leave the site without an administrator."""
    # SECURITY: a site always keeps an administrator (recovery needs no database surgery).
    row = db.execute("SELECT role FROM users WHERE id = ?", (user_id,)).fetchone()
    if row is None or row["role"] != "administrator":
        return
    others = db.execute(
        "SELECT COUNT(*) FROM users WHERE role = 'administrator' AND id != ?", (user_id,)
    ).fetchone()[0]
    if not others:
        raise ConflictError(
            "rest_user_last_administrator", f"The site's last administrator cannot {what}."
        )


def _invalid_slug() -> InvalidValueError:
    return InvalidValueError("rest_user_invalid_slug", "Invalid slug.")


def _invalid_role() -> InvalidValueError:
    return InvalidValueError("invalid_role", f"The role must be one of: {', '.join(ROLES)}.")


def _invalid_email() -> InvalidValueError:
    return InvalidValueError("invalid_email", "The email address is not valid.")


def _weak_password() -> InvalidValueError:
    return InvalidValueError(
        "weak_password", f"A password has at least {MIN_PASSWORD_LENGTH} characters."
    )


def _no_such_user() -> NotFoundError:
    return NotFoundError("rest_user_invalid_id", "Invalid user ID.")
