"""``sitecache user create|list|delete|passwd``: the site's users, checked by the REST routes'
own rules.

A site always keeps an administrator: ``user create`` refuses to make the first user of a site
anything else, and ``user delete`` refuses to delete the last one. Generated passwords are
printed once, to standard output, and never logged.
"""

from __future__ import annotations

import argparse
import json
import sys

from sitecache.auth import AuthService, PasswordHasher
from sitecache.auth.passwords import generate_password
from sitecache.auth.roles import SiteUser
from sitecache.auth.users import LOGIN_RULE
from sitecache.auth.users_schema import check_user_input
from sitecache.cli.configuration import configure, missing_site
from sitecache.cli.output import date_text, fail, print_table, say, terminal_text
from sitecache.config import Config
from sitecache.domain_errors import ConflictError, InvalidValueError, NotFoundError
from sitecache.terminal import user_terminal

__all__ = [
    "checked_user_input",
    "command_user_create",
    "command_user_delete",
    "command_user_list",
    "command_user_passwd",
    "create_administrator",
    "find_user",
    "open_auth",
]


def open_auth(config: Config, migrate: bool | None = None) -> AuthService:
    """The site's auth layer; ``migrate``: apply pending migrations (``init`` does; other
    commands leave a shared PostgreSQL to ``init`` and refuse a schema not their own)."""
    return AuthService(
        config.data_dir,
        hasher=PasswordHasher(n=config.password_hash_cost),
        database_url=config.database_url,
        migrate=migrate,
        limits=config.store_limits(),
        start_without_store=False,
    )


def create_administrator(
    auth: AuthService, login: str, email: str | None, *, output_is_log: bool = False
) -> None:
    """Create the administrator with a random password and show it once: on standard output
    (``init``), or, when standard output is the server's log (``serve``), only on the
    terminal the user ran the command from; without one the password is shown nowhere and
    the user is told how to set one."""
    password = generate_password(20)
    user = auth.users.create(login, password, "administrator", email=email)
    lines = [
        "Administrator created. Log in at /login with (shown only once):",
        f"  login:    {terminal_text(user.login)}",
        f"  password: {password}",
    ]
    if not output_is_log:
        print("\n".join(lines))
        return
    with user_terminal() as terminal:
        if terminal is not None:
            terminal.write("\n".join(lines) + "\n")
            terminal.flush()
            return
    # SECURITY: standard output is the server's log here (a file, a journal): no password.
    say(
        f"Administrator {user.login!r} created with a random password that is not shown: this "
        f"output is a log, not a terminal. Set one with `sitecache user passwd {user.login}`."
    )


def checked_user_input(values: dict[str, object]) -> dict[str, object]:
    """``values`` validated and sanitized by the REST route's own arguments (the user schema).

    Raises:
        InvalidValueError: the first invalid value, with the route's message (one line naming
            each bad value, in the words the REST route uses; a login in the words of
            `LOGIN_RULE`, as every command that creates a user says it).
    """
    try:
        return check_user_input("PUT", values)
    except InvalidValueError as refused:
        params = refused.details.get("params")
        if not isinstance(params, dict) or not params:
            raise
        names = {"username": "login", "name": "display name"}
        reasons = {**params, **({"username": LOGIN_RULE} if "username" in params else {})}
        detail = "; ".join(f"{names.get(k, k)}: {v}" for k, v in reasons.items())
        raise InvalidValueError(refused.code, detail, refused.details) from refused


def _read_password(value: str | None) -> tuple[str, bool]:
    """The password to use and whether it was generated (to print it)."""
    if value is None:
        return generate_password(20), True
    if value == "-":
        return sys.stdin.readline().rstrip("\r\n"), False
    return value, False


def find_user(auth: AuthService, login: str) -> SiteUser:
    """The user of a login or e-mail address.

    Raises:
        NotFoundError: there is none (the REST route's ``rest_user_invalid_login``).
    """
    user = auth.users.find(login)
    if user is None:
        raise NotFoundError("rest_user_invalid_login", f"no user with login or email {login!r}")
    return user


def command_user_create(args: argparse.Namespace) -> int:
    """Add a user with a role.

    The first user of a site must be an administrator: a site owner who runs ``user create``
    on a fresh data directory expects to be able to log in and manage the site afterwards.
    """
    config = configure(args, site=False)
    administrator = args.role == "administrator"
    no_administrator = (
        "this site has no administrator yet: run `sitecache init` first, or create one "
        "with `sitecache user create LOGIN --role administrator`."
    )
    # Only an administrator may be the first user, so only this makes a new site (0700).
    if not administrator and missing_site(config):
        return fail(no_administrator)
    # Checked before the site is opened: a refused first user creates no site.
    password, generated = _read_password(args.password)
    values = checked_user_input(
        {
            "username": args.login,
            "email": args.email,
            "name": args.display_name,
            "password": password,
        }
    )
    auth = open_auth(config)
    if not administrator and not auth.users.count_role("administrator"):
        return fail(no_administrator)
    user = auth.users.create(
        str(values["username"]),
        str(values["password"]),
        args.role,
        email=str(values["email"]) if "email" in values else None,
        display_name=str(values["name"]) if values.get("name") else None,
    )
    say(f"User {user.login} (id {user.id}, {user.role}) created.")
    if generated:
        print(f"  password: {password}  (shown only once)")
    return 0


def command_user_list(args: argparse.Namespace) -> int:
    """Print every user (a table, or JSON with ``--json``)."""
    auth = open_auth(configure(args))
    rows: list[dict[str, object]] = [
        {
            "id": user.id,
            "username": user.login,
            "email": user.email,
            "name": user.display_name,
            "role": user.role,
            "registered": date_text(user.registered),
        }
        for user in auth.users.all()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif rows:
        print_table(rows, ["id", "username", "email", "role", "registered"])
    else:
        print("No users yet: run `sitecache init`.")
    return 0


def command_user_delete(args: argparse.Namespace) -> int:
    """Delete a user with their sessions and application passwords (never the last
    administrator); with ``--reassign ID`` their posts and pages go to that user first, with
    the REST users route's errors (``rest_user_invalid_reassign``: no such user, or the user
    being deleted)."""
    # PERF: the whole site (its listeners purge what changes) is loaded by this command only;
    # the other user commands start without it.
    from sitecache.app import App

    app = App(configure(args))
    try:
        auth = app.auth
        user = find_user(auth, args.login)
        target = None if args.reassign is None else auth.users.get(args.reassign)
        if args.reassign is not None and (target is None or target.id == user.id):
            raise InvalidValueError(
                "rest_user_invalid_reassign", "Invalid user ID for reassignment."
            )
        if auth.users.is_last_administrator(user):
            raise ConflictError(
                "rest_user_last_administrator", "The site's last administrator cannot be deleted."
            )
        moved = 0
        if target is not None:
            moved = app.content.reassign_posts(user.id, target.id)
        auth.users.delete(user)
    finally:
        app.close()
    say(f"User {user.login} (id {user.id}) deleted.")
    if target is not None:
        say(f"  {moved} posts and pages reassigned to {target.login} (id {target.id}).")
    return 0


def command_user_passwd(args: argparse.Namespace) -> int:
    """Set a user's password (ends their sessions); a generated one is printed once."""
    auth = open_auth(configure(args))
    user = find_user(auth, args.login)
    password, generated = _read_password(args.password)
    values = checked_user_input({"password": password})
    auth.users.set_password(user, str(values["password"]))
    say(f"Password of {user.login} changed; their sessions have ended.")
    if generated:
        print(f"  password: {password}  (shown only once)")
    return 0
