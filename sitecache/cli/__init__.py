"""The ``sitecache`` command line.

``sitecache init`` creates the data directory, the database, the secret key and an
administrator; ``sitecache serve`` runs the site under gunicorn (initializing it on first
start); ``sitecache user create|list|delete|passwd`` and ``sitecache app-password
create|list|revoke`` manage users and application passwords. A site always keeps an
administrator: ``init`` creates one when there is none, ``user create`` refuses to make the first
user of a site anything else, and ``user delete`` refuses to delete the last one.
Configuration comes from the environment as for ``create_app()``
(``SITECACHE_CONFIG``, ``SITECACHE_DATA_DIR``, ...), or from ``--config`` and ``--data-dir``.
Secrets are printed once, to standard output, and never logged. This module holds what each
command does; the grammar (the argparse parser) is `sitecache.cli_parser`. Each command imports
what it uses when it runs: ``--help``, ``--version`` and the cache commands never load the site,
its templates or its image library (#18).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from sitecache import cli_parser
from sitecache.cli_parser import Command

if TYPE_CHECKING:
    from sitecache.auth import AuthService
    from sitecache.auth.roles import SiteUser
    from sitecache.cache.engine import CacheEngine
    from sitecache.config import Config

__all__ = ["main"]


def terminal_text(value: object) -> str:
    """`sitecache.terminal.terminal_text` (imported when a command prints: building the parser
    loads nothing of the package)."""
    from sitecache.terminal import terminal_text as escaped

    return escaped(value)


def _say(line: str) -> None:
    """Print one line on standard output, its user-made text (names, titles, URLs) shown
    escaped by `terminal_text`: a stored string never drives the reader's terminal."""
    print(terminal_text(line))


def _environment(args: argparse.Namespace) -> dict[str, str]:
    """The process environment with ``--config`` and ``--data-dir`` applied.

    Raises:
        ConfigError: an option given empty (``--data-dir ''`` would otherwise mean ``./var``
            without a word).
    """
    environment = dict(os.environ)
    for option, variable in (("config", "SITECACHE_CONFIG"), ("data_dir", "SITECACHE_DATA_DIR")):
        value = getattr(args, option, None)
        if value is None:
            continue
        if not value.strip():
            from sitecache.config import ConfigError

            flag = "--" + option.replace("_", "-")
            raise ConfigError(f"{flag} is empty: name a {_OPTION_NAMES[option]}")
        environment[variable] = str(Path(value).resolve())
    return environment


#: What ``--config`` and ``--data-dir`` name (their refusal when given empty).
_OPTION_NAMES: Final = {"config": "TOML configuration file", "data_dir": "data directory"}


def _configure_environment(args: argparse.Namespace, *, site: bool = True) -> Config:
    """The configuration, read from the environment with the command-line options applied.

    ``site``: the command reads or changes an existing site (every command but those that
    create one, ``init``, ``serve`` and ``user create --role administrator``, and
    ``nginx-config``, which reads the configuration only).

    Raises:
        ConfigError: ``site`` and the data directory holds no site (`_missing_site`): nothing
            is created.
    """
    from sitecache.config import ConfigError, load_config

    config = _checked(load_config(environ=_environment(args)))
    if site:
        missing = _missing_site(config)
        if missing:
            raise ConfigError(missing)
    return config


def _missing_site(config: Config) -> str:
    """Why ``config`` names no existing site ("" when it names one): its data directory does
    not exist or holds no site database (SQLite); the message names the directory and the
    command that creates a site.

    A site in PostgreSQL lives in its database (whose schema each command checks when it
    opens it); a node's own data directory (disk cache, logs) is then created when missing,
    0700, like ``sitecache serve`` creates it.
    """
    from sitecache.auth.store import SiteStore, is_postgres_url, make_private_directory

    data_dir = config.data_dir.resolve()
    if is_postgres_url(config.database_url):
        make_private_directory(config.data_dir)
        return ""
    # Only the file's path is read: a SiteStore opens nothing until it is used.
    database = SiteStore(config.data_dir / "site.db", url=config.database_url or None).path
    if not data_dir.is_dir():
        problem = "the directory does not exist"
    elif not database.is_file():
        problem = f"no site database {database.resolve()}"
    else:
        return ""
    return (
        f"no site in the data directory {data_dir} ({problem}): create one with "
        "`sitecache init`, or name the site's data directory with --data-dir DIR or "
        "SITECACHE_DATA_DIR"
    )


