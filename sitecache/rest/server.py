"""`RestServer`: route registration, dispatch and the shaping of responses into data.

Mirrors ``WP_REST_Server``: `dispatch` matches a request to a handler, validates and sanitizes
its arguments, checks the permission callback and calls the handler; `response_to_data` adds
``_links`` and ``_embedded``. Serving an HTTP request (headers, CORS, JSONP, envelopes) lives in
`sitecache.rest.http`; the server's own post-dispatch filters in `sitecache.rest.post_dispatch`.
The order of work and the statuses are WordPress's.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar, Token
from datetime import UTC, timedelta, timezone, tzinfo
from typing import Any, Final
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sitecache.bounded_memo import BoundedMemo
from sitecache.domain_errors import DomainError, NumberOutOfRange
from sitecache.errors import RestError
from sitecache.hooks import Hooks
from sitecache.rest import index
from sitecache.rest.authentication import (
    Authentication,
    Authenticator,
    authorization_required_status,
)
from sitecache.rest.cors import send_cors_headers
from sitecache.rest.debug import DebugNotices
from sitecache.rest.embedding import response_to_data
from sitecache.rest.error_handlers import DomainErrorHandler, ErrorHandlers
from sitecache.rest.http_hosts import HostDefaults
from sitecache.rest.index_body import IndexBodies
from sitecache.rest.links import default_curies
from sitecache.rest.number_range import name_out_of_range_arguments
from sitecache.rest.params import parse_query_string
from sitecache.rest.post_dispatch import PostDispatchFilters
from sitecache.rest.request import RestRequest
from sitecache.rest.request_memo import (
    PERMISSIONS,
    check_permission,
    inherit_caller,
    shared_memo,
)
from sitecache.rest.response import RestResponse, ensure_response, error_to_response
from sitecache.rest.routes import Handler, Route, RouteRegistry
from sitecache.rest.urls import RequestContext, RestSettings, home_url, rest_url
from sitecache.schema import (
    get_date_with_gmt,
)

__all__ = [
    "RestServer",
    "check_permission",
    "inherit_caller",
    "internal_error",
    "return_true",
    "shared_memo",
]

logger = logging.getLogger("sitecache.rest")

_current_context: ContextVar[RequestContext | None] = ContextVar(
    "sitecache_rest_context", default=None
)
_current_request: ContextVar[RestRequest | None] = ContextVar(
    "sitecache_rest_request", default=None
)

FORBIDDEN_MESSAGE: Final = "Sorry, you are not allowed to do that."


def return_true(request: RestRequest) -> bool:
    """A permission callback for routes that are public on purpose."""
    return True


def callback_name(callback: Callable[..., Any]) -> str:
    """``module.qualname`` of a callback (a bound method's, a partial's function's), for
    messages that must name it."""
    target = getattr(callback, "func", callback)
    module = getattr(target, "__module__", None) or ""
    qualname = getattr(target, "__qualname__", None) or repr(target)
    return f"{module}.{qualname}" if module else str(qualname)


def internal_error() -> RestError:
    """The generic 500 answer to an unexpected exception (details go to the log only)."""
    return RestError(
        "internal_server_error",
        "There has been a critical error on this website.",
        {"status": 500},
    )


def forbidden(request: RestRequest) -> RestError:
    """``rest_forbidden``: 401 for an anonymous caller, 403 for a logged-in one."""
    return RestError(
        "rest_forbidden", FORBIDDEN_MESSAGE, {"status": authorization_required_status(request.user)}
    )


class RestServer(PostDispatchFilters):
    """The REST server of one application.

    Args:
        hooks: the application's hooks.
        settings: prefix, site URL, permalinks, debug and the other server settings.
        notices: where misuse and deprecation notices go.
    """

    def __init__(self, hooks: Hooks, settings: RestSettings, notices: DebugNotices) -> None:
        self.hooks = hooks
        self.settings = settings
        self.notices = notices
        self.registry = RouteRegistry(notices.doing_it_wrong, self._namespace_index)
        self._authenticators: list[tuple[int, int, Authenticator]] = []
        self.error_handlers = ErrorHandlers()
        """The REST error each domain exception answers with (`add_error_handler`)."""
        self.index_cache: BoundedMemo[tuple[Any, ...], dict[str, Any]] = BoundedMemo(
            index.CACHE_LIMIT
        )
        """Route descriptions of the API and namespace indexes (`index.cached_data_for_routes`)."""
        self.hosts = HostDefaults()
        """Host contexts and default headers per host (`sitecache.rest.http_hosts`)."""
        self.front_page: Callable[[], Mapping[str, Any]] = lambda: index.FRONT_PAGE_DEFAULTS
        """The index's front-page keys (``page_for_posts``, ``page_on_front``,
        ``show_on_front``) now; a site replaces it with its options' reader."""
        self._initialized = threading.Event()
        self._ready = False  # set after _initialized: read without a call on every request
        self._initializing = False
        self._init_lock = threading.RLock()
        self.init_error: RestError | None = None
        """The 500 every REST request answers when a ``rest_api_init`` callback raised."""
        self._register_core_routes()
        own = self._add_default_filters()
        self.index_bodies = IndexBodies(hooks, own)
        """Encoded bodies of the API index (`sitecache.rest.index_body`)."""
        self._own_filters = own
        self._own_only: tuple[int, frozenset[str]] = (-1, frozenset())
        """The hooks version and the filters running only the server's callbacks then."""

    # ------------------------------------------------------------------ setup
    def _register_core_routes(self) -> None:
        self.registry.add_route(
            "",
            "/",
            [
                {
                    "methods": {"GET": True},
                    "callback": lambda request: index.get_index(self, request),
                    "args": {"context": {"default": "view"}},
                    "show_in_index": True,
                    "accept_json": False,
                    "accept_raw": False,
                }
            ],
        )
        from sitecache.rest.batch import batch_route_handler

        self.registry.add_route("", "/batch/v1", [batch_route_handler(self)])

    def _namespace_index(self, request: RestRequest) -> RestResponse | RestError:
        return index.get_namespace_index(self, request)

    def _add_default_filters(self) -> dict[str, tuple[Callable[..., Any], ...]]:
        """Add the server's own filters; returns them by filter name, in the order they run."""
        own: dict[str, tuple[tuple[Callable[..., Any], int], ...]] = {
            "rest_pre_dispatch": ((self._options_filter, 10),),
            "rest_post_dispatch": (
                (self.filter_response_by_context, 9),
                (self.send_allow_header, 10),
                (self.filter_response_fields, 10),
            ),
            "rest_pre_serve_request": ((send_cors_headers, 10),),
        }
        for name, callbacks in own.items():
            for callback, priority in callbacks:
                self.hooks.add_filter(name, callback, priority)
        return {name: tuple(callback for callback, _ in entries) for name, entries in own.items()}

    def runs_only_own(self, name: str) -> bool:
        """Whether the filter ``name`` runs the server's own callbacks and nothing else (worked
        out once per change to the hooks): its callbacks are then called directly, in order,
        with the very arguments `Hooks.apply_filters` would pass them."""
        version, names = self._own_only
        if version != self.hooks.version:
            version = self.hooks.version
            names = frozenset(
                name for name, own in self._own_filters.items() if self.hooks.callbacks(name) == own
            )
            self._own_only = (version, names)
        return name in names

    def _options_filter(self, result: Any, server: RestServer, request: RestRequest) -> Any:
        return index.handle_options_request(result, self, request)

    def ensure_initialized(self) -> None:
        """Fire ``rest_api_init`` once for this server, before its first request.

        A callback that raises is logged once with its traceback and kept in `init_error`:
        every REST request of this process then answers that 500 (in WordPress a fatal error
        in a ``rest_api_init`` callback ends every request), rather than the first request
        failing and later ones answering without the failed callback's routes."""
        if self._ready or self._initialized.is_set():
            return
        with self._init_lock:
            # The lock is re-entrant: a callback that dispatches internally must not fire the
            # action again (it sees the routes registered so far).
            if self._initialized.is_set() or self._initializing:
                return
            self._initializing = True
            try:
                failed = self.hooks.do_action_reporting("rest_api_init", self)
                if failed is not None:
                    self.init_error = self._init_failure(*failed)
            finally:
                # Set even when a callback failed: later requests must not register twice.
                # Other threads waited on the lock until every route was in place.
                self._initializing = False
                self._initialized.set()
                self._ready = True

    def _init_failure(self, callback: Callable[..., Any], exc: Exception) -> RestError:
        """Log a ``rest_api_init`` callback's exception (once: the action fires once) and
        return the error every REST request answers with from now on."""
        name = callback_name(callback)
        logger.error(
            "The rest_api_init callback %s raised %s; every REST request answers 500 until "
            "the process restarts",
            name,
            type(exc).__name__,
            exc_info=exc,
        )
        return RestError(
            "rest_api_init_failed",
            f"The rest_api_init callback {name} failed; see the server log.",
            {"status": 500},
        )

    # ------------------------------------------------------------------ registration
    def register_rest_route(
        self,
        namespace: str,
        route: str,
        args: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
        override: bool = False,
        *,
        route_args: Mapping[str, Any] | None = None,
        schema: Callable[[], Mapping[str, Any]] | None = None,
        allow_batch: Any = None,
    ) -> bool:
        """Register a route: see `RouteRegistry.register_rest_route`."""
        return self.registry.register_rest_route(
            namespace,
            route,
            args,
            override,
            route_args=route_args,
            schema=schema,
            allow_batch=allow_batch,
            initialized=self.hooks.did_action("rest_api_init") > 0,
        )

    def get_routes(self, namespace: str | None = None) -> dict[str, Route]:
        """Every route (or those of one namespace), in registration order."""
        return self.registry.get_routes(namespace)

    def get_namespaces(self) -> list[str]:
        """The registered namespaces, in registration order."""
        return list(self.registry.namespaces)

    # ------------------------------------------------------------------ authentication
    def add_authenticator(self, authenticator: Authenticator, priority: int = 10) -> None:
        """Add a way of recognising callers; lower priorities are asked first."""
        self._authenticators.append((priority, len(self._authenticators), authenticator))
        self._authenticators.sort(key=lambda entry: (entry[0], entry[1]))

    def authenticate(self, request: RestRequest) -> Authentication | RestError | None:
        """Ask each authenticator in turn; the first answer other than ``None`` wins (a domain
        exception an authenticator raises answers as `error_handlers` says)."""
        for _, _, authenticator in self._authenticators:
            try:
                outcome = authenticator.authenticate(request)
            except DomainError as refused:
                return self.error_handlers.to_rest_error(refused)
            if outcome is not None:
                return outcome
        return None

    # ------------------------------------------------------------------ domain exceptions
    def add_error_handler(self, kind: type[DomainError], handler: DomainErrorHandler) -> None:
        """Answer the domain exception ``kind`` (and its subclasses without a handler of their
        own) with the `RestError` ``handler`` returns (falcon's ``add_error_handler``)."""
        self.error_handlers.add(kind, handler)

    # ------------------------------------------------------------------ URLs
    @property
    def request_context(self) -> RequestContext:
        """The HTTP request being served (host, scheme), or a context from the settings."""
        context = _current_context.get()
        if context is not None:
            return context
        if self.settings.site_url:
            parts = urlsplit(self.settings.site_url)
            return RequestContext(
                host_url=f"{parts.scheme}://{parts.netloc}",
                is_https=parts.scheme == "https",
                server_name=parts.hostname or "localhost",
            )
        return RequestContext()

    def using_context(self, context: RequestContext) -> Any:
        """Set the HTTP request context for URL building; returns a token for `reset_context`."""
        return _current_context.set(context)

    def reset_context(self, token: Any) -> None:
        """Undo `using_context`."""
        _current_context.reset(token)

    def site_timezone(self) -> tzinfo:
        """The site's timezone: ``timezone_string`` (an IANA name), else the fixed
        ``gmt_offset`` in hours, else UTC."""
        name = self.settings.timezone_string
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                self.notices.doing_it_wrong(
                    "site_timezone", f"Unknown timezone {name!r}; using UTC."
                )
                return UTC
        if self.settings.gmt_offset:
            return timezone(timedelta(hours=self.settings.gmt_offset))
        return UTC

    def get_date_with_gmt(self, date: object, is_utc: bool = False) -> tuple[str, str] | None:
        """`sitecache.schema.get_date_with_gmt` in the site's timezone."""
        return get_date_with_gmt(date, is_utc, timezone=self.site_timezone())

    def home_url(self) -> str:
        """The site's home URL (no trailing slash) as seen by the current request."""
        return home_url(self.settings, self.request_context)

    def rest_url(self, path: str = "/") -> str:
        """The URL of a REST path (``rest_url``), filtered by ``rest_url``."""
        url = rest_url(self.settings, self.request_context, path)
        return str(self.hooks.apply_filters("rest_url", url, path))

    def request_from_url(self, url: str) -> RestRequest | None:
        """A GET request for a REST URL of this site, or ``None`` (``from_url``)."""
        parts = urlsplit(url)
        query = parse_query_string(parts.query)
        api_root = self.rest_url("/")
        route: Any = None
        if self.settings.permalink_structure and url.startswith(api_root):
            route = urlsplit(url[len(api_root.rstrip("/")) :]).path
        elif query.get("rest_route"):
            route = query.pop("rest_route")
        if not route or not isinstance(route, str):
            return None
        request = RestRequest("GET", route)
        request.set_query_params(query)
        current = _current_request.get()
        if current is not None:
            inherit_caller(request, current)
        result = self.hooks.apply_filters("rest_request_from_url", request, url)
        return result if isinstance(result, RestRequest) else None

    # ------------------------------------------------------------------ dispatch
    def acting_for(self, request: RestRequest) -> _ActingFor:
        """Make ``request`` the caller of internal requests (embedding, target hints, batch)
        made inside the ``with`` block, so they run as its user."""
        return _ActingFor(request)

    def match_request_to_handler(self, request: RestRequest) -> tuple[Route, Handler] | RestError:
        """Find the handler; set the request's URL params, attributes and defaults."""
        matched = self.registry.match(request.get_method(), request.get_route())
        if isinstance(matched, RestError):
            return matched
        route, handler, params = matched
        if not callable(handler.get("callback")):
            return route, handler
        request.memo.pop(PERMISSIONS, None)  # verdicts depend on the URL parameters
        request.set_url_params(params)
        request.set_attributes(handler)
        defaults = {}
        for name, options in (handler.get("args") or {}).items():
            if options.__class__ is dict or isinstance(options, Mapping):
                default = options.get("default")
                if default is not None:
                    defaults[name] = default
        request.set_default_params(defaults)
        return route, handler

    def dispatch(self, request: RestRequest) -> RestResponse:
        """Answer ``request``: match, validate and sanitize, check permission, call the handler.

        Parameter errors (400) are found before the permission callback runs, so invalid input
        on a forbidden route is a 400. Unexpected exceptions become a generic 500.
        """
        token = _current_request.set(request) if _current_request.get() is None else None
        try:
            if self.runs_only_own("rest_pre_dispatch"):
                early = index.handle_options_request(None, self, request)
            else:
                early = self.hooks.apply_filters("rest_pre_dispatch", None, self, request)
            if early:
                result = ensure_response(early)
                return error_to_response(result) if isinstance(result, RestError) else result
            matched = self.match_request_to_handler(request)
            if isinstance(matched, RestError):
                return error_to_response(matched)
            route, handler = matched
            error: RestError | None = None
            if not callable(handler.get("callback")):
                error = RestError(
                    "rest_invalid_handler", "The handler for the route is invalid.", {"status": 500}
                )
            if error is None:
                error = _first_error(request.has_valid_params()) or _first_error(
                    request.sanitize_params()
                )
            return self.respond_to_request(request, route, handler, error)
        finally:
            if token is not None:
                _current_request.reset(token)

    def respond_to_request(
        self, request: RestRequest, route: Route, handler: Handler, error: RestError | None
    ) -> RestResponse:
        """Run the permission callback and the handler (``respond_to_request``)."""
        result: Any = self.hooks.apply_filters(
            "rest_request_before_callbacks", error, handler, request
        )
        try:
            if not isinstance(result, RestError):
                permission_callback = handler.get("permission_callback")
                if permission_callback:
                    permission = check_permission(permission_callback, request)
                    if isinstance(permission, RestError):
                        result = permission
                    elif permission is not True:
                        result = forbidden(request)
            if not isinstance(result, RestError):
                early = self.hooks.apply_filters(
                    "rest_dispatch_request", None, request, route.pattern, handler
                )
                result = early if early is not None else handler["callback"](request)
            result = self.hooks.apply_filters(
                "rest_request_after_callbacks", result, handler, request
            )
        except RestError as raised:
            result = raised
        except DomainError as refused:
            result = self.error_handlers.to_rest_error(refused)
            if isinstance(refused, NumberOutOfRange):
                result = name_out_of_range_arguments(request, result)
        except Exception:
            logger.exception(
                "Unhandled exception in the REST handler for %s %s",
                request.get_method(),
                route.pattern,
            )
            result = internal_error()
        response = ensure_response(result)
        if isinstance(response, RestError):
            response = error_to_response(response)
        response.set_matched_route(route.pattern)
        response.set_matched_handler(handler)
        return response

    # ------------------------------------------------------------------ links and embedding
    def curies(self) -> list[dict[str, Any]]:
        """The CURIEs links are compacted with (filter ``rest_response_link_curies``)."""
        curies = default_curies(self.settings.api_root_rel)
        result = self.hooks.apply_filters("rest_response_link_curies", curies)
        return result if isinstance(result, list) else curies

    def target_hints(self, link: Mapping[str, Any]) -> dict[str, list[str]] | None:
        """``{"allow": [methods]}`` for a ``self`` link the current user could act on."""
        href = link.get("href")
        if not isinstance(href, str):
            return None
        request = self.request_from_url(href)
        if request is None:
            return None
        matched = self.match_request_to_handler(request)
        if isinstance(matched, RestError) or not callable(matched[1].get("callback")):
            return None
        if request.has_valid_params() is not True or request.sanitize_params() is not True:
            return None
        allowed = self.allowed_methods(matched[0].pattern, request)
        return {"allow": allowed} if allowed else None

    def response_to_data(self, response: RestResponse, embed: bool | list[str]) -> Any:
        """The response data with ``_links`` and, when asked, ``_embedded``."""
        return response_to_data(self, response, embed)

    def envelope_response(self, response: RestResponse, embed: bool | list[str]) -> RestResponse:
        """A 200 response whose data is ``{body, status, headers}`` of ``response``."""
        response.remove_header("Content-Type")
        envelope = {
            "body": self.response_to_data(response, embed),
            "status": response.get_status(),
            "headers": dict(response.get_headers()),
        }
        envelope = self.hooks.apply_filters("rest_envelope_response", envelope, response)
        return RestResponse(envelope)


class _ActingFor:
    """The ``with`` block of `RestServer.acting_for` (a class: every REST request enters one)."""

    __slots__ = ("_request", "_token")

    def __init__(self, request: RestRequest) -> None:
        self._request = request
        self._token: Token[RestRequest | None] | None = None

    def __enter__(self) -> None:
        self._token = _current_request.set(self._request)

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _current_request.reset(self._token)
            self._token = None


def _first_error(result: bool | RestError) -> RestError | None:
    return result if isinstance(result, RestError) else None
