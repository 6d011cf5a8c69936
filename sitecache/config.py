"""Application configuration: defaults, a TOML file, the environment, explicit overrides.

Where configuration comes from, lowest precedence first:

1. the defaults below (data under ``./var``, prefix ``site-json``, pretty permalinks);
2. a TOML file: the path given as ``config``, or ``$SITECACHE_CONFIG`` when ``config`` is
   ``None``;
3. when ``config`` is ``None``, the environment: ``SITECACHE_DATA_DIR``, ``SITECACHE_SITE_URL``,
   ``SITECACHE_DEBUG``, ``SITECACHE_CACHE_BACKEND``, ``SITECACHE_REDIS_URL``,
   ``SITECACHE_CACHE_NAMESPACE``;
4. a mapping given as ``config``;
5. keyword overrides.

Every value is checked against `CONFIG_SCHEMA` with the project's own schema engine; a bad or
unknown key raises `ConfigError` naming every problem at once, each rule said in words and an
unknown key with the closest known one (`sitecache.config_rules`).
"""

from __future__ import annotations

import errno
import os
import tempfile
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from sitecache.config_rules import config_problems
from sitecache.dotted_paths import DOTTED_PATH_PATTERN
from sitecache.rest.urls import PERMALINK_PATTERN
from sitecache.schema import sanitize_value_from_schema

if TYPE_CHECKING:
    from sitecache.auth.outages import StoreLimits
    from sitecache.cache.engine import CacheEngine

__all__ = [
    "CONFIG_SCHEMA",
    "PLUGIN_SPEC_PATTERN",
    "Config",
    "ConfigError",
    "check_writable_data_dir",
    "is_plugin_file",
    "load_config",
    "open_cache_engine",
]


class ConfigError(ValueError):
    """The configuration cannot be used; the message lists every problem."""


@dataclass(frozen=True, slots=True)
class Config:
    """The settings of one sitecache application (`CONFIG_SCHEMA` describes each key)."""

    data_dir: Path = Path("var")
    site_url: str | None = None
    rest_prefix: str = "site-json"
    permalink_structure: str = "/%postname%/"
    debug: bool = False
    api_root_rel: str = "https://api.w.org/"
    force_ssl_admin: bool = False
    site_name: str = "sitecache"
    site_description: str = "Just another sitecache site"
    timezone_string: str = ""
    gmt_offset: float = 0.0
    help_url: str = "https://developer.wordpress.org/rest-api/"
    plugins: tuple[str, ...] = field(default_factory=tuple)
    application_passwords: str = "auto"
    password_hash_cost: int = 2**15
    proxy_count: int = 0
    cache_backend: str = "disk"
    redis_url: str = "redis://127.0.0.1:6379/0"
    cache_namespace: str = ""
    static_root: Path | None = None
    #: where uploaded media files live (``None``: ``<data_dir>/uploads``)
    uploads_root: Path | None = None
    cache_timers: bool = True
    #: the site's database: "" (SQLite ``<data_dir>/site.db``), ``sqlite:///path`` or
    #: ``postgresql://user:password@host/name`` (shared by several nodes)
    database_url: str = field(default="", repr=False)
    #: PostgreSQL: seconds opening one connection may take (whole seconds, at least 2)
    database_connect_timeout: float = 2.0
    #: PostgreSQL: seconds a request waits for a connection of the pool
    database_pool_timeout: float = 2.0
    #: SQLite: seconds a write waits for another process's lock ("database is locked")
    database_busy_timeout: float = 4.0
    #: the ``Retry-After`` (seconds) of a 503 ``site_unavailable`` while the database fails
    database_retry_after: int = 5
    #: a bearer token that may read ``/site-admin/metrics`` without logging in ("": none)
    metrics_token: str = field(default="", repr=False)
    #: seconds a commenter waits between two comments (WordPress's 15; 0: no flood control)
    comment_flood_interval: int = 15
    #: free megabytes under which ``/status`` and ``/healthz`` say a disk is low
    disk_low_mb: int = 100
    #: free share of a disk (percent) under which it is low, whichever comes first
    disk_low_percent: float = 5.0

    @property
    def static_directory(self) -> Path:
        """Where static-file mode writes its copies: ``static_root``, else
        ``<data_dir>/static``."""
        return self.static_root if self.static_root is not None else self.data_dir / "static"

    @property
    def uploads_directory(self) -> Path:
        """Where uploaded media files live: ``uploads_root``, else ``<data_dir>/uploads``."""
        return self.uploads_root if self.uploads_root is not None else self.data_dir / "uploads"

    def store_limits(self) -> StoreLimits:
        """How long the site store waits for its database (the ``database_*_timeout`` keys)."""
        from sitecache.auth.outages import StoreLimits

        return StoreLimits(
            connect_timeout=self.database_connect_timeout,
            pool_timeout=self.database_pool_timeout,
            busy_timeout=self.database_busy_timeout,
            retry_after=self.database_retry_after,
        )

    def as_dict(self) -> dict[str, Any]:
        """The configuration as plain values (paths as strings)."""
        values = asdict(self)
        values["data_dir"] = str(self.data_dir)
        values["plugins"] = list(self.plugins)
        for key in ("static_root", "uploads_root"):
            if values[key] is None:
                del values[key]
            else:
                values[key] = str(values[key])
        return values