def _checked(config: Config) -> Config:
    """``config`` once its data directory is known to be usable as one."""
    from sitecache.config import ConfigError

    data_dir = config.data_dir
    if data_dir.exists() and not data_dir.is_dir():
        raise ConfigError(f"the data directory {data_dir} exists and is not a directory")
    return config


def _auth(config: Config, migrate: bool | None = None) -> AuthService:
    """The site's auth layer; ``migrate``: apply pending migrations (``init`` does; other
    commands leave a shared PostgreSQL to ``init`` and refuse a schema not their own)."""
    from sitecache.auth import AuthService, PasswordHasher

    return AuthService(
        config.data_dir,
        hasher=PasswordHasher(n=config.password_hash_cost),
        database_url=config.database_url,
        migrate=migrate,
        limits=config.store_limits(),
        start_without_store=False,
    )


def _cache_namespace(config: Config) -> str:
    """The configured cache namespace, else the one kept in a shared (PostgreSQL) store, else
    "" (the identity in the data directory)."""
    from sitecache.auth.store import SiteStore, is_postgres_url
    from sitecache.cache.deployment import SHARED_IDENTITY_COPY, shared_identity

    if config.cache_namespace or not is_postgres_url(config.database_url):
        return config.cache_namespace
    store = SiteStore(url=config.database_url, limits=config.store_limits())
    try:
        return shared_identity(store, config.site_url, config.data_dir / SHARED_IDENTITY_COPY)
    finally:
        store.close()


def _persist_identity(config: Config) -> None:
    """Write the site's identity (its cache namespace) once, from the configuration as given:
    every later process (server, workers, the command line) reads the same one. A site in a
    shared PostgreSQL keeps it there (every node finds it), a local one in its data directory."""
    from sitecache.auth.store import is_postgres_url, make_private_directory
    from sitecache.cache.deployment import site_identity
    from sitecache.cache.storage import StorageError
    from sitecache.config import ConfigError

    make_private_directory(config.data_dir)  # each node's own files: disk cache, logs
    if is_postgres_url(config.database_url):
        _cache_namespace(config)
        return
    try:
        site_identity(config.data_dir, config.site_url)
    except StorageError as exc:
        raise ConfigError(str(exc)) from exc


def _create_administrator(
    auth: AuthService, login: str, email: str | None, *, output_is_log: bool = False
) -> None:
    """Create the administrator with a random password and show it once: on standard output
    (``init``), or, when standard output is the server's log (``serve``), only on the
    terminal the user ran the command from; without one the password is shown nowhere and
    the user is told how to set one."""
    from sitecache.auth.passwords import generate_password
    from sitecache.terminal import user_terminal

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
    _say(
        f"Administrator {user.login!r} created with a random password that is not shown: this "
        f"output is a log, not a terminal. Set one with `sitecache user passwd {user.login}`."
    )


