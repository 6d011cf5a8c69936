"""The application: hooks, the REST server and the site, composed into one WSGI callable.

``gunicorn 'sitecache.app:create_app()'`` serves it with configuration from the environment
(see `sitecache.config`). Everything the application holds lives on the `App` instance, so two
applications can run in one process.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.wrappers import Request, Response

from sitecache.auth import AuthService, AuthViews, PasswordHasher
from sitecache.auth.sessions import COOKIE_NAME
from sitecache.cache import CacheEngine, CacheRules, PageCache, StorageError, open_storage
from sitecache.cache.keys import normalize_host
from sitecache.cache.policy import AUTH_COOKIE_PREFIXES, BYPASS_PATH_PREFIXES
from sitecache.config import Config, ConfigError, load_config
from sitecache.hooks import Hooks
from sitecache.rest.debug import DebugNotices
from sitecache.rest.http import (
    MAX_BODY_BYTES,
    error_response,
    payload_too_large,
    query_params,
    read_bounded_body,
    serve_request,
)
from sitecache.rest.params import parse_pairs
from sitecache.rest.server import RestServer
from sitecache.rest.urls import RequestContext, RestSettings, extract_rest_route
from sitecache.site import FrontSite
from sitecache.templating import make_template_environment

__all__ = ["App", "create_app"]

logger = logging.getLogger("sitecache")

StartResponse = Callable[..., Any]

EVERY_RESPONSE_HEADERS: Final[dict[str, str]] = {"X-Content-Type-Options": "nosniff"}
"""Sent with every answer (unless the view set its own value)."""
HTML_PAGE_HEADERS: Final[dict[str, str]] = {
    "Content-Security-Policy": (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; "
        "object-src 'none'; base-uri 'self'; frame-ancestors 'self'"
    ),
    "X-Frame-Options": "SAMEORIGIN",
    "Referrer-Policy": "strict-origin-when-cross-origin",
}
"""Sent with the site's HTML pages (the login and admin pages send stricter ones)."""


def rest_settings(config: Config) -> RestSettings:
    """The REST server's settings from the application configuration."""
    return RestSettings(
        prefix=config.rest_prefix,
        site_url=config.site_url,
        permalink_structure=config.permalink_structure,
        debug=config.debug,
        api_root_rel=config.api_root_rel,
        force_ssl_admin=config.force_ssl_admin,
        help_url=config.help_url,
        site_name=config.site_name,
        site_description=config.site_description,
        timezone_string=config.timezone_string,
        gmt_offset=config.gmt_offset,
    )


def cache_rules(config: Config) -> CacheRules:
    """The page cache's fixed rules for this site: its host, its REST and admin paths."""
    hosts = None
    namespace_paths: tuple[str, ...] = ()
    if config.site_url:
        parts = urlsplit(config.site_url)
        hosts = frozenset({normalize_host(parts.netloc, parts.scheme)})
    prefix = "/" + config.rest_prefix.strip("/")
    namespace_paths = (prefix, "/index.php" + prefix)
    return CacheRules(
        hosts=hosts,
        bypass_path_prefixes=tuple(dict.fromkeys((*namespace_paths, *BYPASS_PATH_PREFIXES))),
        auth_cookie_prefixes=tuple(dict.fromkeys((COOKIE_NAME, *AUTH_COOKIE_PREFIXES))),
    )


def cache_engine(config: Config) -> CacheEngine:
    """The cache engine on the configured backend (disk under the data directory by default).

    Raises:
        ConfigError: the storage cannot be opened.
    """
    namespace = config.cache_namespace
    if not namespace and config.site_url:
        namespace = re.sub(r"[^A-Za-z0-9._-]", "_", urlsplit(config.site_url).netloc.lower())
    try:
        storage = open_storage(
            config.cache_backend,
            path=config.data_dir / "cache",
            redis_url=config.redis_url,
            namespace=namespace or "default",
        )
    except StorageError as exc:
        raise ConfigError(f"the page cache cannot start: {exc}") from exc
    return CacheEngine(storage, cache_rules(config))


