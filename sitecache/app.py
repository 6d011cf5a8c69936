"""The application: hooks, the REST server and the site, composed into one WSGI callable.

``gunicorn 'sitecache.app:create_app()'`` serves it with configuration from the environment
(see `sitecache.config`). Everything the application holds lives on the `App` instance, so two
applications can run in one process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from werkzeug.exceptions import ClientDisconnected, RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.wrappers import Request, Response

from sitecache.auth import AuthService, AuthViews, PasswordHasher
from sitecache.auth.stored_values import StoredValues
from sitecache.cache import CacheEngine, CacheRules, PageCache, StorageError
from sitecache.cache.api import CacheApi
from sitecache.cache.api.static import DEFAULT_WEB_USER, unreadable_reason
from sitecache.cache.deployment import (
    HEALTH_PATH,
    SHARED_IDENTITY_COPY,
    rules_for,
    shared_identity,
)
from sitecache.cache.latency import LatencyRecorder
from sitecache.cache.outcome import explanations
from sitecache.config import (
    Config,
    ConfigError,
    check_writable_data_dir,
    load_config,
    open_cache_engine,
)
from sitecache.disk_space import DiskSpace
from sitecache.domain_errors import OutageError
from sitecache.hooks import Hooks
from sitecache.invalidation import ContentInvalidation
from sitecache.ops_views import OpsViews
from sitecache.page_headers import EVERY_RESPONSE_HEADERS, HTML_PAGE_HEADERS, rest_settings
from sitecache.plugin_loading import load_plugin_target
from sitecache.rest.debug import DebugNotices
from sitecache.rest.http import (
    MAX_BODY_BYTES,
    BodilessRequest,
    RestHttpResponse,
    error_response,
    payload_too_large,
    query_params,
    read_bounded_body,
    serve_request,
)
from sitecache.rest.params import parse_pairs
from sitecache.rest.server import RestServer
from sitecache.rest.urls import RequestContext, extract_rest_route
from sitecache.rest.utf8_fields import (
    FORM_MEDIA_TYPE,
    MULTIPART_MEDIA_TYPE,
    malformed_multipart_fields,
    malformed_utf8_error,
    malformed_utf8_fields,
)
from sitecache.site import ContentService, FrontSite
from sitecache.site.blocks import BlockType, BlockTypeRegistry, RenderCallback, core_block_types
from sitecache.site.dashboard import CacheDashboard
from sitecache.site.extensions import PluginManager
from sitecache.site.health import HealthInputs
from sitecache.site.media_library import MediaLibrary
from sitecache.site.outbox import Outbox
from sitecache.site.rest import SiteRoutes
from sitecache.site.rest.health import HealthRoutes
from sitecache.site.rest.plugins import PluginsController
from sitecache.site.rest.themes import ThemesController
from sitecache.site.stylesheet import STYLESHEET_PATH, SiteStylesheet, stylesheet_version
from sitecache.site.themes import ThemeManager
from sitecache.site.upload_files import UPLOADS_PATH, UploadFiles
from sitecache.templating import make_template_environment

__all__ = ["App", "create_app"]

logger = logging.getLogger("sitecache")

#: Where the page cache's durable values (settings, plugin switches) live in the site's store.
DURABLE_PREFIX: Final = "cache:"

StartResponse = Callable[..., Any]


def site_option_defaults(config: Config) -> dict[str, Any]:
    """The defaults of the site options that the configuration provides."""
    return {
        "title": config.site_name,
        "description": config.site_description,
        "timezone": config.timezone_string,
        "permalink_structure": config.permalink_structure,
    }


def cache_rules(config: Config) -> CacheRules:
    """The page cache's fixed rules for this site: its host, its REST and admin paths."""
    return rules_for(config.site_url, config.rest_prefix)


def cache_engine(config: Config, namespace: str = "") -> CacheEngine:
    """The cache engine on the configured backend (disk under the data directory by default),
    in ``namespace`` when given (else `cache_namespace`, else the identity in the data dir).

    Raises:
        ConfigError: the storage cannot be opened.
    """
    try:
        return open_cache_engine(config, namespace)
    except StorageError as exc:
        raise ConfigError(f"the page cache cannot start: {exc}") from exc


