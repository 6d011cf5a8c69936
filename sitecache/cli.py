"""The ``sitecache`` command line.

``sitecache init`` creates the data directory, the database, the secret key and an
administrator; ``sitecache serve`` runs the site under gunicorn (initializing it on first
start); ``sitecache user create`` and ``sitecache app-password create`` add users and
application passwords. Configuration comes from the environment as for ``create_app()``
(``SITECACHE_CONFIG``, ``SITECACHE_DATA_DIR``, ...), or from ``--config`` and ``--data-dir``.
Secrets are printed once, to standard output, and never logged.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from sitecache.auth import ROLES, AuthService, PasswordHasher
from sitecache.auth.passwords import generate_password
from sitecache.config import Config, ConfigError, load_config
from sitecache.errors import RestError
from sitecache.hooks import Hooks
from sitecache.site import ContentService
from sitecache.site.demo import fill_demo

__all__ = ["main"]

Command = Callable[[argparse.Namespace], int]


def _environment(args: argparse.Namespace) -> dict[str, str]:
    """The process environment with ``--config`` and ``--data-dir`` applied."""
    environment = dict(os.environ)
    if getattr(args, "config", None):
        environment["SITECACHE_CONFIG"] = str(Path(args.config).resolve())
    if getattr(args, "data_dir", None):
        environment["SITECACHE_DATA_DIR"] = str(Path(args.data_dir).resolve())
    return environment


def _configure_environment(args: argparse.Namespace) -> Config:
    """The configuration, read from the environment with the command-line options applied."""
    return load_config(environ=_environment(args))


def _auth(config: Config) -> AuthService:
    return AuthService(config.data_dir, hasher=PasswordHasher(n=config.password_hash_cost))


def _create_administrator(auth: AuthService, login: str, email: str | None) -> None:
    password = generate_password(20)
    user = auth.users.create(login, password, "administrator", email=email)
    print("Administrator created. Log in at /login with (shown only once):")
    print(f"  login:    {user.login}")
    print(f"  password: {password}")


def command_init(args: argparse.Namespace) -> int:
    """Create the data directory, database, secret key and an administrator."""
    config = _configure_environment(args)
    auth = _auth(config)
    existing = auth.users.count()
    if existing:
        print(
            f"sitecache: {config.data_dir} is already initialized ({existing} user"
            f"{'s' if existing != 1 else ''}); add users with `sitecache user create`.",
            file=sys.stderr,
        )
        return 1
    print(f"Initialized {config.data_dir.resolve()} (database and secret key).")
    _create_administrator(auth, args.login, args.email)
    if args.demo:
        _fill_demo(auth)
    return 0


def _fill_demo(auth: AuthService) -> None:
    """Write the demo content (authors, terms, posts, pages, comments) and say what it is."""
    summary = fill_demo(ContentService(auth.store, Hooks()), auth.users)
    print(
        f"Demo content: {summary.posts} posts, {summary.pages} pages, {summary.comments} comments"
        f" ({summary.held_comments} held), {summary.categories} categories, {summary.tags} tags,"
        f" {summary.authors} authors."
    )


def _read_password(value: str | None) -> tuple[str, bool]:
    """The password to use and whether it was generated (to print it)."""
    if value is None:
        return generate_password(20), True
    if value == "-":
        return sys.stdin.readline().rstrip("\r\n"), False
    return value, False


def command_user_create(args: argparse.Namespace) -> int:
    """Add a user with a role."""
    auth = _auth(_configure_environment(args))
    password, generated = _read_password(args.password)
    user = auth.users.create(
        args.login, password, args.role, email=args.email, display_name=args.display_name
    )
    print(f"User {user.login} (id {user.id}, {user.role}) created.")
    if generated:
        print(f"  password: {password}  (shown only once)")
    return 0


def command_app_password_create(args: argparse.Namespace) -> int:
    """Create an application password for a user and print it once."""
    auth = _auth(_configure_environment(args))
    user = auth.users.find(args.login)
    if user is None:
        print(f"sitecache: no user with login or email {args.login!r}", file=sys.stderr)
        return 1
    password, record = auth.app_passwords.create(user, args.name, args.app_id or "")
    print(f"Application password {record.name!r} ({record.uuid}) created for {user.login}.")
    print(f"  password: {password}  (shown only once)")
    return 0


def _site_url_for(bind: str) -> str | None:
    """``http://host:port`` of a bind address naming one host (not 0.0.0.0, ::, a socket)."""
    host, _, port = bind.rpartition(":")
    # Not a bind on every interface: those are compared with, not bound to.
    wildcard = ("0.0.0.0", "[::]", "::")  # noqa: S104
    if not host or not port.isdigit() or host in wildcard or "/" in host:
        return None
    return f"http://{host}:{port}"


