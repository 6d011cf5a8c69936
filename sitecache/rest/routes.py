"""The route registry: registration rules, handler normalization and request matching.

Mirrors ``register_rest_route`` and ``WP_REST_Server::register_route``/``get_routes``/
``match_request_to_handler``. A route is a regular
expression over the request route (named groups become URL parameters), matched whole and
case-insensitively; it holds handlers, each answering some methods.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from sitecache.bounded_memo import BoundedMemo
from sitecache.errors import RestError
from sitecache.rest.request import ARG_RESULTS, ARG_RESULTS_KEPT, COMPILED_ARGS
from sitecache.rest.route_index import RouteIndex
from sitecache.schema.compiled import CompiledSchema
from sitecache.schema.patterns import compile_pcre

__all__ = ["Handler", "Route", "RouteRegistry", "normalize_methods"]

Handler = dict[str, Any]
"""A normalized handler: ``methods`` (a dict METHOD → True), ``callback``,
``permission_callback``, ``args``, ``show_in_index``, ``accept_json``, ``accept_raw``,
``compiled_args`` (each argument definition's `CompiledSchema`) and any extra keys the plugin
gave (``allow_batch``)."""

Notify = Callable[[str, str], None]

_HANDLER_DEFAULTS: Final[Mapping[str, Any]] = {
    "methods": "GET",
    "callback": None,
    "args": {},
    "show_in_index": True,
    "accept_json": False,
    "accept_raw": False,
}
_GROUP = re.compile(r"\(\?P<(\w+?)>.*?\)")
HTTP_METHODS: Final = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
"""The methods a handler may list; any other name is a registration notice (a typo such as
``GTE`` would otherwise leave the route answering 404 to every request)."""
_READ_METHODS: Final = frozenset({"GET", "HEAD"})
_CANDIDATES_KEPT: Final = 4096


def normalize_methods(methods: Any) -> dict[str, bool]:
    """``"get, post"`` or ``["GET", "post"]`` → ``{"GET": True, "POST": True}``."""
    if isinstance(methods, str):
        names = methods.split(",")
    elif isinstance(methods, list | tuple | set | frozenset):
        names = [str(name) for name in methods]
    else:
        names = []
    return {name.strip().upper(): True for name in names if name.strip()}


@dataclass
class Route:
    """One route pattern with its handlers and options."""

    pattern: str
    namespace: str
    regex: re.Pattern[str] | None
    handlers: list[Handler] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)
    notices: list[tuple[str, str]] = field(default_factory=list)
    """Registration notices repeated on each response of this route (``(function, message)``)."""

    def match(self, path: str) -> dict[str, str] | None:
        """The named groups when ``path`` matches this route whole, else ``None``."""
        if self.regex is None:
            return None
        found = self.regex.search(path)
        if found is None:
            return None
        params = found.groupdict()
        if None in params.values():
            return {name: value for name, value in params.items() if value is not None}
        return params

    @property
    def has_variables(self) -> bool:
        """Whether the pattern has ``(?P<name>…)`` groups (no self link is built for it)."""
        return "{" in _GROUP.sub(r"{\1}", self.pattern)


class RouteRegistry:
    """Every registered route, in registration order, and the namespaces they belong to.

    Changes replace ``routes`` and ``namespaces`` with new dictionaries (copy on write) and
    then drop what was derived from them, and a derived cache is kept only when no change came
    while it was built: a plugin activated while other threads dispatch never makes them
    iterate a dictionary that changes, nor leaves them an index of the old routes.

    Args:
        notify: receives ``(function, message)`` for each misuse (``doing_it_wrong``).
        namespace_index: the callback of every namespace's index route.
    """

    def __init__(self, notify: Notify, namespace_index: Callable[[Any], Any] | None = None) -> None:
        self._notify = notify
        self.namespace_index = namespace_index
        self.routes: dict[str, Route] = {}
        self.namespaces: dict[str, dict[str, bool]] = {}
        self.version = 0
        """Counts changes to the routes (caches built from them compare it)."""
        self._index: RouteIndex | None = None
        self._namespace_lengths: tuple[int, ...] = ()
        self._candidates: BoundedMemo[str, list[Route]] = BoundedMemo(_CANDIDATES_KEPT)
        self._matches: BoundedMemo[tuple[str, str], tuple[Route, Handler, dict[str, str]]] = (
            BoundedMemo(_CANDIDATES_KEPT)
        )
        """What `match` found per (method, path), until the routes change (at most
        `_CANDIDATES_KEPT`)."""
        self._read = False
        """Whether the routes were read yet (until then, registering changes them in place: copying
        on every write would make registering n routes cost n squared)."""
        self._compiled: dict[int, CompiledSchema] = {}
        """Argument definitions compiled so far, by identity (a definition shared by several
        handlers, as route-level arguments are, is compiled once)."""

    # ------------------------------------------------------------------ registering
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
        initialized: bool = True,
    ) -> bool:
        """Register a route under ``namespace`` by WordPress's rules; ``False`` if refused.

        An empty namespace or route is refused; a route of ``/`` is the namespace root. A
        namespace with leading or trailing slashes, registration before ``rest_api_init``
        (``initialized`` false) and a handler without ``permission_callback`` are reported as
        misuse but registered.
        """
        clean_namespace = self._checked_namespace(namespace, route, initialized)
        if clean_namespace is None:
            return False
        display = f"{clean_namespace}/{route.strip('/')}"
        common_args = self._arg_map(route_args, display)
        groups: list[Mapping[str, Any]]
        if args is None:
            groups = [{}]
        elif isinstance(args, Mapping):
            if "args" in args and "callback" not in args and "methods" not in args:
                common_args = {**common_args, **self._arg_map(args["args"], display)}
                groups = [{key: value for key, value in args.items() if key != "args"}]
            else:
                groups = [args]
        else:
            groups = list(args)
        notices: list[tuple[str, str]] = []
        handlers = [self._handler(group, common_args, display, notices) for group in groups]
        options: dict[str, Any] = {}
        if schema is not None:
            options["schema"] = schema
            self._check_context_argument(schema, handlers, display)
        if allow_batch is not None:
            options["allow_batch"] = allow_batch
        # A full route is "/<namespace>/<route>" with slashes trimmed, so a route of "/" is the
        # namespace root "/<namespace>" and joins its index (GET stays the index's).
        full_route = f"/{clean_namespace}/{route.strip('/')}".rstrip("/")
        registered = self.add_route(clean_namespace, full_route, handlers, options, override)
        registered.notices.extend(notices)
        return True

    def _checked_namespace(self, namespace: str, route: str, initialized: bool) -> str | None:
        """The namespace without its slashes, or ``None`` for an empty namespace or route
        (refused); slashes and a registration outside ``rest_api_init`` are misuse notices."""
        if not namespace:
            self._notify(
                "register_rest_route",
                "Routes must be namespaced with plugin or theme name and version. Instead there "
                f"seems to be an empty namespace '{namespace}' for route '{route}'.",
            )
            return None
        if not route:
            self._notify(
                "register_rest_route",
                f"Route must be specified. Instead within the namespace '{namespace}', there "
                f"seems to be an empty route '{route}'.",
            )
            return None
        clean_namespace = namespace.strip("/")
        if clean_namespace != namespace:
            self._notify(
                "register_rest_route",
                f"Namespace must not start or end with a slash. Instead namespace '{namespace}' "
                f"for route '{route}' seems to contain a slash.",
            )
        if not initialized:
            self._notify(
                "register_rest_route",
                "REST API routes must be registered on the rest_api_init action. Instead route "
                f"'{route}' with namespace '{namespace}' was not registered on this action.",
            )
        return clean_namespace

    def _handler(
        self,
        group: Mapping[str, Any],
        common_args: Mapping[str, Any],
        display: str,
        notices: list[tuple[str, str]],
    ) -> Handler:
        """One handler with its defaults and merged arguments; a missing permission callback
        is a notice (also kept in ``notices``, repeated per response), as is an argument
        definition that is not a mapping."""
        handler: Handler = {**_HANDLER_DEFAULTS, **dict(group)}
        handler["args"] = {**common_args, **self._arg_map(handler.get("args"), display)}
        if "permission_callback" not in group:
            notice = (
                "register_rest_route",
                f"The REST API route definition for {display} is missing the required "
                "permission_callback argument. For REST API routes that are intended to be "
                "public, use sitecache.rest.return_true as the permission callback.",
            )
            self._notify(*notice)
            notices.append(notice)
        for definition in handler["args"].values():
            if not isinstance(definition, Mapping):
                self._notify(
                    "register_rest_route",
                    "REST API $args should be an array of arrays. Non-array value detected "
                    f"for {display}.",
                )
                break
        handler["methods"] = normalize_methods(handler["methods"])
        self._check_callables(group, handler, display)
        return handler

    def _check_callables(self, group: Mapping[str, Any], handler: Handler, display: str) -> None:
        """Notices for what would only fail at request time: a ``callback`` that is missing or
        not callable (answers 500 ``rest_invalid_handler``), a ``permission_callback`` that is
        given but not callable (a string such as ``"__return_true"`` is not a Python
        callable: every request would fail with 500), and methods that are not HTTP methods
        (never matched: 404). The handler is registered as given."""
        if not callable(handler.get("callback")):
            self._notify(
                "register_rest_route",
                f"The REST API route definition for {display} has no callable callback "
                f"(got {type(handler.get('callback')).__name__}); its requests will answer "
                "500 rest_invalid_handler.",
            )
        permission = group.get("permission_callback")
        if permission and not callable(permission):
            self._notify(
                "register_rest_route",
                f"The permission_callback of the REST API route definition for {display} is "
                f"not callable (got {type(permission).__name__} {permission!r}); use a "
                "function such as sitecache.rest.return_true.",
            )
        unknown = sorted(set(handler["methods"]) - HTTP_METHODS)
        if unknown or not handler["methods"]:
            self._notify(
                "register_rest_route",
                f"The REST API route definition for {display} lists methods that are not HTTP "
                f"methods: {', '.join(unknown) or repr(group.get('methods'))} (use GET, POST, "
                "PUT, PATCH, DELETE, HEAD or OPTIONS).",
            )

    def _check_context_argument(
        self, schema: Callable[[], Mapping[str, Any]], handlers: list[Handler], display: str
    ) -> None:
        """A notice when the route's schema has properties hidden outside some context (no
        ``view`` in their ``context``) while a handler answering GET declares no ``context``
        argument: with no ``context`` parameter nothing filters the answer, so those
        properties reach every caller allowed by the permission callback."""
        readers = [
            handler
            for handler in handlers
            if set(handler["methods"]) & _READ_METHODS and "context" not in handler["args"]
        ]
        if not readers or not callable(schema):
            return
        try:
            published = schema()
        except Exception:  # the schema is read again (and fails visibly) when served
            return
        properties = published.get("properties") if isinstance(published, Mapping) else None
        hidden = sorted(
            name
            for name, definition in (properties.items() if isinstance(properties, Mapping) else ())
            if isinstance(definition, Mapping)
            and isinstance(definition.get("context"), list | tuple)
            and "view" not in definition["context"]
        )
        if hidden:
            self._notify(
                "register_rest_route",
                f"The schema of {display} has properties outside the view context "
                f"({', '.join(hidden)}) but its GET handler declares no context argument, so "
                "nothing filters them: every caller gets them. Add a context argument (with "
                "a default of view) and refuse context=edit in the permission callback to "
                "callers without the capability.",
            )

    def _arg_map(self, args: Any, display: str) -> dict[str, Any]:
        """Argument definitions keyed by name; a list is read by index, as PHP merges it."""
        if not args:
            return {}
        if isinstance(args, Mapping):
            return dict(args)
        self._notify(
            "register_rest_route",
            f"REST API $args should be an array of arrays keyed by parameter name. A list was "
            f"given for {display}.",
        )
        items = list(args) if isinstance(args, list | tuple) else [args]
        return {str(index): definition for index, definition in enumerate(items)}

    def add_route(
        self,
        namespace: str,
        pattern: str,
        handlers: list[Handler],
        options: Mapping[str, Any] | None = None,
        override: bool = False,
    ) -> Route:
        """Store normalized handlers under ``pattern`` (``register_route``).

        The first route of a namespace also registers the namespace index ``/<namespace>``.
        Without ``override`` a second registration appends its handlers.
        """
        self._changed()
        for handler in handlers:
            handler[COMPILED_ARGS] = self._compiled_args(handler.get("args"))
            handler[ARG_RESULTS] = BoundedMemo(ARG_RESULTS_KEPT)
        if namespace and namespace not in self.namespaces:
            self.namespaces = self._writable(self.namespaces)
            self.namespaces[namespace] = {}
            self.add_route(namespace, f"/{namespace}", [self._namespace_index_handler(namespace)])
        if namespace:
            self.namespaces = self._writable(self.namespaces)
            self.namespaces[namespace] = self._writable(self.namespaces[namespace])
            self.namespaces[namespace][pattern] = True
        existing = self.routes.get(pattern)
        if existing is None or override:
            regex = compile_pcre(f"^{pattern}$", re.IGNORECASE | re.ASCII)
            if regex is None:
                self._notify(
                    "register_rest_route",
                    f"The route pattern {pattern} is not a valid regular expression.",
                )
            route = Route(pattern, namespace, regex, list(handlers), dict(options or {}))
            self.routes = self._writable(self.routes)
            self.routes[pattern] = route
            self._changed()
            return route
        # A new Route rather than a change in place: a reader holding the old one (another
        # thread's dispatch, a plugin's snapshot taken by `revert_routes`) keeps seeing it whole.
        extended = replace(
            existing,
            handlers=[*existing.handlers, *handlers],
            options={**existing.options, **(options or {})},
            notices=list(existing.notices),
        )
        self.routes = self._writable(self.routes)
        self.routes[pattern] = extended
        self._changed()
        return extended

    def remove_routes(self, patterns: Iterable[str]) -> None:
        """Forget the routes ``patterns`` (a deactivated plugin's); a namespace left without
        routes of its own loses its index route too."""
        self._changed()
        routes = dict(self.routes)
        namespaces = {name: dict(owned) for name, owned in self.namespaces.items()}
        for pattern in patterns:
            route = routes.pop(pattern, None)
            if route is None or not route.namespace:
                continue
            namespace = route.namespace
            owned = namespaces.get(namespace, {})
            owned.pop(pattern, None)
            if set(owned) <= {f"/{namespace}"}:
                namespaces.pop(namespace, None)
                routes.pop(f"/{namespace}", None)
        self.routes, self.namespaces = routes, namespaces
        self._changed()

    def revert_routes(self, before: Mapping[str, Route], after: Mapping[str, Route]) -> None:
        """Take back what changed between the snapshots ``before`` and ``after`` of `routes`
        (a deactivated plugin's registrations), leaving everything registered since alone.

        A route the plugin added goes; one it extended loses the plugin's handlers only; one
        it replaced (``override``) comes back as it was, unless something changed it since,
        in which case only the plugin's handlers go. A namespace left without routes of its
        own loses its index route too.
        """
        gone: list[str] = []
        routes = dict(self.routes)
        for pattern, changed in after.items():
            earlier = before.get(pattern)
            if changed is earlier:
                continue
            current = routes.get(pattern)
            if current is None:
                continue
            if current is changed:
                if earlier is None:
                    gone.append(pattern)
                else:
                    routes[pattern] = earlier
                continue
            kept = {id(handler) for handler in earlier.handlers} if earlier is not None else set()
            added = {id(handler) for handler in changed.handlers} - kept
            remaining = [handler for handler in current.handlers if id(handler) not in added]
            if remaining:
                routes[pattern] = replace(current, handlers=remaining)
            else:
                gone.append(pattern)
        self._changed()
        self.routes = routes
        self.remove_routes(gone)

    def _compiled_args(self, args: Any) -> dict[str, CompiledSchema]:
        """Each argument definition's `CompiledSchema` (compiled on first use, then kept), so the
        default argument callbacks never read a schema afresh per request."""
        compiled: dict[str, CompiledSchema] = {}
        for name, definition in args.items() if isinstance(args, Mapping) else ():
            if not isinstance(definition, Mapping):
                continue
            known = self._compiled.get(id(definition))
            if known is None or known.schema is not definition:
                known = self._compiled[id(definition)] = CompiledSchema(definition)
            compiled[name] = known
        return compiled

    def _writable(self, found: dict[Any, Any]) -> dict[Any, Any]:
        """``found`` itself while nobody has read the routes, else a copy to change."""
        return dict(found) if self._read else found

    def _changed(self) -> None:
        """Forget what was derived from the routes (call after changing them)."""
        self.version += 1
        self._index = None
        self._candidates = BoundedMemo(_CANDIDATES_KEPT)
        self._matches = BoundedMemo(_CANDIDATES_KEPT)

    def _route_index(self) -> RouteIndex:
        index = self._index
        if index is None:
            self._read = True
            version, routes, namespaces = self.version, self.routes, self.namespaces
            index = RouteIndex(list(routes.values()))
            lengths = tuple(sorted({len(name) for name in namespaces}))
            if version == self.version:  # no change meanwhile: keep it
                self._index, self._namespace_lengths = index, lengths
        return index

    def _namespace_index_handler(self, namespace: str) -> Handler:
        return {
            **_HANDLER_DEFAULTS,
            "methods": {"GET": True},
            "callback": self.namespace_index,
            "args": {"namespace": {"default": namespace}, "context": {"default": "view"}},
        }

    # ------------------------------------------------------------------ reading
    def get_routes(self, namespace: str | None = None) -> dict[str, Route]:
        """Routes in registration order, optionally only those of ``namespace``."""
        self._read = True
        if namespace is None:
            return dict(self.routes)
        return {key: route for key, route in self.routes.items() if route.namespace == namespace}

    def candidate_routes(self, path: str) -> list[Route]:
        """The routes to try for ``path``: those of every namespace the path starts with, or all.

        As in WordPress the namespace test is a plain prefix test on ``path`` without its leading
        slash plus a trailing slash (so ``test-ns`` and ``test-ns/v1`` both match
        ``/test-ns/v1/x``); routes outside any namespace are tried only when none matched.
        Routes whose literal prefix ``path`` does not start with are left out (they cannot
        match); the rest keep their registration order.
        """
        return list(self._candidate_routes(path))

    def _candidate_routes(self, path: str) -> list[Route]:
        """`candidate_routes`, kept per path until the routes change (at most
        `_CANDIDATES_KEPT` paths; the caller must not change the list)."""
        known = self._candidates.get(path)
        if known is not None:
            return known
        version = self.version
        routes = self._route_index().candidates(path)
        probe = path.lstrip("/") + "/"
        namespaces = self.namespaces
        wanted = [
            probe[:length] for length in self._namespace_lengths if probe[:length] in namespaces
        ]
        if wanted:
            routes = [route for route in routes if route.namespace in wanted]
        if version != self.version:
            return routes  # the routes changed meanwhile: answer, keep nothing
        return self._candidates.keep(path, routes)

    def match(self, method: str, path: str) -> tuple[Route, Handler, dict[str, str]] | RestError:
        """The route, handler and URL parameters for a request, or 404 ``rest_no_route``.

        Handlers are tried in registration order; a HEAD request is served by a handler that
        lists HEAD, or else by one that lists GET. A match is kept per (method, path) until the
        routes change (a pure function of the routes; the URL parameters are a fresh copy).
        """
        known = self._matches.get((method, path))
        if known is not None:
            return known[0], known[1], dict(known[2])
        version = self.version
        found = self._match(method, path)
        if isinstance(found, RestError) or version != self.version:
            return found  # not kept: an error is built anew, a change meanwhile keeps nothing
        self._matches.keep((method, path), (found[0], found[1], dict(found[2])))
        return found

    def _match(self, method: str, path: str) -> tuple[Route, Handler, dict[str, str]] | RestError:
        """`match`, worked out from the routes."""
        for route in self._candidate_routes(path):
            params = route.match(path)
            if params is None:
                continue
            for handler in route.handlers:
                methods = handler["methods"]
                checked = method
                if method == "HEAD" and not methods.get("HEAD"):
                    checked = "GET"
                if methods.get(checked):
                    return route, handler, params
        return RestError(
            "rest_no_route",
            "No route was found matching the URL and request method.",
            {"status": 404},
        )

    def match_route(self, path: str) -> tuple[Route, dict[str, str]] | None:
        """The first route (in registration order, no namespace pre-selection) matching ``path``."""
        for route in self._route_index().candidates(path):
            params = route.match(path)
            if params is not None:
                return route, params
        return None
