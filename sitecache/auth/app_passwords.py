"""Application passwords: per-application secrets for HTTP Basic access to the REST API.

A password is 24 random letters and digits, shown once (in groups of four) and stored only as a
keyed hash; spaces and other separators are ignored when it is presented, so the grouped form
works. Each has a uuid, an optional application id (a UUID), a name unique per user, and the time
and address of its creation and last use.

Availability (`ApplicationPasswordPolicy`): ``"auto"`` (the default) allows them over TLS and
from loopback clients only (not a local reverse proxy forwarding a remote client), so they never
travel in clear text over a network; ``"on"`` and ``"off"`` force the answer.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import logging
import re
import time
import uuid as uuid_module
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Final

from sitecache.auth.db import DbConnection, OperationalError, Row
from sitecache.auth.passwords import digest_matches, generate_password, keyed_hash
from sitecache.auth.roles import SiteUser
from sitecache.auth.store import SiteStore
from sitecache.auth.throttle import login_account
from sitecache.auth.users import USER_COLUMNS, UserRepository, user_from_row
from sitecache.auth.verified_secrets import VerifiedSecrets
from sitecache.bounded_memo import BoundedMemo
from sitecache.domain_errors import (
    ConflictError,
    InvalidValueError,
    UnauthorizedError,
    WrongCredentials,
)

__all__ = [
    "ApplicationPassword",
    "ApplicationPasswordPolicy",
    "ApplicationPasswords",
    "BasicCredentials",
    "PasswordListing",
    "chunk_password",
    "parse_basic_authorization",
]

logger = logging.getLogger("sitecache.auth")

PASSWORD_LENGTH: Final = 24
MAX_NAME_LENGTH: Final = 200
"""The longest application name accepted (characters)."""
MAX_PASSWORDS_PER_USER: Final = 100
"""How many application passwords one user may have."""
_PURPOSE: Final = "application-password"
_MISSING_PADDING: Final[Mapping[int, str]] = {0: "", 2: "==", 3: "="}
"""The ``=`` a Basic credential of each length mod 4 lacks (lenient RFC 4648 decoders, and
Apache/PHP in front of WordPress, accept it unpadded); no length is 1 mod 4 in base64."""
_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")
_LAST_USED_GRANULARITY: Final = 60
_LIST: Final = "SELECT * FROM app_passwords WHERE user_id = ? ORDER BY created, position, uuid"
_PASSWORD_COLUMNS: Final = (
    "uuid",
    "app_id",
    "name",
    "password_hash",
    "created",
    "last_used",
    "last_ip",
)
_CREDENTIALS: Final = (
    "SELECT "  # noqa: S608 - fixed column names, the login is bound
    + ", ".join(f"u.{column}" for column in USER_COLUMNS)
    + ", "
    + ", ".join(f"p.{column} AS p_{column}" for column in _PASSWORD_COLUMNS)
    + " FROM users u LEFT JOIN app_passwords p ON p.user_id = u.id"
    " WHERE lower(u.{by}) = lower(?) ORDER BY p.created, p.position, p.uuid"
)
"""A user (by login or e-mail: ``{by}``) and their passwords, oldest first, in one read: a row
per password (the user's columns repeated), or one row of nulls for a user without any."""
_BY_LOGIN: Final = _CREDENTIALS.format(by="login")
_BY_EMAIL: Final = _CREDENTIALS.format(by="email")
_CREDENTIALS_KEPT: Final = 256
#: What an unknown login's presented password is compared with (a digest no password has), so
#: it costs what a wrong password costs.
_UNKNOWN_DIGEST: Final = "0" * 64


"""Most logins whose credentials one process keeps (`ApplicationPasswords._credentials`)."""


@dataclass(frozen=True, slots=True)
class ApplicationPassword:
    """One application password (its secret is never kept)."""

    uuid: str
    user_id: int
    app_id: str
    name: str
    created: int
    last_used: int | None
    last_ip: str | None


@dataclass(frozen=True, slots=True)
class BasicCredentials:
    """What an ``Authorization: Basic`` header carried."""

    login: str
    password: str


def chunk_password(password: str) -> str:
    """``abcdefgh…`` → ``abcd efgh …`` (how the password is shown)."""
    return " ".join(password[index : index + 4] for index in range(0, len(password), 4))


def parse_basic_authorization(header: str | None) -> BasicCredentials | None:
    """The credentials of an ``Authorization: Basic`` header; ``None`` when there are none.

    Raises:
        UnauthorizedError: ``invalid_authorization_header``: a Basic header that does not hold
            ``login:password`` in base64 of UTF-8 (no colon, bad base64, not UTF-8, nothing
            after ``Basic``); a client that meant to authenticate is told so, never served as
            anonymous. Base64 is the standard alphabet; its final ``=`` padding may be left
            out (`_MISSING_PADDING`), but a length of 1 mod 4, a character outside the
            alphabet (URL-safe ``-`` and ``_`` included) or padding anywhere but the end is
            refused.
    """
    if not header:
        return None
    scheme, _, encoded = header.strip().partition(" ")
    if scheme.lower() != "basic":
        return None
    encoded = encoded.strip()
    padding = _MISSING_PADDING.get(len(encoded) % 4)
    if padding is None:
        raise _malformed_authorization()
    try:
        decoded = base64.b64decode(encoded + padding, validate=True).decode("utf-8")
    except (binascii.Error, ValueError) as exc:
        raise _malformed_authorization() from exc
    login, colon, password = decoded.partition(":")
    if not colon or not encoded:
        raise _malformed_authorization()
    return BasicCredentials(login, password)


def _malformed_authorization() -> UnauthorizedError:
    return UnauthorizedError(
        "invalid_authorization_header",
        "The Authorization header is malformed: Basic credentials are base64 of login:password.",
    )


def _forwarded(environ: Mapping[str, Any]) -> bool:
    """Whether an untrusted proxy stands between the client and us.

    A loopback ``REMOTE_ADDR`` on a request carrying forwarding headers is a local reverse
    proxy, not a local client; unless `ProxyFix` already resolved the client (``proxy_count``),
    it does not make the connection private.
    """
    if "werkzeug.proxy_fix.orig" in environ:
        return False
    # X-Forwarded-For, Forwarded, X-Real-IP (spelled out: asked twice a request).
    return bool(
        environ.get("HTTP_X_FORWARDED_FOR")
        or environ.get("HTTP_FORWARDED")
        or environ.get("HTTP_X_REAL_IP")
    )


@lru_cache(maxsize=256)
def _is_loopback(address: str) -> bool:
    """Whether ``address`` is a loopback address (parsed once per distinct address)."""
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class ApplicationPasswordPolicy:
    """When application passwords may be used: ``"auto"``, ``"on"`` or ``"off"``."""

    mode: str = "auto"

    def available(self, environ: Mapping[str, Any]) -> bool:
        """Whether this request may use (or create) application passwords."""
        if self.mode == "on":
            return True
        if self.mode == "off":
            return False
        if environ.get("wsgi.url_scheme") == "https":
            return True
        return _is_loopback(str(environ.get("REMOTE_ADDR") or "")) and not _forwarded(environ)


def _ensure_unique_name(db: DbConnection, user: SiteUser, name: str, except_uuid: str = "") -> None:
    """Raise `ConflictError` ``application_password_duplicate_name`` if the user already has
    ``name``."""
    duplicate = db.execute(
        "SELECT 1 FROM app_passwords WHERE user_id = ? AND name = ? AND uuid != ?",
        (user.id, name, except_uuid),
    ).fetchone()
    if duplicate is not None:
        raise ConflictError(
            "application_password_duplicate_name", "Each application name should be unique."
        )


def _check_name(name: str) -> None:
    """Raise `InvalidValueError` ``application_password_name_too_long`` beyond
    `MAX_NAME_LENGTH` characters."""
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidValueError(
            "application_password_name_too_long",
            f"The application name must be at most {MAX_NAME_LENGTH} characters long.",
        )


def _ensure_room(db: DbConnection, user: SiteUser) -> None:
    """Raise `InvalidValueError` ``application_password_limit_reached`` when the user has the
    most allowed."""
    (count,) = db.execute(
        "SELECT COUNT(*) FROM app_passwords WHERE user_id = ?", (user.id,)
    ).fetchone()
    if int(count) >= MAX_PASSWORDS_PER_USER:
        raise InvalidValueError(
            "application_password_limit_reached",
            f"A user can have at most {MAX_PASSWORDS_PER_USER} application passwords; "
            "revoke one first.",
        )


def _password(row: Row) -> ApplicationPassword:
    return ApplicationPassword(
        uuid=str(row["uuid"]),
        user_id=int(row["user_id"]),
        app_id=str(row["app_id"]),
        name=str(row["name"]),
        created=int(row["created"]),
        last_used=None if row["last_used"] is None else int(row["last_used"]),
        last_ip=None if row["last_ip"] is None else str(row["last_ip"]),
    )


def _joined_password(row: Row) -> ApplicationPassword:
    """The password of a `_CREDENTIALS` row (its ``p_`` columns)."""
    return ApplicationPassword(
        uuid=str(row["p_uuid"]),
        user_id=int(row["id"]),
        app_id=str(row["p_app_id"]),
        name=str(row["p_name"]),
        created=int(row["p_created"]),
        last_used=None if row["p_last_used"] is None else int(row["p_last_used"]),
        last_ip=None if row["p_last_ip"] is None else str(row["p_last_ip"]),
    )


@dataclass(frozen=True, slots=True)
class _Credentials:
    """What authentication reads for a login: the user, their passwords (oldest first) and
    the passwords' stored keyed hashes (in the same order); immutable, so it can be kept."""

    user: SiteUser
    passwords: tuple[ApplicationPassword, ...]
    hashes: tuple[str, ...]


def _read_credentials(connection: DbConnection, login: str) -> _Credentials | None:
    """The `_Credentials` of the user with this login, or else this e-mail address
    (case-insensitive, as `UserRepository.find`), in one query (two for an e-mail address that
    is no login); ``None`` when no user has it."""
    rows = connection.execute(_BY_LOGIN, (login,)).fetchall()
    if not rows and "@" in login:
        rows = connection.execute(_BY_EMAIL, (login,)).fetchall()
    if not rows:
        return None
    present = [row for row in rows if row["p_uuid"] is not None]
    return _Credentials(
        user_from_row(rows[0]),
        tuple(_joined_password(row) for row in present),
        tuple(str(row["p_password_hash"]) for row in present),
    )


class PasswordListing:
    """The passwords of one user as authentication read them, and the database state they
    were read in: `ApplicationPasswords.listed` gives them back while this thread's connection
    has written nothing since, so a request that authenticates with an application password
    and lists the user's passwords reads them once."""

    __slots__ = (
        "_changes",
        "_connection",
        "_passwords",
        "_records",
        "_used",
        "connection",
        "stamp",
        "user_id",
    )

    def __init__(
        self,
        user_id: int,
        passwords: tuple[ApplicationPassword, ...],
        used: ApplicationPassword | None,
        connection: DbConnection,
        stamp: tuple[int, int] | None = None,
    ) -> None:
        self.user_id = user_id
        #: the connection the rows were read on, and the store's change stamp taken before
        #: (``None``: none to be had): a later read on it may be skipped while it holds
        self.connection = connection
        self.stamp = stamp
        self._passwords = passwords
        self._used = used
        self._records: list[ApplicationPassword] | None = None
        self._connection = connection
        self._changes = connection.total_changes

    def is_current(self, connection: DbConnection) -> bool:
        """Whether ``connection`` is the one the rows were read on and has changed no row since
        (another process's write meanwhile is a concurrent request's, ordered after this read)."""
        return connection is self._connection and connection.total_changes == self._changes

    def records(self) -> list[ApplicationPassword]:
        """The passwords, oldest first, the one just used as its use was recorded."""
        if self._records is None:
            used = self._used
            self._records = [
                used if used is not None and used.uuid == record.uuid else record
                for record in self._passwords
            ]
        return list(self._records)


class ApplicationPasswords:
    """The application passwords of the site's users.

    Args:
        store: the site database.
        users: the user repository.
        key: the site's secret key (the passwords' hashes are keyed with it).
        clock: seconds since the epoch.
    """

    def __init__(
        self,
        store: SiteStore,
        users: UserRepository,
        key: bytes,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.users = users
        self.key = key
        self.clock = clock
        self._kept: BoundedMemo[str, tuple[DbConnection, tuple[int, int], _Credentials | None]] = (
            BoundedMemo(_CREDENTIALS_KEPT)
        )
        """Credentials read per login, with the connection and `SiteStore.change_stamp` they
        were read under (`_credentials`; at most `_CREDENTIALS_KEPT`, then all are dropped)."""
        self._verified: VerifiedSecrets[_Credentials, ApplicationPassword] = VerifiedSecrets(
            _CREDENTIALS_KEPT
        )
        """Per login, the last secret verified and what it matched (`authenticate_listing`)."""

    def create(
        self, user: SiteUser, name: str, app_id: str = ""
    ) -> tuple[str, ApplicationPassword]:
        """Create a password; returns ``(the password, shown once, chunked; the record)``.

        Raises:
            ConflictError: ``application_password_duplicate_name`` when the user already has an
                application of that name.
            InvalidValueError: ``application_password_name_too_long`` beyond `MAX_NAME_LENGTH`
                characters; ``application_password_limit_reached`` when the user already has
                `MAX_PASSWORDS_PER_USER` passwords.
        """
        _check_name(name)
        password = generate_password(PASSWORD_LENGTH)
        record = ApplicationPassword(
            uuid=str(uuid_module.uuid4()),
            user_id=user.id,
            app_id=app_id,
            name=name,
            created=int(self.clock()),
            last_used=None,
            last_ip=None,
        )
        with self.store.transaction() as db:
            _ensure_unique_name(db, user, name)
            _ensure_room(db, user)
            db.execute(
                "INSERT INTO app_passwords"
                " (uuid, user_id, app_id, name, password_hash, created, position)"
                " VALUES (?, ?, ?, ?, ?, ?,"
                " (SELECT COALESCE(MAX(position), 0) + 1 FROM app_passwords WHERE user_id = ?))",
                (
                    record.uuid,
                    user.id,
                    app_id,
                    name,
                    keyed_hash(self.key, password, _PURPOSE),
                    record.created,
                    user.id,
                ),
            )
        return chunk_password(password), record

    def listed(self, user: SiteUser, listing: PasswordListing | None) -> list[ApplicationPassword]:
        """`list` of ``user``, from ``listing`` (what authentication read this request) when it
        is that user's and nothing was written since, else from the database."""
        if (
            listing is not None
            and listing.user_id == user.id
            and listing.is_current(self.store.connection())
        ):
            return listing.records()
        return self.list(user)

    def list(self, user: SiteUser) -> list[ApplicationPassword]:
        """The user's passwords, oldest first."""
        rows = self.store.connection().execute(_LIST, (user.id,)).fetchall()
        return [_password(row) for row in rows]

    def get(self, user: SiteUser, uuid: str) -> ApplicationPassword | None:
        """One of the user's passwords by uuid."""
        row = (
            self.store.connection()
            .execute("SELECT * FROM app_passwords WHERE user_id = ? AND uuid = ?", (user.id, uuid))
            .fetchone()
        )
        return None if row is None else _password(row)

    def rename(self, user: SiteUser, uuid: str, name: str) -> ApplicationPassword | None:
        """Change a password's name; ``None`` when it does not exist.

        Raises:
            ConflictError, InvalidValueError: as `create` for the name.
        """
        _check_name(name)
        with self.store.transaction() as db:
            _ensure_unique_name(db, user, name, except_uuid=uuid)
            db.execute(
                "UPDATE app_passwords SET name = ? WHERE user_id = ? AND uuid = ?",
                (name, user.id, uuid),
            )
        return self.get(user, uuid)

    def delete(self, user: SiteUser, uuid: str) -> bool:
        """Delete one password; ``False`` when it did not exist."""
        with self.store.transaction() as db:
            cursor = db.execute(
                "DELETE FROM app_passwords WHERE user_id = ? AND uuid = ?", (user.id, uuid)
            )
            return bool(cursor.rowcount > 0)

    def delete_all(self, user: SiteUser) -> int:
        """Delete every password of the user; returns how many there were."""
        with self.store.transaction() as db:
            cursor = db.execute("DELETE FROM app_passwords WHERE user_id = ?", (user.id,))
            return int(cursor.rowcount)

    def authenticate(
        self, credentials: BasicCredentials, ip: str
    ) -> tuple[SiteUser, ApplicationPassword]:
        """The user and password matching Basic credentials.

        Raises:
            WrongCredentials: ``incorrect_password``, in the same words whether no user
                has the login or none of the user's application passwords matches (no user
                enumeration); it names the throttle's account of the attempt.
        """
        user, matched, _ = self.authenticate_listing(credentials, ip)
        return user, matched

    def authenticate_listing(
        self, credentials: BasicCredentials, ip: str
    ) -> tuple[SiteUser, ApplicationPassword, PasswordListing]:
        """`authenticate`, with the user's passwords as it read them (for `listed`).

        Raises:
            UnauthorizedError: as `authenticate`.
        """
        found, connection, stamp = self._credentials(credentials.login)
        presented = credentials.password
        if not (presented.isascii() and presented.isalnum()):  # grouped, or not ours at all
            presented = _NOT_ALPHANUMERIC.sub("", presented)
        # The secret verified last for this login, against this very read (SQLite only).
        matched = self._verified.get(credentials.login, presented, found, stamp)
        if matched is None:
            matched = self._verify(found, presented)
            if matched is not None and found is not None and stamp is not None:
                self._verified.remember(credentials.login, presented, found, stamp, matched)
        if found is None or matched is None:
            # WordPress's words for a wrong password; it tells an unknown login apart
            # (invalid_username, invalid_email), which lets anyone list the logins: not here.
            raise WrongCredentials(
                "incorrect_password",
                "The provided password is an invalid application password.",
                account=login_account(found.user if found is not None else None, credentials.login),
            )
        used = self._record_use(matched, ip)
        # Taken after the use was recorded: the listing holds the record as stored now.
        return (
            found.user,
            matched,
            PasswordListing(found.user.id, found.passwords, used, connection, stamp),
        )

    def _verify(self, found: _Credentials | None, presented: str) -> ApplicationPassword | None:
        """The password of ``found`` whose stored keyed hash is that of ``presented``."""
        matched: ApplicationPassword | None = None
        digest = keyed_hash(self.key, presented, _PURPOSE)  # the same for every password
        # SECURITY: an unknown login costs the same work as a known one (a hash and a
        # comparison against a stored-looking digest), and is answered in the same words.
        records: tuple[ApplicationPassword | None, ...] = (None,)
        hashes: tuple[str, ...] = (_UNKNOWN_DIGEST,)
        if found is not None and found.hashes:
            records, hashes = found.passwords, found.hashes
        for record, stored in zip(records, hashes, strict=True):
            # SECURITY: constant-time comparison of keyed hashes; every password is checked.
            if digest_matches(digest, stored) and record is not None:
                matched = record
        return matched

    def _credentials(
        self, login: str
    ) -> tuple[_Credentials | None, DbConnection, tuple[int, int] | None]:
        """The user of ``login`` with their passwords and hashes, the connection they were
        read on and the store's change stamp taken before the read (``None``: no stamp).

        SECURITY: a revoked password or a changed role must count from the very next request,
        on every worker and node. What was read for a login is kept only with this thread's
        connection and the store's `SiteStore.change_stamp`, taken before the read, and given
        back only while the stamp is unchanged: no connection of any process has written to the
        database since. Where the store has no such stamp (PostgreSQL) every request reads.
        Only stored keyed hashes are kept, never a presented secret.
        """
        connection = self.store.connection()
        stamp = self.store.change_stamp(connection)
        if stamp is None:
            return _read_credentials(connection, login), connection, None
        kept = self._kept.get(login)
        if kept is not None and kept[0] is connection and kept[1] == stamp:
            return kept[2], connection, stamp
        found = _read_credentials(connection, login)
        # An unknown login is kept too: answered as fast as a known one (no user enumeration
        # by timing), and no guesser makes every attempt read the database.
        self._kept.keep(login, (connection, stamp, found))
        return found, connection, stamp

    def _record_use(self, password: ApplicationPassword, ip: str) -> ApplicationPassword:
        """Record that ``password`` was used now from ``ip`` (at most one write a minute per
        password and address); returns the record as the database holds it afterwards."""
        now = int(self.clock())
        recent = (
            password.last_used is not None and now - password.last_used < _LAST_USED_GRANULARITY
        )
        if recent and password.last_ip == ip:
            return password  # avoid a write per request; the record stays accurate to the minute
        try:
            with self.store.transaction() as db:
                updated = db.execute(
                    "UPDATE app_passwords SET last_used = ?, last_ip = ? WHERE uuid = ?",
                    (now, ip or None, password.uuid),
                ).rowcount
        except OperationalError as exc:
            # Bookkeeping only: a full disk (or a busy database) must not refuse the request,
            # least of all a DELETE that would free space.
            logger.warning("Could not record the use of an application password: %s", exc)
            return password
        if not updated:
            return password  # deleted meanwhile: nothing recorded
        return replace(password, last_used=now, last_ip=ip or None)
