"""The grammar of the ``sitecache`` command line: its argparse parser, apart from what each
command does (the modules of `sitecache.cli`).

Each subcommand's parser sets ``handler`` to the function `sitecache.cli` gives for it under
the names of `COMMANDS`, so the grammar and the commands are written once each.

Building the parser imports nothing but the standard library: ``--version``, ``--help`` and
every command pay for what they use only (``cache flush --all`` is mostly process start).
The few values the grammar shows from other modules (the roles, gunicorn's defaults, the web
server's user) are written here; ``tests/test_cli_imports.py`` checks they are the same.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

__all__ = ["COMMANDS", "Command", "build_parser"]

Command = Callable[[argparse.Namespace], int]
"""Runs one command; its exit status."""

#: The name of every command a parser needs a handler for.
COMMANDS: Final = (
    "serve",
    "init",
    "migrate",
    "user create",
    "user list",
    "user delete",
    "user passwd",
    "app-password create",
    "app-password list",
    "app-password revoke",
    "cache",
    "nginx-config",
    "openapi",
    "health",
    "plugin",
)


#: `sitecache.auth.ROLES`: the roles ``user create --role`` offers
ROLES: Final = ("administrator", "editor", "author", "contributor", "subscriber")
#: `sitecache.serving`'s defaults, shown by ``serve --help``
DEFAULT_THREADS: Final = 8
DEFAULT_TIMEOUT: Final = 30
DEFAULT_HEADER_TIMEOUT: Final = 10
#: `sitecache.cache.api.static.DEFAULT_WEB_USER`: ``nginx-config --user``'s default
DEFAULT_WEB_USER: Final = "www-data"


def _version() -> str:
    import importlib.metadata  # only for --version

    try:
        return importlib.metadata.version("sitecache")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a checkout
        return "unknown (not installed)"


class _VersionAction(argparse._VersionAction):
    """argparse's ``version`` action, the version looked up only when ``--version`` is given."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        """Print ``sitecache <version>`` and exit 0, as ``action="version"`` does."""
        self.version = f"sitecache {_version()}"
        super().__call__(parser, namespace, values, option_string)


def _positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


_EPILOG = """\
Configuration comes from $SITECACHE_CONFIG (a TOML file), $SITECACHE_DATA_DIR,
$SITECACHE_SITE_URL and $SITECACHE_DEBUG, or from --config and --data-dir.

Start here:
  sitecache init                       create ./var and an administrator (password shown once)
  sitecache serve                      serve on http://127.0.0.1:8000/ (initializes on first start)
  sitecache user create bob --role editor --password -
  sitecache app-password create bob --name "my script"

`sitecache COMMAND --help` describes a command.
"""