def command_init(args: argparse.Namespace) -> int:
    """Create the data directory, database, secret key and an administrator.

    On a site that already has users but no administrator (made before this rule, or by hand),
    ``init`` creates the missing administrator; on a site with one it changes nothing.
    """
    from sitecache.config import check_writable_data_dir
    from sitecache.site.migrations import migrate_content

    config = _configure_environment(args, site=False)
    check_writable_data_dir(config)  # one line naming the directory and the user
    # The administrator's login and address are checked (as `user create` checks them) before
    # anything is created: a refused one leaves no site without an administrator behind.
    values = _checked_user_input({"username": args.login, "email": args.email})
    login = str(values["username"])
    email = str(values["email"]) if values.get("email") else None
    auth = _auth(config, migrate=True)
    migrate_content(auth.store, apply=True)  # the content tables too: init migrates everything
    existing = auth.users.count()
    if auth.users.count_role("administrator"):
        print(
            f"sitecache: {config.data_dir} is already initialized ({existing} user"
            f"{'s' if existing != 1 else ''}); add users with `sitecache user create`.",
            file=sys.stderr,
        )
        return 1
    if existing:
        if auth.users.find(login) is not None:
            return _fail(
                f"{config.data_dir} has users but no administrator, and the login "
                f"{login!r} is taken: choose the administrator's login with --login."
            )
        _say(f"{config.data_dir.resolve()} has no administrator: creating one.")
    else:
        _say(f"Initialized {config.data_dir.resolve()} (database and secret key).")
    _persist_identity(config)
    _create_administrator(auth, login, email)
    if args.demo:
        _fill_demo(auth)
    return 0


def _fill_demo(auth: AuthService) -> None:
    """Write the demo content (authors, terms, posts, pages, comments) and say what it is."""
    from sitecache.hooks import Hooks
    from sitecache.site import ContentService
    from sitecache.site.demo import fill_demo

    summary = fill_demo(ContentService(auth.store, Hooks()), auth.users)
    print(
        f"Demo content: {summary.posts} posts, {summary.pages} pages, {summary.comments} comments"
        f" ({summary.held_comments} held), {summary.categories} categories, {summary.tags} tags,"
        f" {summary.authors} authors."
    )


def _read_password(value: str | None) -> tuple[str, bool]:
    """The password to use and whether it was generated (to print it)."""
    from sitecache.auth.passwords import generate_password

    if value is None:
        return generate_password(20), True
    if value == "-":
        return sys.stdin.readline().rstrip("\r\n"), False
    return value, False


def _fail(message: str) -> int:
    """Print one line on standard error; the exit status of an expected failure."""
    print(f"sitecache: {terminal_text(message)}", file=sys.stderr)
    return 1


def _checked_user_input(values: dict[str, object]) -> dict[str, object]:
    """``values`` validated and sanitized by the REST route's own arguments (the user schema).

    Raises:
        InvalidValueError: the first invalid value, with the route's message (one line naming
            each bad value, in the words the REST route uses; a login in the words of
            `LOGIN_RULE`, as every command that creates a user says it).
    """
    from sitecache.auth.users import LOGIN_RULE
    from sitecache.auth.users_schema import check_user_input
    from sitecache.domain_errors import InvalidValueError

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


def command_migrate(args: argparse.Namespace) -> int:
    """Apply every pending migration (auth and content tables); print the versions."""
    from sitecache.config import check_writable_data_dir
    from sitecache.site.migrations import migrate_content

    config = _configure_environment(args)
    check_writable_data_dir(config)  # one line naming the directory and the user
    auth = _auth(config, migrate=True)
    try:
        migrate_content(auth.store, apply=True)
        for component in ("auth", "site"):
            print(f"{component}: schema version {auth.store.version(component)}")
        print(f"The database {auth.store.describe()} is up to date.")
    finally:
        auth.store.close()
    return 0