#: A plugin spec: ``module.path:function``, or ``path/to/file.py:function`` (a relative path
#: is relative to the TOML file).
PLUGIN_SPEC_PATTERN: Final = r"^(?:[\w.]+|[^:]+\.py):[\w.]+$"


def _key(description: str, **schema: Any) -> dict[str, Any]:
    """A configuration key's schema with its description (the configuration reference shows
    it; a key without one fails the documentation build)."""
    return {**schema, "description": description}


CONFIG_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "data_dir": _key(
            "Where the site database, the secret key and the disk cache live (made 0700).",
            type="string",
            minLength=1,
        ),
        "site_url": _key(
            "The site's home URL (https://example.org). Set it in production: only its host "
            "is cached, and links are built from it rather than from each request's host.",
            type=["null", "string"],
            pattern=r"^https?://[^/?#\s]+(/[^?#\s]*)?$",
        ),
        "rest_prefix": _key(
            "The REST API's URL prefix (/site-json/...).",
            type="string",
            pattern=r"^[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$",
        ),
        "permalink_structure": _key(
            "The posts' URLs (/%postname%/, /%year%/%monthnum%/%postname%/, ...); empty for "
            "plain permalinks (/?p=ID, ?rest_route= REST URLs).",
            type="string",
            pattern=PERMALINK_PATTERN,
        ),
        "debug": _key("Send the X-Site-* debug headers with REST answers.", type="boolean"),
        "api_root_rel": _key(
            "The link relation of the API-root Link header (and the wp CURIE).",
            type="string",
            minLength=1,
        ),
        "force_ssl_admin": _key("Serve the login and admin pages over https only.", type="boolean"),
        "site_name": _key("The site's title, until the title option is set.", type="string"),
        "site_description": _key(
            "The site's tagline, until the description option is set.", type="string"
        ),
        "timezone_string": _key(
            "The site's time zone (Europe/Paris); empty: gmt_offset.", type="string"
        ),
        "gmt_offset": _key(
            "Hours from UTC when timezone_string is empty.", type="number", minimum=-14, maximum=14
        ),
        "help_url": _key("The help link of the REST API index.", type="string"),
        "plugins": _key(
            "Plugins called with the application at start: module:function or "
            "path/to/file.py:function (relative to the configuration file).",
            type="array",
            items={"type": "string", "pattern": PLUGIN_SPEC_PATTERN},
        ),
        "application_passwords": _key(
            "When application passwords work: auto (over TLS, or from loopback), on or off.",
            type="string",
            enum=["auto", "on", "off"],
        ),
        "password_hash_cost": _key(
            "scrypt's N for password hashes; lower it only for tests.",
            type="integer",
            minimum=1024,
            maximum=1048576,
        ),
        "proxy_count": _key(
            "How many trusted reverse proxies stand in front: their X-Forwarded-* headers give "
            "the client's address, scheme and host (0: none is trusted).",
            type="integer",
            minimum=0,
            maximum=5,
        ),
        "cache_backend": _key(
            "The page cache's storage: disk (under data_dir/cache, one machine), redis "
            "(several nodes), memory (one process, tests), or a third-party storage named "
            "package.module:factory (the factory is called with a StorageOptions and returns "
            "a Storage; see the how-to Write a storage backend).",
            type="string",
            pattern=f"^(disk|memory|redis)$|{DOTTED_PATH_PATTERN}",
        ),
        "redis_url": _key(
            "The Redis server of the redis backend.",
            type="string",
            pattern=r"^(redis|rediss|unix)://",
        ),
        "cache_namespace": _key(
            "The Redis key prefix of this site's cache, so several sites can share a Redis; "
            "empty: the site identity (data_dir/site-id).",
            type="string",
            pattern=r"^[A-Za-z0-9._-]{0,64}$",
        ),
        "static_root": _key(
            "Where static-file mode writes its copies (default data_dir/static); outside the "
            "data directory for nginx to read them.",
            type="string",
            minLength=1,
        ),
        "uploads_root": _key(
            "Where uploaded media files live (default data_dir/uploads), served at /uploads/.",
            type="string",
            minLength=1,
        ),
        "cache_timers": _key(
            "Run the cache's GC, scheduled preloads and counter flushes in a background thread "
            "of each server process (started by its first request).",
            type="boolean",
        ),
        "database_url": _key(
            "The site store: empty for SQLite data_dir/site.db, sqlite:///path, or "
            "postgresql://user:password@host/name for a store several machines share (its "
            "password never appears in messages).",
            type="string",
            pattern=r"^(|postgres(ql)?://\S+|sqlite:///\S+)$",
        ),
        "database_connect_timeout": _key(
            "PostgreSQL: seconds opening one connection may take (whole seconds, at least 2); "
            "past it, requests that need the database answer 503 site_unavailable.",
            type="number",
            minimum=1,
            maximum=60,
        ),
        "database_pool_timeout": _key(
            "PostgreSQL: seconds a request waits for a connection of its process's pool before "
            "it answers 503 site_unavailable.",
            type="number",
            minimum=0.1,
            maximum=60,
        ),
        "database_busy_timeout": _key(
            "SQLite: seconds a write waits for another process's write lock (database is "
            "locked) before it answers 503 site_unavailable.",
            type="number",
            minimum=0.05,
            maximum=60,
        ),
        "database_retry_after": _key(
            "The Retry-After (seconds) of a 503 site_unavailable while the database fails.",
            type="integer",
            minimum=1,
            maximum=3600,
        ),
        # Printable ASCII without spaces, long enough not to be guessed ("" turns it off).
        "metrics_token": _key(
            "A bearer token (16 to 512 printable characters) that may read "
            "/site-admin/metrics without logging in; empty: none.",
            type="string",
            pattern=r"^(|[\x21-\x7e]{16,512})$",
        ),
        "comment_flood_interval": _key(
            "Seconds one commenter (an address or e-mail address, or a user) waits between two "
            "comments (WordPress's 15); 0: no flood control. Moderators are never throttled.",
            type="integer",
            minimum=0,
            maximum=86400,
        ),
        "disk_low_mb": _key(
            "Free megabytes under which /status warns disk_low and /healthz's disk part warns "
            "(the data directory's, the disk cache's and the static root's disks).",
            type="integer",
            minimum=0,
            maximum=10_000_000,
        ),
        "disk_low_percent": _key(
            "The free share of a disk (percent) under which it is low, whichever of this and "
            "disk_low_mb comes first.",
            type="number",
            minimum=0,
            maximum=100,
        ),
    },
}