class App:
    """The sitecache WSGI application (PEP 3333).

    Attributes:
        config: the configuration it was built with.
        hooks: its actions and filters.
        server: its REST server.
        cache: the page cache in front of the site (`PageCache`); ``cache.engine`` purges.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.hooks = Hooks()
        self.notices = DebugNotices(self.hooks, debug=config.debug)
        self.server = RestServer(self.hooks, rest_settings(config), self.notices)
        self.templates = make_template_environment()
        self.auth = AuthService(
            config.data_dir,
            hasher=PasswordHasher(n=config.password_hash_cost),
            app_passwords=config.application_passwords,
        )
        self.auth.install(self.server, self.hooks)
        self.views = AuthViews(self.auth, self.server, self.templates).routes()
        self.site = FrontSite(self.server, self.templates)
        # The page cache sits in front of everything (REST, login and admin paths bypass it);
        # behind trusted reverse proxies it sees the client's scheme and host as the app does.
        self.cache = PageCache(
            self._serve,
            engine=cache_engine(config),
            debug_log=config.data_dir / "logs" / "cache-debug.log",
        )
        self._entry: Callable[..., Iterable[bytes]] = self.cache
        # Behind trusted reverse proxies, take the client's address, scheme and host from their
        # X-Forwarded-* headers (and from nobody else's).
        if config.proxy_count:
            count = config.proxy_count
            self._entry = ProxyFix(
                self.cache, x_for=count, x_proto=count, x_host=count, x_port=count
            )
        for spec in config.plugins:
            self.load_plugin(spec)

    # ------------------------------------------------------------------ plugins and notices
    def load_plugin(self, spec: str) -> None:
        """Import ``module:function`` and call it with this application."""
        module_name, _, attribute = spec.partition(":")
        try:
            target: Any = importlib.import_module(module_name)
            for part in attribute.split("."):
                target = getattr(target, part)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"plugin {spec!r} cannot be loaded: {exc}") from exc
        if not callable(target):
            raise ConfigError(f"plugin {spec!r} is not callable")
        target(self)

    def doing_it_wrong(self, function: str, message: str, version: str | None = None) -> None:
        """Record misuse (``doing_it_wrong_run`` action; ``X-Site-DoingItWrong`` in debug)."""
        self.notices.doing_it_wrong(function, message, version)

    def deprecated_function(
        self, function: str, replacement: str | None = None, version: str | None = None
    ) -> None:
        """Record a deprecated call (``deprecated_function_run``; ``X-Site-DeprecatedFunction``)."""
        self.notices.deprecated_function(function, replacement, version)

    def deprecated_argument(
        self, function: str, message: str | None = None, version: str | None = None
    ) -> None:
        """Record a deprecated parameter (action ``deprecated_argument_run``, debug header)."""
        self.notices.deprecated_argument(function, message, version)

    @property
    def data_dir(self) -> Path:
        """Where this application keeps its data."""
        return self.config.data_dir

    # ------------------------------------------------------------------ WSGI
    def handle(self, request: Request) -> Response:
        """Answer one HTTP request: REST routes, the login and account pages, else the site."""
        # SECURITY: every body is bounded before anything reads it (forms, JSON, raw).
        request.max_content_length = MAX_BODY_BYTES
        request.max_form_memory_size = MAX_BODY_BYTES
        query = query_params(request.environ)
        try:
            read_bounded_body(request)
        except RequestEntityTooLarge:
            prefix = self.server.settings.prefix
            if "rest_route" in query or extract_rest_route(request.path, query, prefix) is not None:
                return error_response(self.server, payload_too_large())
            raise
        form = None
        if request.method == "POST" and request.path in ("/", "/index.php"):
            try:
                request.get_data(cache=True)  # keep the raw body for the REST request
                form = parse_pairs(request.form.items(multi=True))
            except RequestEntityTooLarge:
                if "rest_route" in query:
                    return error_response(self.server, payload_too_large())
                raise
        route = extract_rest_route(request.path, query, self.server.settings.prefix, form)
        if route is not None:
            return serve_request(self.server, request, route, query)
        token = self.server.using_context(RequestContext.from_environ(request.environ))
        try:
            view = self.views.get(request.path)
            return view(request) if view is not None else self.site(request)
        finally:
            self.server.reset_context(token)

    def __call__(
        self, environ: Mapping[str, Any], start_response: StartResponse
    ) -> Iterable[bytes]:
        return self._entry(environ, start_response)

    def _serve(self, environ: Any, start_response: StartResponse) -> Iterable[bytes]:
        request = Request(dict(environ) if not isinstance(environ, dict) else environ)
        try:
            response = self.handle(request)
        except RequestEntityTooLarge:
            response = _plain_error(413, "The request body is too large.")
        except ClientDisconnected:
            response = _plain_error(400, "The request body was not received in full.")
        except Exception:
            # REST requests have their own boundary (a JSON 500); this one covers the pages.
            # SECURITY: %r escapes the path (a newline in it would forge a log line).
            logger.exception("Unhandled exception while serving %r", request.path)
            response = _plain_error(500, "There has been a critical error on this website.")
        _add_security_headers(response)
        return response(request.environ, start_response)


def _add_security_headers(response: Response) -> None:
    """The defaults of `EVERY_RESPONSE_HEADERS` and, on HTML, `HTML_PAGE_HEADERS`."""
    headers = response.headers
    for name, value in EVERY_RESPONSE_HEADERS.items():
        headers.setdefault(name, value)
    if response.mimetype == "text/html":
        for name, value in HTML_PAGE_HEADERS.items():
            headers.setdefault(name, value)


def _plain_error(status: int, message: str) -> Response:
    response = Response(f"{message}\n", status=status, mimetype="text/plain")
    response.headers["Cache-Control"] = "no-store, private"
    return response


def create_app(
    config: Mapping[str, Any] | str | Path | Config | None = None, **overrides: Any
) -> App:
    """Build the application.

    Args:
        config: ``None`` reads the environment (``SITECACHE_CONFIG``, ``SITECACHE_DATA_DIR``,
            ...); a path reads that TOML file; a mapping or `Config` is used as given.
        overrides: configuration keys that win over everything else.

    Raises:
        ConfigError: a configuration value is invalid or a plugin cannot be loaded.
    """
    return App(load_config(config, **overrides))