def command_user_create(args: argparse.Namespace) -> int:
    """Add a user with a role.

    The first user of a site must be an administrator: a site owner who runs ``user create``
    on a fresh data directory expects to be able to log in and manage the site afterwards.
    """
    config = _configure_environment(args, site=False)
    administrator = args.role == "administrator"
    no_administrator = (
        "this site has no administrator yet: run `sitecache init` first, or create one "
        "with `sitecache user create LOGIN --role administrator`."
    )
    # Only an administrator may be the first user, so only this makes a new site (0700).
    if not administrator and _missing_site(config):
        return _fail(no_administrator)
    # Checked before the site is opened: a refused first user creates no site.
    password, generated = _read_password(args.password)
    values = _checked_user_input(
        {
            "username": args.login,
            "email": args.email,
            "name": args.display_name,
            "password": password,
        }
    )
    auth = _auth(config)
    if not administrator and not auth.users.count_role("administrator"):
        return _fail(no_administrator)
    user = auth.users.create(
        str(values["username"]),
        str(values["password"]),
        args.role,
        email=str(values["email"]) if "email" in values else None,
        display_name=str(values["name"]) if values.get("name") else None,
    )
    _say(f"User {user.login} (id {user.id}, {user.role}) created.")
    if generated:
        print(f"  password: {password}  (shown only once)")
    return 0


def _find_user(auth: AuthService, login: str) -> SiteUser:
    from sitecache.domain_errors import NotFoundError

    user = auth.users.find(login)
    if user is None:
        raise NotFoundError("rest_user_invalid_login", f"no user with login or email {login!r}")
    return user


def _date(timestamp: int | None) -> str:
    from sitecache.schema.dates import format_timestamp

    return "" if timestamp is None else format_timestamp(timestamp).replace(" ", "T") + "Z"


def _print_table(rows: list[dict[str, object]], columns: list[str]) -> None:
    """Rows as aligned columns under upper-case headings, every cell through `terminal_text`."""
    cells = [[column.upper() for column in columns]]
    cells += [
        [terminal_text(row[c]) if row[c] is not None else "" for c in columns] for row in rows
    ]
    widths = [max(len(line[index]) for line in cells) for index in range(len(columns))]
    for line in cells:
        print(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        )