def command_serve(args: argparse.Namespace) -> int:
    """Run gunicorn serving ``sitecache.app:create_app()`` (replaces this process)."""
    environment = _environment(args)
    config = load_config(environ=environment)
    config.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    if config.site_url is None:
        site_url = _site_url_for(args.bind)
        if site_url is None:
            print(
                "sitecache: site_url is not set; links will follow each request's Host header. "
                "Set site_url (SITECACHE_SITE_URL) for a public site.",
                file=sys.stderr,
            )
        else:
            # SECURITY: links never follow a client's Host header unless asked to.
            environment["SITECACHE_SITE_URL"] = site_url
    auth = _auth(config)
    if auth.users.count() == 0:
        print(f"First start: initializing {config.data_dir.resolve()}.")
        _create_administrator(auth, "admin", None)
        if args.demo:
            _fill_demo(auth)
    auth.store.close()
    # gunicorn's workers read the environment: hand them the options and the resolved data
    # directory (this process is replaced by gunicorn right after).
    environment["SITECACHE_DATA_DIR"] = str(config.data_dir.resolve())
    argv = [
        sys.executable, "-m", "gunicorn",
        "--bind", args.bind,
        "--workers", str(args.workers),
        "--access-logfile", "-",
        "sitecache.app:create_app()",
    ]  # fmt: skip
    if args.reload:
        argv.insert(3, "--reload")
    print(f"sitecache: serving {config.data_dir.resolve()} on http://{args.bind}/", flush=True)
    os.execve(sys.executable, argv, environment)  # noqa: S606 - our interpreter, fixed arguments


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="sitecache", description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="a TOML configuration file (else $SITECACHE_CONFIG)")
    parser.add_argument("--data-dir", help="the data directory (else $SITECACHE_DATA_DIR or ./var)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the site under gunicorn")
    serve.add_argument("--bind", default="127.0.0.1:8000", help="address (default 127.0.0.1:8000)")
    serve.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    serve.add_argument("--reload", action="store_true", help="restart when the code changes")
    serve.add_argument(
        "--demo", action="store_true", help="on a first start, fill the site with demo content"
    )
    serve.set_defaults(handler=command_serve)

    init = commands.add_parser("init", help="create the data directory and an administrator")
    init.add_argument("--login", default="admin", help="the administrator's login (admin)")
    init.add_argument("--email", help="the administrator's e-mail address")
    init.add_argument(
        "--demo", action="store_true", help="fill the site with demo posts, pages and comments"
    )
    init.set_defaults(handler=command_init)

    user = commands.add_parser("user", help="manage users")
    user_commands = user.add_subparsers(dest="user_command", required=True, metavar="COMMAND")
    create_user = user_commands.add_parser("create", help="add a user")
    create_user.add_argument("login")
    create_user.add_argument("--role", choices=ROLES, default="subscriber")
    create_user.add_argument(
        "--password", help="the password; '-' reads it from standard input; omit to generate one"
    )
    create_user.add_argument("--email")
    create_user.add_argument("--display-name")
    create_user.set_defaults(handler=command_user_create)

    app_password = commands.add_parser("app-password", help="manage application passwords")
    app_password_commands = app_password.add_subparsers(
        dest="app_password_command", required=True, metavar="COMMAND"
    )
    create_app_password = app_password_commands.add_parser(
        "create", help="create an application password (printed once)"
    )
    create_app_password.add_argument("login", help="the user's login or e-mail address")
    create_app_password.add_argument("--name", required=True, help="the application's name")
    create_app_password.add_argument("--app-id", help="the application's UUID")
    create_app_password.set_defaults(handler=command_app_password_create)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command = args.handler
    try:
        return handler(args)
    except ConfigError as exc:
        print(f"sitecache: {exc}", file=sys.stderr)
        return 2
    except RestError as exc:
        print(f"sitecache: {exc.message}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