class App:
    """The sitecache WSGI application (PEP 3333).

    Attributes:
        config: the configuration it was built with.
        hooks: its actions and filters.
        server: its REST server.
        cache: the page cache in front of the site (`PageCache`); ``cache.engine`` purges.
        blocks: the server-rendered block types post content may embed
            (`register_block_type` adds one).
    """

    _rest_paths: tuple[str, ...] = ()
    """Where REST paths start (``/site-json``, ...): GETs there get a lazy werkzeug request."""

    def __init__(self, config: Config) -> None:
        # A read-only data directory is one line naming it and the user, not a traceback.
        check_writable_data_dir(config)
        self.config = config
        self.hooks = Hooks()
        self.notices = DebugNotices(self.hooks, debug=config.debug)
        self.server = RestServer(self.hooks, rest_settings(config), self.notices)
        self.templates = make_template_environment()
        self._build_site(config)
        self._build_cache(config)
        prefix = self.server.settings.prefix
        self._rest_paths = (f"/{prefix}", f"//{prefix}", f"/index.php/{prefix}")
        self._entry: Callable[..., Iterable[bytes]] = self.cache
        # Behind trusted reverse proxies, take the client's address, scheme and host from their
        # X-Forwarded-* headers (and from nobody else's).
        if config.proxy_count:
            count = config.proxy_count
            self._entry = ProxyFix(
                self.cache, x_for=count, x_proto=count, x_host=count, x_port=count
            )
        # Metrics, health and the OpenAPI document, each request timed for the metrics.
        self.ops = OpsViews(self.server, self.auth, self.cache_api, config.metrics_token, self.disk)
        self.views.update(self.ops.routes())
        self._entry = LatencyRecorder(self.cache.engine.counters.count_all).wrap(self._entry)
        for spec in config.plugins:
            self.load_plugin(spec)

    def _build_site(self, config: Config) -> None:
        """Authentication, its pages, the content service, the front site and its routes."""
        self.auth = AuthService(
            config.data_dir,
            hasher=PasswordHasher(n=config.password_hash_cost),
            app_passwords=config.application_passwords,
            database_url=config.database_url,
            limits=config.store_limits(),
        )
        self.auth.install(self.server, self.hooks)
        self.views = AuthViews(self.auth, self.server, self.templates).routes()
        self.content = ContentService(
            self.auth.store, self.hooks, option_defaults=site_option_defaults(config)
        )
        self.content.install()
        self.content.comment_flood_interval = config.comment_flood_interval
        self.blocks = BlockTypeRegistry()
        for block_type in core_block_types():
            self.blocks.register(block_type)
        self.site = FrontSite(
            self.server,
            self.content,
            self.templates,
            users=self.auth.users,
            secret=self.auth.key,
            blocks=self.blocks,
            throttle=self.auth.throttle,
        )
        # The API index shows the front-page options (page_for_posts, page_on_front, ...).
        self.server.front_page = self.site.front_page_keys
        # Uploaded media: files under the uploads directory, served at /uploads/.
        self.uploads = UploadFiles(config.uploads_directory)
        self.media = MediaLibrary(self.content, self.uploads)
        self.site_routes = SiteRoutes(
            self.content,
            self.site.post_url,
            self.site.term_url,
            self.site.user_profile,
            self.media,
            self.site.blocks,
        )
        self.hooks.add_action("rest_api_init", self.site_routes.register)
        # Installed plugins (entry points ``sitecache.plugins``), active as the store says; a
        # deactivated one's block types go with its hooks and routes.
        self.plugins = PluginManager(
            self.content, self.hooks, self.server, host=self, footprints=[self.blocks]
        )
        self.hooks.add_action("rest_api_init", PluginsController(self.plugins).register)
        # Themes (built-in and entry points ``sitecache.themes``); the option ``stylesheet``
        # names the active one, and changing it purges the page cache like any site option.
        self.themes = ThemeManager(self.content, self.templates)
        self.hooks.add_action("rest_api_init", ThemesController(self.themes).register)
        # The pages link the active theme's style sheet, a file browsers keep for a year.
        self.stylesheet = SiteStylesheet(self.templates, self.server)
        self.templates.globals["stylesheet_url"] = self.stylesheet.url
        self.views[STYLESHEET_PATH] = self.stylesheet.respond

    def health_inputs(self) -> HealthInputs:
        """What the site-health tests look at: the data directory, the store, the secret key,
        the debug and application-password settings, and the page cache's storage probe and
        (in static mode) the web server's view of the static root."""
        config = self.config
        engine = self.cache.engine
        static_root = config.static_directory

        def static_check() -> list[str]:
            reason = unreadable_reason(static_root, DEFAULT_WEB_USER)
            return [] if reason is None else [reason]

        static_on = bool(engine.settings().static_files)
        key_path = config.data_dir / "secret.key"
        cache_dir = Path(engine.location) if engine.backend == "disk" else None
        return HealthInputs(
            data_dir=config.data_dir,
            store=self.auth.store,
            key=self.auth.key,
            key_path=key_path if key_path.exists() else None,
            debug=config.debug,
            app_passwords=self.auth.policy,
            home_url=config.site_url or "",
            cache_probe=engine.probe_storage,
            storage_name=engine.backend,
            static_check=static_check if static_on else None,
            cache_dir=cache_dir,
            uploads_dir=config.uploads_directory,
        )

    def _shared_namespace(self, config: Config) -> str:
        """The cache namespace kept in a store shared by several machines ("" otherwise)."""
        if config.cache_namespace or not self.auth.store.shared:
            return ""
        copy = config.data_dir / SHARED_IDENTITY_COPY
        return shared_identity(self.auth.store, config.site_url, copy)

    def _build_cache(self, config: Config) -> None:
        """The page cache in front of the site, its invalidation, its API and its timers."""
        # The page cache sits in front of everything (REST, login and admin paths bypass it);
        # behind trusted reverse proxies it sees the client's scheme and host as the app does.
        self.cache = PageCache(
            self._serve,
            engine=cache_engine(config, self._shared_namespace(config)),
            debug_log=config.data_dir / "logs" / "cache-debug.log",
        )
        # The cache's settings and plugin switches are configuration: kept in the site's
        # database, the cache storage holding a copy rebuilt when lost (cache.durable).
        self.cache.engine.use_durable(StoredValues(self.auth.store, DURABLE_PREFIX))
        # Content changes purge the pages that show them (the site's cache contract),
        # recorded in the change's own transaction and retried until the storage answers.
        self.invalidation = ContentInvalidation(
            self.cache.engine, self.site, Outbox(self.auth.store)
        )
        self.invalidation.install(self.content, self.auth.users)
        # The site-cache/v1 routes, preload, GC timers and companion plugins.
        #: the free space of the data directory's, the disk cache's and the static root's
        #: disks
        engine = self.cache.engine
        cache_dir = [Path(engine.location)] if engine.backend == "disk" else []
        self.disk = DiskSpace(
            [config.data_dir, *cache_dir, config.static_directory],
            low_bytes=config.disk_low_mb * 1024 * 1024,
            low_percent=config.disk_low_percent,
        )
        self.cache_api = CacheApi(
            self.cache,
            self.hooks,
            config.site_url,
            static_root=config.static_directory,
            disk=self.disk,
        )
        # A deactivated plugin's companion plugins of the cache are taken back too.
        self.plugins.footprints.append(self.cache_api.plugins)
        timers = self.cache_api.timers
        # Every process retries owed purges on each timer tick (a crash or an outage may
        # have left some behind).
        timers.every_tick.append(self.invalidation.drain)
        # ... and compares its copies of the cache's durable values with the site's database.
        timers.every_tick.append(self.cache.engine.sync_durable)
        # Scheduled posts are published by the timers' holder (about a second late at most),
        # never on a page read.
        timers.holder_jobs.append(self.content.publish_due_posts)
        # The stats' per-minute series is kept to its window by one process.
        timers.holder_jobs.append(self.cache.engine.counters.prune_series)
        # GC and scheduled preloads start with the first request this process serves.
        self.cache_api.autostart_timers = config.cache_timers
        # The content site fills the cache API's seams: what a post purges, whether it exists,
        # what preload visits.
        # Site health: the site's tests, with the cache's probe and static check handed in.
        self.health = HealthRoutes(self.health_inputs)
        self.hooks.add_action("rest_api_init", self.health.register)
        self.hooks.add_filter("cache_post_tags", self._cache_post_tags)
        self.hooks.add_filter("cache_post_exists", self._cache_post_exists)
        self.hooks.add_filter("cache_preload_urls", self._cache_preload_urls)
        # The cache dashboard: drives the cache through the site-cache/v1 routes only.
        dashboard = CacheDashboard(
            self.auth,
            self.server,
            self.templates,
            explanations(),
            debug_log=str(config.data_dir / "logs" / "cache-debug.log"),
        )
        self.views.update(dashboard.routes())

    # ------------------------------------------------------------------ cache seams
    def _cache_post_tags(self, tags: list[str], post_id: int) -> list[str]:
        """``POST /cache {"post_id": N}``: the post and its related pages (the site's tags)."""
        return list(dict.fromkeys([*tags, *self.site.related_tags(post_id)]))

    def _cache_post_exists(self, exists: bool | None, post_id: int) -> bool:
        """``POST /cache {"post_id": N}`` for a post the site does not have is a 404."""
        return self.content.get_post(post_id) is not None

    def _cache_preload_urls(self, urls: list[str], settings: Mapping[str, Any]) -> list[str]:
        """A preload's URLs: home, posts newest first up to ``preload_posts``, then term
        archives when ``preload_taxonomies`` (the site's list replaces the default home).

        ``settings`` (the filter's argument, the settings object as ``GET /settings`` shows
        it) is left to other filters: the engine's typed settings, read from the same store,
        are used here.
        """
        current = self.cache.engine.settings()
        return list(self.site.preload_urls(current.preload_posts, current.preload_taxonomies))

    # ------------------------------------------------------------------ plugins and notices
    def load_plugin(self, spec: str) -> None:
        """Load ``module:function`` or ``path/to/file.py:function`` and call it with this
        application (`sitecache.plugin_loading`).

        Raises:
            ConfigError: the plugin cannot be loaded, is not callable, or raised while
                activating (the message names the plugin and the exception).
        """
        target = load_plugin_target(spec)
        self.plugins.note_configured(spec, target)
        try:
            target(self)
        except ConfigError:
            raise
        except Exception as exc:  # whatever the plugin's own code raised
            raise ConfigError(
                f"plugin {spec!r} failed to activate: {type(exc).__name__}: {exc}"
            ) from exc

    def register_block_type(
        self,
        name: str,
        attributes: Mapping[str, Mapping[str, Any]],
        render_callback: RenderCallback,
        **fields: Any,
    ) -> BlockType:
        """Register a server-rendered block type (``register_block_type``): post content
        embedding ``<!-- wp:name {...} /-->`` shows ``render_callback``'s output, and
        ``site/v2/block-types`` and ``site/v2/block-renderer`` list and render it.

        ``attributes`` maps each attribute to its schema (checked by `sitecache.schema`);
        ``fields`` are `BlockType`'s descriptive fields (``title``, ``description``,
        ``category``, ``icon``, ``keywords``, ``supports``, ``textdomain``).

        Raises:
            BlockTypeError: a bad or taken name, a malformed attribute schema.
        """
        block_type = BlockType(name, attributes, render_callback, **fields)
        return self.blocks.register(block_type)

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

    def close(self) -> None:
        """Stop what this application started: the cache API's timer thread, the page cache
        (its counters flushed, its debug log and storage closed) and the site store's
        connections. For embedding code and tests that build applications and drop them; a
        server process simply exits."""
        self.ops.close()
        self.cache_api.close()
        self.cache.close()
        self.auth.store.close()

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
        if request.path == HEALTH_PATH:
            # Before anything reads the site's database: health answers in time in any state.
            return self.ops.health(request)
        query = query_params(request.environ)
        try:
            read_bounded_body(request)
        except RequestEntityTooLarge:
            prefix = self.server.settings.prefix
            if "rest_route" in query or extract_rest_route(request.path, query, prefix) is not None:
                return error_response(self.server, payload_too_large())
            raise
        try:
            malformed = self._malformed_utf8(request)
        except (RequestEntityTooLarge, ClientDisconnected):
            malformed = []  # a body over the limit or cut off: refused below, where it is read
        if malformed:
            return self._refuse_malformed_utf8(request, query, malformed)
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
            self.plugins.sync()  # one cheap read at most once a second: another worker's change
            return serve_request(self.server, request, route, query)
        if request.path.startswith(UPLOADS_PATH):
            return self.uploads.respond(request)
        self.themes.sync()  # one indexed read: render with the theme another worker switched to
        token = self.server.using_context(RequestContext.from_environ(request.environ))
        try:
            view = self.views.get(request.path)
            if view is not None:  # login, account, dashboard, health, style sheet: never stored
                self.plugins.sync()
                return view(request)
            if stylesheet_version(request.path) is not None:  # a versioned style sheet
                return self.stylesheet.respond(request)
            # One more read: a page that may be stored is rendered with the plugins of the
            # moment, never those of before the purge another worker's (de)activation made.
            self.plugins.sync(force=True)
            return self.site(request)
        finally:
            self.server.reset_context(token)

    @staticmethod
    def _malformed_utf8(request: Request) -> list[str]:
        """The fields of the query string, and of an urlencoded body, that are not UTF-8
        (`malformed_utf8_fields`)."""
        environ = request.environ
        names = malformed_utf8_fields(environ.get("QUERY_STRING") or "")
        media_type = _media_type(environ)
        if media_type == FORM_MEDIA_TYPE:
            body = request.get_data(cache=True)  # bounded above; kept for the form parser
            names += [name for name in malformed_utf8_fields(body) if name not in names]
        elif media_type == MULTIPART_MEDIA_TYPE and request.method == "POST":
            body = request.get_data(cache=True)
            fields = malformed_multipart_fields(body, str(environ.get("CONTENT_TYPE")))
            names += [name for name in fields if name not in names]
        return names

    def _refuse_malformed_utf8(
        self, request: Request, query: Mapping[str, Any], names: list[str]
    ) -> Response:
        """400 for a query or form that is not UTF-8: the REST error of an invalid parameter
        to a REST request (addressed by its path, or by ``rest_route`` in the query or form),
        else the site's 400 page. Nothing is parsed further, nothing stored."""
        prefix = self.server.settings.prefix
        rest = "rest_route" in query or extract_rest_route(request.path, query, prefix) is not None
        if not rest and request.method == "POST" and request.path in ("/", "/index.php"):
            rest = "rest_route" in request.form  # as the home URL's POST below reads it
        if rest:
            return error_response(self.server, malformed_utf8_error(names))
        return self.site.bad_request(
            f"The request is not valid UTF-8 text ({', '.join(names)}): nothing was done."
        )

    def __call__(
        self, environ: Mapping[str, Any], start_response: StartResponse
    ) -> Iterable[bytes]:
        return self._entry(environ, start_response)

    def _serve(self, environ: Any, start_response: StartResponse) -> Iterable[bytes]:
        if not isinstance(environ, dict):
            environ = dict(environ)
        # A REST GET without a body reads little of its request: werkzeug's is made lazily.
        request = (
            BodilessRequest(environ)
            if (environ.get("PATH_INFO") or "").startswith(self._rest_paths)
            and BodilessRequest.suits(environ)
            else Request(environ)
        )
        try:
            response = self.handle(request)
        except RequestEntityTooLarge:
            response = self._refused_body(413, "Request too large", _TOO_LARGE)
        except ClientDisconnected:
            response = self._refused_body(400, "Bad request", _CUT_OFF)
        except OutageError as outage:
            # The site's database down, locked or full: 503/507 with Retry-After, the
            # site's message page (REST requests answer their JSON error themselves).
            response = self.site.outage_page(outage)
        except Exception:
            # REST requests have their own boundary (a JSON 500); this one covers the pages.
            # SECURITY: %r escapes the path (a newline in it would forge a log line).
            logger.exception("Unhandled exception while serving %r", request.path)
            response = _plain_error(500, "There has been a critical error on this website.")
        _add_security_headers(response)
        return response(request.environ, start_response)

    def _refused_body(self, status: int, title: str, message: str) -> Response:
        """The site's page for a form whose body was refused (``status``), or the same words
        as plain text when even that page cannot be rendered (its database unreachable)."""
        try:
            return self.site.error_page(status, title, message)
        except Exception:
            logger.exception("the %d page could not be rendered", status)
            return _plain_error(status, message)


#: What a visitor reads when a form's body is over `MAX_BODY_BYTES` (it is never read).
_TOO_LARGE: Final = (
    f"The form sent more than {MAX_BODY_BYTES // (1024 * 1024)} MB: nothing was read or saved."
)
#: What a visitor reads when the body ended before its ``Content-Length``.
_CUT_OFF: Final = "The request body was not received in full: nothing was saved."


def _media_type(environ: Mapping[str, Any]) -> str:
    """The media type of the request's body, lower case (read from the environ: a lazily
    made `BodilessRequest` stays unmade)."""
    return str(environ.get("CONTENT_TYPE") or "").partition(";")[0].strip().lower()


def _add_security_headers(response: Response) -> None:
    """The defaults of `EVERY_RESPONSE_HEADERS` and, on HTML, `HTML_PAGE_HEADERS`."""
    if isinstance(response, RestHttpResponse):
        response.set_default_headers(EVERY_RESPONSE_HEADERS, HTML_PAGE_HEADERS)
        return
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
        ConfigError: a configuration value is invalid, the data directory cannot be written
            or a plugin cannot be loaded.
    """
    return App(load_config(config, **overrides))