_ENVIRONMENT: Final = {
    "SITECACHE_DATA_DIR": "data_dir",
    "SITECACHE_SITE_URL": "site_url",
    "SITECACHE_DEBUG": "debug",
    "SITECACHE_CACHE_BACKEND": "cache_backend",
    "SITECACHE_REDIS_URL": "redis_url",
    "SITECACHE_CACHE_NAMESPACE": "cache_namespace",
    "SITECACHE_METRICS_TOKEN": "metrics_token",
    "SITECACHE_DATABASE_URL": "database_url",
    "SITECACHE_COMMENT_FLOOD_INTERVAL": "comment_flood_interval",
}


def open_cache_engine(config: Config, namespace: str = "") -> CacheEngine:
    """The cache engine on ``config``'s backend (disk under the data directory by default), in
    ``namespace`` when given, else ``config.cache_namespace``, else the site identity kept in
    the data directory. The server and the command line open it through here, so they always
    read and purge the same entries.

    Raises:
        StorageError: the storage cannot be opened.
    """
    from sitecache.cache.deployment import engine_for  # the cache only when one is opened

    return engine_for(
        data_dir=config.data_dir,
        site_url=config.site_url,
        rest_prefix=config.rest_prefix,
        backend=config.cache_backend,
        redis_url=config.redis_url,
        namespace=namespace or config.cache_namespace,
    )