def build_parser(handlers: Mapping[str, Command]) -> argparse.ArgumentParser:
    """The argument parser of every subcommand; each sets ``handler`` to its entry of
    ``handlers`` (`COMMANDS` names them).

    Raises:
        KeyError: ``handlers`` lacks a command.
    """
    parser = argparse.ArgumentParser(
        prog="sitecache",
        description="sitecache: a page cache and WordPress-style REST management interface "
        "for WSGI content sites.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument("--config", help="a TOML configuration file (else $SITECACHE_CONFIG)")
    parser.add_argument("--data-dir", help="the data directory (else $SITECACHE_DATA_DIR or ./var)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _add_serve_command(commands, handlers)
    _add_init_command(commands, handlers)
    migrate = commands.add_parser(
        "migrate",
        help="bring the site database's schema up to this release",
        description="Apply the pending migrations of the site database (a shared PostgreSQL "
        "is migrated only by this command or `init`; serving nodes refuse a schema that is "
        "not their release's). Prints each component's version.",
    )
    migrate.set_defaults(handler=handlers["migrate"])
    user = commands.add_parser("user", help="manage users", description="Manage users.")
    user_commands = user.add_subparsers(dest="user_command", required=True, metavar="COMMAND")
    add_user_commands(user_commands, handlers)

    app_password = commands.add_parser(
        "app-password",
        help="manage application passwords",
        description="Manage application passwords (HTTP Basic credentials for the REST API).",
    )
    app_password_commands = app_password.add_subparsers(
        dest="app_password_command", required=True, metavar="COMMAND"
    )
    add_app_password_commands(app_password_commands, handlers)

    add_cache_commands(commands).set_defaults(handler=handlers["cache"])
    add_nginx_command(commands).set_defaults(handler=handlers["nginx-config"])
    commands.add_parser(
        "openapi", help="print the OpenAPI 3.1 document of every REST route (JSON)"
    ).set_defaults(handler=handlers["openapi"])
    health = commands.add_parser(
        "health", help="run the site-health tests (exit status 1 when one is critical)"
    )
    health.add_argument("--json", action="store_true", help="print JSON instead of lines")
    health.set_defaults(handler=handlers["health"])
    _add_plugin_commands(commands, handlers)
    return parser


def _add_plugin_commands(commands: Any, handlers: Mapping[str, Command]) -> None:
    """``plugin list``, ``plugin activate`` and ``plugin deactivate``."""
    plugin = commands.add_parser(
        "plugin",
        help="list, activate and deactivate installed plugins",
        description="The site's installed plugins (entry point group sitecache.plugins). "
        "Activating or deactivating one is stored for every worker and node, as over REST, "
        "and purges every cached page of the site.",
    )
    plugin.set_defaults(handler=handlers["plugin"])
    sub = plugin.add_subparsers(dest="plugin_command", required=True, metavar="COMMAND")
    listing = sub.add_parser(
        "list", help="every installed plugin and its status", description="List the plugins."
    )
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    for name, verb in (("activate", "activate"), ("deactivate", "deactivate")):
        command = sub.add_parser(
            name,
            help=f"{verb} a plugin (purges every cached page)",
            description=f"{verb.capitalize()} a plugin for every worker and node; every cached "
            "page of the site is purged.",
        )
        command.add_argument("plugin", help="the plugin's id (distribution/entry point)")


def _add_serve_command(commands: Any, handlers: Mapping[str, Command]) -> None:
    """``serve``."""
    serve = commands.add_parser(
        "serve",
        help="run the site under gunicorn",
        description="Serve the site with gunicorn (threaded workers; initializes the data "
        "directory on first start).",
    )
    serve.add_argument(
        "--bind", default="127.0.0.1:8000", help="host:port to listen on (default 127.0.0.1:8000)"
    )
    serve.add_argument("--workers", type=_positive, default=2, help="worker processes (default 2)")
    serve.add_argument(
        "--threads",
        type=_positive,
        default=DEFAULT_THREADS,
        help=f"threads per worker (default {DEFAULT_THREADS})",
    )
    serve.add_argument(
        "--timeout",
        type=_positive,
        default=DEFAULT_TIMEOUT,
        help=f"seconds a request may take to arrive, its head at most {DEFAULT_HEADER_TIMEOUT} "
        f"(default {DEFAULT_TIMEOUT})",
    )
    serve.add_argument("--reload", action="store_true", help="restart when the code changes")
    serve.add_argument(
        "--demo", action="store_true", help="on a first start, fill the site with demo content"
    )
    serve.set_defaults(handler=handlers["serve"])


def _add_init_command(commands: Any, handlers: Mapping[str, Command]) -> None:
    """``init``."""
    init = commands.add_parser(
        "init",
        help="create the data directory and an administrator",
        description="Create the data directory, the database, the secret key and an "
        "administrator whose password is printed once.",
    )
    init.add_argument("--login", default="admin", help="the administrator's login (admin)")
    init.add_argument("--email", help="the administrator's e-mail address")
    init.add_argument(
        "--demo", action="store_true", help="fill the site with demo posts, pages and comments"
    )
    init.set_defaults(handler=handlers["init"])


def add_user_commands(user_commands: Any, handlers: Mapping[str, Command]) -> None:
    """``user create``, ``user list``, ``user delete`` and ``user passwd``."""
    create_user = user_commands.add_parser("create", help="add a user", description="Add a user.")
    create_user.add_argument("login", help="the new user's login")
    create_user.add_argument(
        "--role", choices=ROLES, default="subscriber", help="the user's role (subscriber)"
    )
    create_user.add_argument(
        "--password", help="the password; '-' reads it from standard input; omit to generate one"
    )
    create_user.add_argument("--email", help="the user's e-mail address")
    create_user.add_argument("--display-name", help="the name shown for the user")
    create_user.set_defaults(handler=handlers["user create"])

    listing = user_commands.add_parser("list", help="list the users")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(handler=handlers["user list"])

    delete = user_commands.add_parser("delete", help="delete a user (never the last administrator)")
    delete.add_argument("login", help="the user's login or e-mail address")
    delete.add_argument(
        "--reassign",
        type=int,
        metavar="ID",
        help="give the user's posts and pages to the user with this id (as REST's reassign)",
    )
    delete.set_defaults(handler=handlers["user delete"])

    passwd = user_commands.add_parser("passwd", help="set a user's password (ends their sessions)")
    passwd.add_argument("login", help="the user's login or e-mail address")
    passwd.add_argument(
        "--password",
        help="the new password; '-' reads it from standard input; omit to generate one "
        "(printed once)",
    )
    passwd.set_defaults(handler=handlers["user passwd"])


def add_app_password_commands(app_password_commands: Any, handlers: Mapping[str, Command]) -> None:
    """``app-password create``, ``app-password list`` and ``app-password revoke``."""
    create_app_password = app_password_commands.add_parser(
        "create",
        help="create an application password (printed once)",
        description="Create an application password for a user; it is printed once.",
    )
    create_app_password.add_argument("login", help="the user's login or e-mail address")
    create_app_password.add_argument("--name", required=True, help="the application's name")
    create_app_password.add_argument("--app-id", help="the application's UUID")
    create_app_password.set_defaults(handler=handlers["app-password create"])

    listing = app_password_commands.add_parser("list", help="list a user's application passwords")
    listing.add_argument("login", help="the user's login or e-mail address")
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")
    listing.set_defaults(handler=handlers["app-password list"])

    revoke = app_password_commands.add_parser(
        "revoke", help="delete one application password of a user"
    )
    revoke.add_argument("login", help="the user's login or e-mail address")
    revoke.add_argument("uuid", help="the password's UUID (see `app-password list`)")
    revoke.set_defaults(handler=handlers["app-password revoke"])


#: ``sitecache cache flush --help``: what each option purges, the default first.
FLUSH_DESCRIPTION: Final = (
    "Purge pages from the page cache. With no option, every page of this site (its host) is "
    "deleted, as POST /cache with an empty body does; --all also purges every other host kept "
    "in the same storage; --expired, --url, --tag and --post-id purge only what they name."
)


def add_cache_commands(commands: Any) -> argparse.ArgumentParser:
    """Add ``cache`` and its subcommands to an argparse subparsers object; the ``cache`` parser."""
    cache: argparse.ArgumentParser = commands.add_parser(
        "cache", help="inspect, flush and preload the page cache"
    )
    sub = cache.add_subparsers(dest="cache_command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str, description: str = "") -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(
            name,
            help=help_text,
            description=description or f"{help_text[0].upper()}{help_text[1:]}.",
        )
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")
        return parser

    command("status", "storage, preload, GC and warnings")
    command("stats", "entries, bytes, hits, misses, bypasses, purges")
    listing = command("list", "list stored pages")
    listing.add_argument("--page", default="1", help="the page of the listing (default 1)")
    listing.add_argument("--per-page", default="20", help="1 to 100 (default 20)")
    listing.add_argument("--search", default="", help="only URLs containing this text")
    listing.add_argument("--status", choices=["fresh", "expired"], help="only fresh or expired")
    flush = command("flush", "purge pages (default: every page of this site)", FLUSH_DESCRIPTION)
    scope = flush.add_mutually_exclusive_group()
    scope.add_argument("--all", action="store_true", help="every host in the storage")
    scope.add_argument("--expired", action="store_true", help="only expired pages")
    scope.add_argument("--url", action="append", help="a URL or /path (repeatable)")
    scope.add_argument("--tag", action="append", help="a purge tag (repeatable)")
    scope.add_argument("--post-id", help="a post and its related pages")
    flush.add_argument("--soft", action="store_true", help="mark stale instead of deleting")
    settings = command("settings", "read every setting, read one, or set one (as the REST API)")
    settings.add_argument("key", nargs="?", help="a setting (pages.feed for one page type)")
    settings.add_argument("value", nargs="?", help="the new value (JSON, or plain text)")
    command("enable", "turn caching on")
    command("disable", "turn caching off (pages are served live)")
    preload = command("preload", "ask the server to preload the site and follow it")
    preload.add_argument("--no-wait", action="store_true", help="ask and return at once")
    preload.add_argument("--cancel", action="store_true", help="cancel the running preload")
    return cache


def add_nginx_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``nginx-config`` to an argparse subparsers object; its parser."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "nginx-config", help="print the nginx server block of static-file mode"
    )
    parser.add_argument(
        "--upstream", default="127.0.0.1:8000", help="where gunicorn listens (127.0.0.1:8000)"
    )
    parser.add_argument("--listen", default="80", help="nginx's listen directive value (80)")
    parser.add_argument(
        "--user",
        default=DEFAULT_WEB_USER,
        help=f"the user nginx's workers run as, who must read static_root ({DEFAULT_WEB_USER})",
    )
    parser.add_argument(
        "--no-check",
        action="store_true",
        help="do not check that --user can read static_root (nginx runs on another machine)",
    )
    parser.add_argument(
        "--brotli",
        choices=("auto", "on", "off"),
        default="auto",
        help="brotli_static on for the index.html.br copies: auto (when this machine has "
        "nginx's brotli_static module), on, or off (auto)",
    )
    return parser
