"""The ten ``site-cache/v1`` routes, registered on ``rest_api_init``.

Every handler declares an empty ``args`` list and validates its JSON body with
`sitecache.schema` against the route's published schema (`sitecache.cache.api.schemas`). Every
permission callback is the one site-administrator check (``manage_options``): 401
``rest_forbidden`` when not logged in, 403 when logged in without it.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from sitecache.auth import require_site_admin
from sitecache.cache.api.preload import Answer, iso_time
from sitecache.cache.api.purge_request import PURGE_SCOPES, purge_request
from sitecache.cache.api.schemas import (
    CACHE_SCHEMA,
    PLUGINS_SCHEMA,
    PRELOAD_SCHEMA,
    SETTINGS_ROUTE_SCHEMA,
    STATS_SCHEMA,
    STATUS_SCHEMA,
    TEST_SCHEMA,
    invalid_params,
    validate_body,
)
from sitecache.cache.outcome import explanations
from sitecache.cache.storage import EntryStatus, StorageError
from sitecache.domain_errors import InvalidFields, InvalidURL
from sitecache.errors import RestError
from sitecache.rest.json_body import decode_json_body
from sitecache.rest.pagination import check_page_number, page_count, paginated_response

if TYPE_CHECKING:
    from sitecache.rest.request import RestRequest
    from sitecache.rest.server import RestServer

if TYPE_CHECKING:
    from sitecache.cache.api import CacheApi

__all__ = ["NAMESPACE", "PURGE_SCOPES", "CacheRoutes"]

NAMESPACE: Final = "site-cache/v1"
TEST_AGENT: Final = "sitecache-cache-test"
#: The largest 64-bit integer, and how many digits it has: a page or per_page past it is it.
_INT64_MAX: Final = 2**63 - 1
_INT64_DIGITS: Final = len(str(_INT64_MAX))
#: C0 controls and DEL, which no stored URL holds.
_CONTROL: Final = re.compile(r"[\x00-\x1f\x7f]")

#: Why a page was not cached, by the ``detail`` of its ``Cache-Status`` (the cache test): each
#: guard's own explanation and the outcome reasons' (`sitecache.cache.outcome.explanations`).
REASONS: Final[dict[str, str]] = explanations()


class CacheRoutes:
    """The handlers, bound to one `CacheApi`."""

    def __init__(self, api: CacheApi) -> None:
        self.api = api
        self.engine = api.cache.engine
        self.server: RestServer | None = None

    # ------------------------------------------------------------------ registration
    def register(self, server: RestServer) -> None:
        """The ``rest_api_init`` callback: register the ten routes."""
        self.server = server

        def route(
            path: str, schema: Mapping[str, Any], *handlers: tuple[str, Callable[..., Any]]
        ) -> None:
            server.register_rest_route(
                NAMESPACE,
                path,
                [
                    {
                        "methods": methods,
                        "callback": _answers_storage_errors(callback),
                        "permission_callback": require_site_admin,
                        "args": {},
                    }
                    for methods, callback in handlers
                ],
                schema=lambda: schema,
            )

        route(
            "/settings",
            SETTINGS_ROUTE_SCHEMA,
            ("GET", self.get_settings),
            ("POST", self.update_settings),
        )
        route("/status", STATUS_SCHEMA, ("GET", self.get_status))
        route("/stats", STATS_SCHEMA, ("GET", self.get_stats))
        route("/cache", CACHE_SCHEMA, ("GET", self.list_cache), ("POST", self.purge))
        route("/preload", PRELOAD_SCHEMA, ("POST", self.preload))
        route("/cache/test", TEST_SCHEMA, ("POST", self.test_cache))
        route("/plugins", PLUGINS_SCHEMA, ("GET", self.get_plugins), ("POST", self.update_plugins))

    # ------------------------------------------------------------------ settings
    def get_settings(self, request: RestRequest) -> Any:
        """GET /settings: every setting."""
        return self.engine.settings_values()

    def update_settings(self, request: RestRequest) -> Any:
        """POST /settings: a partial update (all or nothing), or ``{"reset": true}``."""
        body = _json_body(request)
        if "reset" in body:
            if body != {"reset": True}:
                raise invalid_params(
                    {
                        "reset": {
                            "code": "rest_invalid_param",
                            "message": 'reset must be true and sent alone: {"reset": true}.',
                        }
                    }
                )
            return self.engine.reset_settings()
        return self.engine.update_settings(body)

    # ------------------------------------------------------------------ status and stats
    def get_status(self, request: RestRequest) -> Any:
        """GET /status."""
        return self.api.status()

    def get_stats(self, request: RestRequest) -> Any:
        """GET /stats."""
        return self.engine.stats()

    # ------------------------------------------------------------------ the cache
    def list_cache(self, request: RestRequest) -> Any:
        """GET /cache: a page of entries with ``X-Site-Total``, ``X-Site-TotalPages`` and
        ``Link`` prev/next (the query kept), as the other collections."""
        page, per_page, search, status = parse_list_query(request.get_query_params())
        rows, total = self.engine.list_entries(page, per_page, search=search, status=status)
        if total > 0:  # as WordPress: no entries is an empty list, whatever the page
            check_page_number(page, page_count(total, per_page))
        if self.server is None:  # only a registered route calls this
            raise RuntimeError("the cache routes are not registered yet")
        return paginated_response(self.server, request, rows, total, per_page, page)

    def purge(self, request: RestRequest) -> Any:
        """POST /cache: purge exactly one scope (``{}`` is this site), through
        `purge_request`, as ``sitecache cache flush`` does."""
        body = _json_body(request)
        return purge_request(self.api, body).as_json()

    # ------------------------------------------------------------------ preload and test
    def preload(self, request: RestRequest) -> Any:
        """POST /preload: ``{"enable": true}`` starts (no-op while running), false cancels."""
        body = _json_body(request)
        clean = _validated(body, PRELOAD_SCHEMA, required=("enable",))
        preloader = self.api.preloader
        if clean["enable"]:
            return preloader.start(self.api.base_url(request.environ))
        return preloader.cancel()

    def test_cache(self, request: RestRequest) -> Any:
        """POST /cache/test: prime, then two fetches that must hit the same stored entry."""
        body = _json_body(request)
        clean = _validated(body, TEST_SCHEMA)
        try:
            return self.api.test_page(
                str(clean.get("url", "/")), self.api.base_url(request.environ)
            )
        except InvalidURL as refused:
            raise url_error(refused, "url", "url") from None

    # ------------------------------------------------------------------ plugins
    def get_plugins(self, request: RestRequest) -> Any:
        """GET /plugins."""
        return self.api.plugins.listing()

    def update_plugins(self, request: RestRequest) -> Any:
        """POST /plugins: ``{"<key>": bool}``, validated as a whole."""
        body = _json_body(request)
        return self.api.plugins.update(body)


# ---------------------------------------------------------------------- helpers
def _json_body(request: RestRequest) -> dict[str, Any]:
    """The JSON object the client sent (``{}`` for an empty body).

    Raises:
        RestError: 400 ``rest_invalid_param`` on ``body`` when it is not a JSON object.
    """
    raw = request.get_body().strip()
    if not raw:
        return {}
    if not request.is_json_content_type():
        raise _one_error("body", "Send a JSON object with Content-Type: application/json.")
    # The same decoder as the server's (an over-long integer is a float, as in PHP), which
    # answers a malformed JSON body before any handler runs; this is a guard.
    decoded, malformed = decode_json_body(raw)
    if malformed is not None:
        raise _one_error("body", "The body is not valid JSON.")
    if not isinstance(decoded, dict):
        raise _one_error("body", "The body must be a JSON object.")
    return decoded


def _validated(
    body: dict[str, Any], schema: Mapping[str, Any], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """`validate_body` for a handler: the clean fields.

    Raises:
        RestError: the schema's refusal (400 ``rest_invalid_param``).
    """
    clean = validate_body(body, schema, required)
    if isinstance(clean, RestError):
        raise clean
    return clean


def _one_error(field: str, message: str) -> RestError:
    return invalid_params({field: {"code": "rest_invalid_param", "message": message}})


def _answers_storage_errors(callback: Callable[[RestRequest], Any]) -> Callable[..., Any]:
    """``callback`` answering a storage failure as 503 ``site_cache_storage_error`` (every
    route alike), never as a 500."""

    def guarded(request: RestRequest) -> Any:
        try:
            return callback(request)
        except StorageError as exc:
            return _storage_error(exc)

    guarded.__doc__ = callback.__doc__
    return guarded


def url_error(error: InvalidURL, field: str, name: str) -> RestError:
    """The engine's refusal of one URL as the routes' one 400, under ``field`` (the body
    key sent: ``url`` or ``urls``), its message naming ``name`` (``url``, ``urls[2]``)."""
    return invalid_params({field: {"code": error.code, "message": f"{name} {error.reason}."}})


def _storage_error(exc: StorageError) -> RestError:
    return RestError(
        "site_cache_storage_error", f"The cache storage failed: {exc}", {"status": 503}
    )


def parse_list_query(query: Mapping[str, Any]) -> tuple[int, int, str, EntryStatus | None]:
    """``(page, per_page, search, status)`` of ``GET /cache``'s query (the command line's
    ``cache list`` options too).

    Raises:
        InvalidFields: one 400 ``rest_invalid_param`` naming every bad parameter.
    """
    details: dict[str, dict[str, Any]] = {}

    def integer(name: str, default: int, low: int, high: int | None) -> int:
        raw = query.get(name)
        if raw is None:
            return default
        text = str(raw).strip()
        if not (text.isascii() and text.isdigit()):
            details[name] = {
                "code": "rest_invalid_type",
                "message": f"{name} is not of type integer.",
            }
            return default
        # Any number of digits is an integer; past 64 bits it is the largest one, as PHP
        # casts it (a page that far is past the last one, never a type error).
        digits = text.lstrip("0") or "0"
        value = int(digits) if len(digits) <= _INT64_DIGITS else _INT64_MAX
        value = min(value, _INT64_MAX)
        if value < low or (high is not None and value > high):
            limit = f"between {low} and {high}" if high is not None else f"at least {low}"
            details[name] = {"code": "rest_invalid_param", "message": f"{name} must be {limit}."}
        return value

    page = integer("page", 1, 1, None)
    per_page = integer("per_page", 20, 1, 100)
    search = query.get("search", "")
    if not isinstance(search, str) or len(search) > 200:
        details["search"] = {
            "code": "rest_invalid_param",
            "message": "search must be a string of at most 200 characters.",
        }
        search = ""
    elif _CONTROL.search(search):
        # No stored URL holds one (they are percent-encoded): a bad query, not a search.
        details["search"] = {
            "code": "rest_invalid_param",
            "message": "search must not contain control characters.",
        }
        search = ""
    status = query.get("status")
    if status is not None and status not in ("fresh", "expired"):
        details["status"] = {
            "code": "rest_invalid_param",
            "message": "status is not one of fresh, expired.",
        }
    if details:
        raise InvalidFields.from_fields(details)
    return page, per_page, search.strip(), status


def explain(attempts: Mapping[str, Answer], enabled: bool) -> str | None:
    """Why the cache test failed, from the real cause; ``None`` when it passed."""
    prime, first, second = attempts["prime"], attempts["first"], attempts["second"]
    if not enabled:
        return REASONS["disabled"]
    for answer in (prime, first, second):
        detail = _detail(answer.cache_status)
        if detail and detail != "stale":
            text = REASONS.get(detail, f"The cache did not store the page ({detail}).")
            if detail == "status":
                text = f"The page answered HTTP {answer.status}. {text}"
            return text
        if answer.status != 200:
            return f"The page answered HTTP {answer.status}; only 200 pages are cached."
    for name, answer in (("first", first), ("second", second)):
        if "; hit" not in answer.cache_status:
            return (
                f"The {name} fetch was not a hit ({answer.cache_status or 'no Cache-Status'}): "
                "the stored page was not found again (another process purged it, or the "
                "storage does not keep what it is given)."
            )
    if first.header("ETag") != second.header("ETag"):
        return "The two hits came from different stored copies (the page changed in between)."
    return None


def _detail(cache_status: str) -> str:
    for part in cache_status.split(";"):
        name, _, value = part.strip().partition("=")
        if name == "detail":
            return value
    return ""


def attempt_json(answer: Answer, now: float) -> dict[str, Any]:
    """One attempt of ``/cache/test``: ``{status, http_status, cache, generated}``."""
    cache_status = answer.cache_status
    cached = answer.status == 200 and ("; hit" in cache_status or "stored" in cache_status)
    age = answer.header("Age")
    generated = now - int(age) if age.isascii() and age.isdigit() else now
    return {
        "status": cached,
        "http_status": answer.status,
        "cache": cache_status,
        "generated": iso_time(generated),
    }


def base_from_environ(environ: Mapping[str, Any]) -> str:
    """``scheme://host`` of the request (used only when site_url is unset)."""
    scheme = str(environ.get("wsgi.url_scheme", "http"))
    host = str(environ.get("HTTP_HOST") or environ.get("SERVER_NAME") or "localhost")
    return f"{scheme}://{host}"


def zlib_available() -> bool:
    """Whether gzip copies can be made (zlib works)."""
    try:
        return zlib.decompress(zlib.compress(b"ok")) == b"ok"
    except zlib.error:
        return False


def site_base(site_url: str | None) -> str | None:
    """``scheme://host`` of ``site_url``."""
    if not site_url:
        return None
    parts = urlsplit(site_url)
    return f"{parts.scheme}://{parts.netloc}"