def command_user_list(args: argparse.Namespace) -> int:
    """Print every user (a table, or JSON with ``--json``)."""
    auth = _auth(_configure_environment(args))
    rows: list[dict[str, object]] = [
        {
            "id": user.id,
            "username": user.login,
            "email": user.email,
            "name": user.display_name,
            "role": user.role,
            "registered": _date(user.registered),
        }
        for user in auth.users.all()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif rows:
        _print_table(rows, ["id", "username", "email", "role", "registered"])
    else:
        print("No users yet: run `sitecache init`.")
    return 0


def command_user_delete(args: argparse.Namespace) -> int:
    """Delete a user with their sessions and application passwords (never the last
    administrator); with ``--reassign ID`` their posts and pages go to that user first, with
    the REST users route's errors (``rest_user_invalid_reassign``: no such user, or the user
    being deleted)."""
    from sitecache.app import App  # the site's own listeners: the cache purges what changes
    from sitecache.domain_errors import ConflictError, InvalidValueError

    app = App(_configure_environment(args))
    try:
        auth = app.auth
        user = _find_user(auth, args.login)
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
    _say(f"User {user.login} (id {user.id}) deleted.")
    if target is not None:
        _say(f"  {moved} posts and pages reassigned to {target.login} (id {target.id}).")
    return 0


def command_user_passwd(args: argparse.Namespace) -> int:
    """Set a user's password (ends their sessions); a generated one is printed once."""
    auth = _auth(_configure_environment(args))
    user = _find_user(auth, args.login)
    password, generated = _read_password(args.password)
    values = _checked_user_input({"password": password})
    auth.users.set_password(user, str(values["password"]))
    _say(f"Password of {user.login} changed; their sessions have ended.")
    if generated:
        print(f"  password: {password}  (shown only once)")
    return 0


def command_app_password_list(args: argparse.Namespace) -> int:
    """Print a user's application passwords (never the passwords themselves)."""
    auth = _auth(_configure_environment(args))
    user = _find_user(auth, args.login)
    rows: list[dict[str, object]] = [
        {
            "uuid": record.uuid,
            "name": record.name,
            "app_id": record.app_id,
            "created": _date(record.created),
            "last_used": _date(record.last_used) or None,
            "last_ip": record.last_ip,
        }
        for record in auth.app_passwords.list(user)
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif rows:
        _print_table(rows, ["uuid", "name", "created", "last_used", "last_ip"])
    else:
        _say(f"{user.login} has no application passwords.")
    return 0


def command_app_password_revoke(args: argparse.Namespace) -> int:
    """Delete one application password of a user."""
    auth = _auth(_configure_environment(args))
    user = _find_user(auth, args.login)
    if not auth.app_passwords.delete(user, args.uuid):
        return _fail(f"{user.login} has no application password {args.uuid!r}")
    _say(f"Application password {args.uuid} of {user.login} revoked.")
    return 0


def command_app_password_create(args: argparse.Namespace) -> int:
    """Create an application password for a user and print it once."""
    from sitecache.auth.rest_routes import check_application_password_fields
    from sitecache.domain_errors import InvalidValueError

    auth = _auth(_configure_environment(args))
    user = auth.users.find(args.login)
    if user is None:
        print(f"sitecache: no user with login or email {args.login!r}", file=sys.stderr)
        return 1
    # The same checks (one schema) as site/v2/users/<id>/application-passwords.
    try:
        name, app_id = check_application_password_fields(args.name, args.app_id or "")
    except InvalidValueError as refused:
        problems = refused.details.get("params") or {}
        reason = "; ".join(problems.values()) or refused.message
        print(f"sitecache: {terminal_text(reason)}", file=sys.stderr)
        return 2
    password, record = auth.app_passwords.create(user, name, app_id)
    _say(f"Application password {record.name!r} ({record.uuid}) created for {user.login}.")
    print(f"  password: {password}  (shown only once)")
    return 0


def command_serve(args: argparse.Namespace) -> int:
    """Run gunicorn serving ``sitecache.app:create_app()`` (replaces this process)."""
    from sitecache.auth.db import StoreUnavailable
    from sitecache.auth.keys import SHARED_KEY_COPY
    from sitecache.auth.store import make_private_directory
    from sitecache.config import check_writable_data_dir, load_config
    from sitecache.serving import check_bind, check_plugin, gunicorn_argv, site_url_for

    environment = _environment(args)
    config = _checked(load_config(environ=environment))
    # A bad or busy address is reported before anything is created (and checked again by
    # gunicorn, which binds it).
    check_bind(args.bind)
    check_writable_data_dir(config)  # one line naming the directory and the user
    make_private_directory(config.data_dir)
    # The identity comes from the configuration, before a site_url is derived from --bind:
    # the command line (which knows no bind address) must find the same cache.
    _persist_identity(config)
    if config.site_url is None:
        site_url = site_url_for(args.bind)
        if site_url is None:
            print(
                "sitecache: site_url is not set; links will follow each request's Host header. "
                "Set site_url (SITECACHE_SITE_URL) for a public site.",
                file=sys.stderr,
            )
        else:
            # SECURITY: links never follow a client's Host header unless asked to.
            environment["SITECACHE_SITE_URL"] = site_url
    try:
        auth = _auth(config)
        if auth.users.count() == 0:
            _say(f"First start: initializing {config.data_dir.resolve()}.")
            _create_administrator(auth, "admin", None, output_is_log=True)
            if args.demo:
                _fill_demo(auth)
        auth.store.close()
    except StoreUnavailable as exc:
        # A site this node served before starts anyway (its workers read the node's copies
        # of the shared key and namespace): cached pages are served, the rest answers 503.
        if not (config.data_dir / SHARED_KEY_COPY).is_file():
            raise
        print(f"sitecache: {terminal_text(exc)}; serving anyway (503 until it answers)",
              file=sys.stderr)  # fmt: skip
    # gunicorn's workers read the environment: hand them the options and the resolved data
    # directory (this process is replaced by gunicorn right after).
    environment["SITECACHE_DATA_DIR"] = str(config.data_dir.resolve())
    # Expected failures are reported here, on one line, before gunicorn starts: a plugin that
    # cannot be loaded (and, above, an address that cannot be listened on).
    for spec in config.plugins:
        check_plugin(spec)
    _check_plugins_activate(environment)
    argv = [sys.executable, "-m", "gunicorn"]
    if args.reload:
        argv.append("--reload")
    argv += gunicorn_argv(args.bind, args.workers, threads=args.threads, timeout=args.timeout)
    print(f"sitecache: serving {config.data_dir.resolve()} on http://{args.bind}/", flush=True)
    os.execve(sys.executable, argv, environment)  # noqa: S606 - our interpreter, fixed arguments


def _check_plugins_activate(environment: dict[str, str]) -> None:
    """Build the application once, as each gunicorn worker will, when the configuration
    names plugins, and close it: a plugin whose ``activate(app)`` raises (or a target that
    is callable but no plugin, ``json:dumps``) is then one `ConfigError` line here rather
    than a traceback from every worker that fails to boot.

    Raises:
        ConfigError: a plugin cannot be loaded or failed to activate.
    """
    from sitecache.app import App  # the whole site: only when there are plugins to try
    from sitecache.config import load_config

    config = load_config(environ=environment)
    if not config.plugins:
        return
    App(config).close()


def command_cache(args: argparse.Namespace) -> int:
    """``sitecache cache ...`` on the storage the server uses (`sitecache.cache.api.commands`).

    The commands that purge or change settings run on the site's own application (its
    plugins loaded, as the server's workers load them), so a purge from here reaches the same
    listeners and webhooks as one over REST. A ``flush`` that no site code can hear (no
    configured ``plugins``, no ``--post-id`` for the site's filters) runs on the cache's own
    API instead, with the same listeners (static-file copies, the companion and installed
    cache plugins) and the same failures, without loading the site (#18).
    """
    from sitecache.cache.api.commands import SITE_COMMANDS, run_cache_command
    from sitecache.cache.storage import StorageError

    config = _configure_environment(args)
    if args.cache_command in SITE_COMMANDS and _needs_site(args, config):
        return _site_cache_command(args, config)
    if args.cache_command in SITE_COMMANDS:
        return _cache_command_without_site(args, config)
    try:
        engine = _engine(config)
        try:
            return run_cache_command(args, engine, config.site_url, config.static_directory)
        finally:
            engine.close()
    except StorageError as exc:
        return _storage_failed(exc)


def _storage_failed(exc: Exception) -> int:
    """Say on one line that the cache storage failed; the ``cache`` commands' exit status for
    it (1, whichever command and whether or not it runs on the site's application)."""
    print(f"sitecache: the cache storage failed: {terminal_text(exc)}", file=sys.stderr)
    return 1


def _needs_site(args: argparse.Namespace, config: Config) -> bool:
    """Whether a cache command must run on the site's application: every one but a ``flush``
    that neither the site's code (configured ``plugins``) nor its filters (``--post-id``)
    take part in."""
    return args.cache_command != "flush" or bool(config.plugins) or args.post_id is not None


def _engine(config: Config) -> CacheEngine:
    """The cache engine of the site's storage (the namespace the server uses).

    Raises:
        StorageError: the storage cannot be opened.
    """
    from sitecache.config import open_cache_engine

    engine = open_cache_engine(config, _cache_namespace(config))
    try:
        # A store that cannot be used at all (a server starts on it and serves uncached) is
        # a command's failure: one line, exit status 1. A damaged index was moved aside
        # while the store was opened: the commands then run on the empty one.
        engine.generation()
    except BaseException:
        engine.close()
        raise
    return engine


def _site_cache_command(args: argparse.Namespace, config: Config) -> int:
    """A cache command run on the site's own application (`command_cache`)."""
    from sitecache.app import App  # the whole site: only for these commands
    from sitecache.cache.api.commands import run_cache_command
    from sitecache.cache.storage import StorageError
    from sitecache.config import ConfigError

    try:
        app = App(config)
    except ConfigError as exc:
        # The server cannot start on a storage that cannot be opened (a configuration error);
        # for a cache command it is the storage failure every cache command reports.
        if isinstance(exc.__cause__, StorageError):
            return _storage_failed(exc.__cause__)
        raise
    try:
        app.cache.engine.generation()  # a store that cannot be used fails as in `_engine`
        return run_cache_command(
            args, app.cache.engine, config.site_url, config.static_directory, app.cache_api
        )
    except StorageError as exc:
        return _storage_failed(exc)
    finally:
        app.close()


def _cache_command_without_site(args: argparse.Namespace, config: Config) -> int:
    """A cache command no site code takes part in, on the cache API the application would
    build (its listeners and plugins), failing as the other cache commands do: a storage that
    cannot be opened is reported by `_storage_failed` (exit status 1)."""
    from sitecache.cache.api.commands import run_cache_command, standalone_api
    from sitecache.cache.storage import StorageError

    try:
        engine = _engine(config)
    except StorageError as exc:
        return _storage_failed(exc)
    api = standalone_api(engine, config.site_url, config.static_directory, load_entry_points=True)
    try:
        return run_cache_command(args, engine, config.site_url, config.static_directory, api)
    except StorageError as exc:
        return _storage_failed(exc)
    finally:
        api.close()
        api.cache.close()


def command_nginx_config(args: argparse.Namespace) -> int:
    """``sitecache nginx-config``: the server block of static-file mode for this site, sending
    with each copy the headers sitecache sends with its own pages."""
    from sitecache.cache.api.commands import print_nginx_config
    from sitecache.cache.api.static import NGINX_RULES_NAME, nginx_rules_fingerprint
    from sitecache.page_headers import page_headers
    from sitecache.site.upload_types import FILE_TYPES

    config = _configure_environment(args, site=False)
    # The rules carry the cache settings that exclude visitors (rejected cookies and user
    # agents, known users); a site not made yet has the defaults, and nothing is created.
    from sitecache.cache.storage import StorageError

    try:
        engine = None if _missing_site(config) else _engine(config)
    except StorageError as exc:
        return _storage_failed(exc)
    try:
        settings = engine.settings_values() if engine is not None else None
        code = print_nginx_config(
            args,
            config.site_url,
            config.static_directory,
            page_headers(config),
            uploads_root=config.uploads_directory,
            upload_types={
                extension: file_type.mime
                for file_type in FILE_TYPES.values()
                for extension in file_type.extensions
            },
            settings=settings,
        )
        if engine is not None and settings is not None:
            # `cache status` warns once the settings no longer match these rules.
            engine.write_value(NGINX_RULES_NAME, nginx_rules_fingerprint(settings).encode())
        return code
    finally:
        if engine is not None:
            engine.close()


def command_openapi(args: argparse.Namespace) -> int:
    """``sitecache openapi``: the OpenAPI 3.1 document of every route of the site (its
    plugins' routes included), as JSON on standard output."""
    from sitecache.app import App  # the whole site: its routes are registered by its parts
    from sitecache.rest.openapi import openapi_document

    app = App(_configure_environment(args))
    try:
        print(json.dumps(openapi_document(app.server), indent=2))
    finally:
        app.cache.close()
        app.auth.store.close()
    return 0


def command_health(args: argparse.Namespace) -> int:
    """``sitecache health``: every site-health test as the REST routes run it (for a local,
    plain-HTTP caller), one line each or JSON; exit status 1 when one is critical."""
    from sitecache.app import App  # the cache's probe and static check come with the app
    from sitecache.site.health import HEALTH_TESTS, run_health_test

    app = App(_configure_environment(args))
    environ = {"wsgi.url_scheme": "http", "REMOTE_ADDR": "127.0.0.1"}
    try:
        inputs = app.health_inputs()
        results = [run_health_test(name, inputs, environ) for name in HEALTH_TESTS]
    finally:
        app.cache.close()
        app.auth.store.close()
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for result in results:
            _say(f"{result['status']:<12} {result['test']:<26} {result['label']}")
    return 1 if any(result["status"] == "critical" for result in results) else 0


def command_plugin(args: argparse.Namespace) -> int:
    """``sitecache plugin list|activate|deactivate`` on the site's own application
    (`sitecache.cli_plugins`)."""
    from sitecache.app import App  # the whole site: plugins load into it
    from sitecache.cli_plugins import run_plugin_command

    app = App(_configure_environment(args))
    try:
        return run_plugin_command(args, app)
    finally:
        app.close()


#: what each command of `sitecache.cli_parser.COMMANDS` runs
HANDLERS: dict[str, Command] = {
    "serve": command_serve,
    "init": command_init,
    "migrate": command_migrate,
    "user create": command_user_create,
    "user list": command_user_list,
    "user delete": command_user_delete,
    "user passwd": command_user_passwd,
    "app-password create": command_app_password_create,
    "app-password list": command_app_password_list,
    "app-password revoke": command_app_password_revoke,
    "cache": command_cache,
    "nginx-config": command_nginx_config,
    "openapi": command_openapi,
    "health": command_health,
    "plugin": command_plugin,
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand (`sitecache.cli_parser`)."""
    return cli_parser.build_parser(HANDLERS)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Command = args.handler
    try:
        status = handler(args)
        # A reader that went away is found here, not in the interpreter's flush at exit.
        sys.stdout.flush()
    except BrokenPipeError:
        return _reader_gone()
    except Exception as exc:
        failure = _expected_failure(exc)
        if failure is None:
            raise
        return failure
    return status


def _reader_gone() -> int:
    """The output's reader went away (``sitecache user list | head -1``): exit quietly with
    status 1, as the Python documentation's "Note on SIGPIPE" does.

    Standard output is pointed at ``os.devnull`` so that the interpreter's last flush of what
    is still buffered cannot fail (and print) again.
    """
    try:
        descriptor = sys.stdout.fileno()
    except (OSError, ValueError):
        return 1  # not a file descriptor (captured output): nothing will be flushed to it
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)
    return 1


def _expected_failure(exc: Exception) -> int | None:
    """Report an expected failure on one line of standard error; its exit status (``None``:
    not one, a bug to show with its traceback).

    The classes are imported here, once a command failed: an exception of a module no
    command loaded cannot have been raised.
    """
    import sqlite3

    from sitecache.auth.db import DatabaseError
    from sitecache.config import ConfigError
    from sitecache.domain_errors import DomainError, OutageError

    if isinstance(exc, ConfigError):
        print(f"sitecache: {terminal_text(exc)}", file=sys.stderr)
        return 2
    if isinstance(exc, OutageError):
        # The site's database down, locked or full: what failed, where (no password).
        print(f"sitecache: {terminal_text(exc)}", file=sys.stderr)
        return 1
    if isinstance(exc, DomainError):
        # A refusal of the domain (users, passwords, cache options and URLs), in its words.
        print(f"sitecache: {terminal_text(exc.message)}", file=sys.stderr)
        return 1
    if isinstance(exc, UnicodeError):
        # Command-line text that is not UTF-8 arrives with lone surrogates.
        print("sitecache: the arguments must be valid UTF-8 text", file=sys.stderr)
        return 2
    if isinstance(exc, sqlite3.Error | DatabaseError):
        # A full disk, a read-only or corrupt database, a schema of another release: the
        # reason, without a traceback.
        print(f"sitecache: the site database cannot be used: {terminal_text(exc)}", file=sys.stderr)
        return 1
    if isinstance(exc, OSError):
        # A read-only or missing directory, a permission problem.
        where = f": {exc.filename}" if exc.filename else ""
        print(f"sitecache: {terminal_text(f'{exc.strerror or exc}{where}')}", file=sys.stderr)
        return 1
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
