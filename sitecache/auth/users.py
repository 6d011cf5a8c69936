"""Users: creating, finding and checking the passwords of registered users."""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable
from typing import Final

from sitecache.auth.passwords import PasswordHasher
from sitecache.auth.roles import ROLES, SiteUser
from sitecache.auth.store import SiteStore
from sitecache.errors import RestError
from sitecache.schema import is_email

__all__ = ["MIN_PASSWORD_LENGTH", "UserRepository"]

MIN_PASSWORD_LENGTH: Final = 8
_LOGIN = re.compile(r"^[A-Za-z0-9 _.@-]{1,60}\Z")


def _already_used(field: str) -> RestError:
    noun = "email address" if field == "email" else "username"
    return RestError(
        f"existing_user_{field}", f"Sorry, that {noun} is already used.", {"status": 409}
    )


def _user(row: sqlite3.Row) -> SiteUser:
    return SiteUser(
        id=int(row["id"]),
        login=str(row["login"]),
        email=str(row["email"]),
        display_name=str(row["display_name"]),
        role=str(row["role"]),
        registered=int(row["registered"]),
    )


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

    def create(
        self,
        login: str,
        password: str,
        role: str = "subscriber",
        email: str | None = None,
        display_name: str | None = None,
    ) -> SiteUser:
        """Register a user.

        Raises:
            RestError: ``existing_user_login``, ``existing_user_email``, ``invalid_username``,
                ``invalid_email``, ``invalid_role`` or ``weak_password`` (status 400/409).
        """
        login = login.strip()
        if not _LOGIN.match(login):
            raise RestError(
                "invalid_username",
                "A login is 1 to 60 letters, digits, spaces and the characters _ . @ -.",
                {"status": 400},
            )
        if role not in ROLES:
            raise RestError(
                "invalid_role", f"The role must be one of: {', '.join(ROLES)}.", {"status": 400}
            )
        if len(password) < MIN_PASSWORD_LENGTH:
            raise RestError(
                "weak_password",
                f"A password has at least {MIN_PASSWORD_LENGTH} characters.",
                {"status": 400},
            )
        address = email if email is not None else f"{login.replace(' ', '.')}@example.invalid"
        if not is_email(address):
            raise RestError("invalid_email", "The email address is not valid.", {"status": 400})
        try:
            with self.store.transaction() as db:
                for field, value in (("login", login), ("email", address)):
                    taken = db.execute(
                        f"SELECT 1 FROM users WHERE {field} = ?",  # noqa: S608 - fixed names
                        (value,),
                    ).fetchone()
                    if taken is not None:
                        raise _already_used(field)
                cursor = db.execute(
                    "INSERT INTO users (login, email, display_name, role, password_hash,"
                    " registered) VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        login,
                        address,
                        display_name or login,
                        role,
                        self.hasher.hash(password),
                        int(self.clock()),
                    ),
                )
                user_id = int(cursor.lastrowid or 0)
        except sqlite3.IntegrityError as exc:  # a concurrent insert won the race
            raise _already_used("email" if "email" in str(exc) else "login") from exc
        found = self.get(user_id)
        if found is None:  # pragma: no cover - the row was inserted in this very transaction
            raise RuntimeError(f"user {user_id} vanished right after it was created")
        return found

    def get(self, user_id: int) -> SiteUser | None:
        """The user with this id, or ``None``."""
        row = (
            self.store.connection()
            .execute("SELECT * FROM users WHERE id = ?", (user_id,))
            .fetchone()
        )
        return None if row is None else _user(row)

    def find(self, login_or_email: str) -> SiteUser | None:
        """The user with this login, or else this e-mail address (case-insensitive)."""
        connection = self.store.connection()
        row = connection.execute(
            "SELECT * FROM users WHERE login = ?", (login_or_email,)
        ).fetchone()
        if row is None and "@" in login_or_email:
            row = connection.execute(
                "SELECT * FROM users WHERE email = ?", (login_or_email,)
            ).fetchone()
        return None if row is None else _user(row)

    def all(self) -> list[SiteUser]:
        """Every user, by id."""
        rows = self.store.connection().execute("SELECT * FROM users ORDER BY id").fetchall()
        return [_user(row) for row in rows]

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
        """Replace a user's password (and end every session of theirs)."""
        if len(password) < MIN_PASSWORD_LENGTH:
            raise RestError(
                "weak_password",
                f"A password has at least {MIN_PASSWORD_LENGTH} characters.",
                {"status": 400},
            )
        with self.store.transaction() as db:
            db.execute(
                "UPDATE users SET password_hash = ? WHERE id = ?",
                (self.hasher.hash(password), user.id),
            )
            db.execute("DELETE FROM sessions WHERE user_id = ?", (user.id,))