#: The errors that mean a directory cannot be written by this process (whatever the disk's
#: free space: a full disk is answered 507 while serving, it does not stop a start).
_UNWRITABLE: Final = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def check_writable_data_dir(config: Config) -> None:
    """Refuse a data directory this process cannot write in: read-only, or owned by another
    user (a missing one, its nearest existing parent: nothing is created here). A SQLite site
    database there must be writable too.

    Raises:
        ConfigError: one line naming the directory (or file), the user and what to do.
    """
    from sitecache.auth.store import is_postgres_url

    data_dir = config.data_dir.resolve()
    database = data_dir / "site.db"
    existing = next(
        (path for path in (data_dir, *data_dir.parents) if path.is_dir()), Path(data_dir.anchor)
    )
    try:
        handle, probe = tempfile.mkstemp(prefix=".write-check-", dir=existing)
        os.close(handle)
        os.unlink(probe)
        sqlite = not is_postgres_url(config.database_url)
        if sqlite and database.exists() and not os.access(database, os.R_OK | os.W_OK):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(database))
    except OSError as exc:
        if exc.errno not in _UNWRITABLE:
            return  # a full disk: the site starts, and writes answer 507 until space is freed
        where = database if exc.filename == str(database) else data_dir
        raise ConfigError(
            f"the data directory {where} cannot be written by the user {_user_name()}: "
            f"{exc.strerror or exc}. Make it writable for that user, or choose another with "
            "--data-dir or SITECACHE_DATA_DIR"
        ) from exc


def _user_name() -> str:
    """This process's user: its name and uid (``www-data (uid 33)``)."""
    import pwd

    uid = os.geteuid()
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError as exc:
        raise ConfigError(f"configuration file {path} does not exist") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"configuration file {path} is not valid TOML: {exc}") from exc
    # A [sitecache] table is accepted, so the settings can share a file with others.
    section = data.get("sitecache", data)
    if not isinstance(section, dict):
        raise ConfigError(f"configuration file {path}: [sitecache] must be a table")
    return _relative_to(path.parent, section)


def _relative_to(directory: Path, section: dict[str, Any]) -> dict[str, Any]:
    """The file's values with its relative plugin file paths (``x.py:f``) made absolute from
    ``directory``, so the file works whatever the current directory."""
    plugins = section.get("plugins")
    if not isinstance(plugins, list):
        return section
    resolved: list[Any] = []
    for spec in plugins:
        if isinstance(spec, str) and is_plugin_file(spec):
            location, _, attribute = spec.rpartition(":")
            if not Path(location).is_absolute():
                spec = f"{(directory / location).resolve()}:{attribute}"
        resolved.append(spec)
    return {**section, "plugins": resolved}


def is_plugin_file(spec: str) -> bool:
    """Whether a plugin spec names a Python file (``path/to/file.py:function``)."""
    return spec.rpartition(":")[0].endswith(".py")


def load_config(
    config: Mapping[str, Any] | str | Path | Config | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Config:
    """The `Config` from ``config`` and ``overrides`` (see the module docstring for the order).

    ``environ`` replaces ``os.environ`` as the environment read when ``config`` is ``None``.
    """
    values = _raw_values(config, environ)
    values.update(overrides)
    for key in ("data_dir", "static_root", "uploads_root"):
        if isinstance(values.get(key), Path):
            values[key] = str(values[key])
    if isinstance(values.get("plugins"), tuple):
        values["plugins"] = list(values["plugins"])
    problems = config_problems(values, CONFIG_SCHEMA, PLUGIN_SPEC_PATTERN)
    if problems:
        raise ConfigError(f"invalid configuration: {'; '.join(problems)}")
    clean = sanitize_value_from_schema(values, CONFIG_SCHEMA, "config")
    return Config(**_arguments(clean))


def _raw_values(
    config: Mapping[str, Any] | str | Path | Config | None, environ: Mapping[str, str] | None
) -> dict[str, Any]:
    """The values ``config`` names, before checks: the environment (and its TOML file) when
    ``None``, a TOML file, a `Config` or a mapping."""
    values: dict[str, Any] = {}
    if config is None:
        environment = os.environ if environ is None else environ
        file_name = environment.get("SITECACHE_CONFIG")
        if file_name:
            values.update(_read_toml(Path(file_name)))
        for variable, key in _ENVIRONMENT.items():
            if variable in environment:
                values[key] = environment[variable]
    elif isinstance(config, str | Path):
        values.update(_read_toml(Path(config)))
    elif isinstance(config, Config):
        values.update(config.as_dict())
    else:
        values.update(config)
    return values


def _arguments(clean: Mapping[str, Any]) -> dict[str, Any]:
    """`Config`'s keyword arguments from the checked values (paths as `Path`, ...)."""
    known = {item.name for item in fields(Config)}
    arguments = {key: value for key, value in clean.items() if key in known}
    for key in ("data_dir", "static_root", "uploads_root"):
        if key in arguments:
            arguments[key] = Path(arguments[key])
    if "plugins" in arguments:
        arguments["plugins"] = tuple(arguments["plugins"])
    if arguments.get("site_url"):
        arguments["site_url"] = str(arguments["site_url"]).rstrip("/")
    return arguments
