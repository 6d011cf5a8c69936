"""Where the REST API lives: its settings, its URLs and how a request path maps to a route.

The three addresses of a route: ``/{prefix}/<route>``, ``/index.php/{prefix}/<route>`` and
``/index.php?rest_route=/<route>`` (also ``/?rest_route=``) all reach the same route; an empty
route is the index ``/`` and trailing slashes are removed. `rest_url` builds URLs in the form the
permalink setting asks for, forcing https as WordPress's ``get_rest_url`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from sitecache.errors import RestError

__all__ = [
    "PERMALINK_PATTERN",
    "RequestContext",
    "RestSettings",
    "extract_rest_route",
    "rest_url",
]

#: What a ``permalink_structure`` may hold: ``""``, or the characters of a URL path (RFC 3986's
#: unreserved and sub-delimiters, ``:``, ``@`` and ``/``) with ``%`` around the tags. Every
#: post's link is made from it: no control character, space, quote or non-ASCII letter.
PERMALINK_PATTERN: Final = r"^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$"

DEFAULT_API_ROOT_REL: Final = "https://api.w.org/"
DEFAULT_HELP_URL: Final = "https://developer.wordpress.org/rest-api/"


@dataclass(frozen=True, slots=True)
class RestSettings:
    """The REST server's configuration.

    Attributes:
        prefix: the URL prefix (``site-json``).
        site_url: the site's home URL; ``None`` derives it from each request's host.
        permalink_structure: ``""`` means plain permalinks (URLs use ``?rest_route=``); a
            structure starting with ``/index.php`` puts ``index.php/`` before the prefix.
        debug: send the ``X-Site-*`` debug headers.
        api_root_rel: the link relation of the API root (also the ``wp`` CURIE's base).
        force_ssl_admin: the admin area is served over https only.
        help_url: the ``help`` link of the index.
        site_name, site_description, timezone_string, gmt_offset: the index's site data.
        max_batch_size: most requests one batch may hold.
        jsonp_enabled: whether ``_jsonp`` is honoured.
    """

    prefix: str = "site-json"
    site_url: str | None = None
    permalink_structure: str = "/%postname%/"
    debug: bool = False
    api_root_rel: str = DEFAULT_API_ROOT_REL
    force_ssl_admin: bool = False
    help_url: str = DEFAULT_HELP_URL
    site_name: str = "sitecache"
    site_description: str = ""
    timezone_string: str = ""
    gmt_offset: float = 0.0
    max_batch_size: int = 25
    jsonp_enabled: bool = True


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What URL building needs to know of the current HTTP request."""

    host_url: str = "http://localhost"
    """``scheme://host[:port]`` as the client reached us."""
    is_https: bool = False
    server_name: str = "localhost"
    is_admin: bool = False

    @classmethod
    def from_environ(
        cls, environ: Mapping[str, Any], admin_prefix: str = "/site-admin"
    ) -> RequestContext:
        """The context of a WSGI request."""
        scheme = str(environ.get("wsgi.url_scheme", "http"))
        host = str(environ.get("HTTP_HOST") or "")
        server_name = str(environ.get("SERVER_NAME") or "localhost")
        if not host:
            port = str(environ.get("SERVER_PORT") or "")
            default = "443" if scheme == "https" else "80"
            host = server_name if port in ("", default) else f"{server_name}:{port}"
        path = str(environ.get("PATH_INFO") or "")
        return cls(
            host_url=f"{scheme}://{host}",
            is_https=scheme == "https",
            server_name=host.rsplit(":", 1)[0] if not host.endswith("]") else host,
            is_admin=path == admin_prefix or path.startswith(admin_prefix + "/"),
        )


def home_url(settings: RestSettings, context: RequestContext) -> str:
    """The site's home URL without a trailing slash, in the scheme of the request."""
    base = (settings.site_url or context.host_url).rstrip("/")
    if context.is_https and base.startswith("http://"):
        base = "https://" + base[len("http://") :]
    return base


def _with_scheme(url: str, scheme: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((scheme, *parts[1:]))


def rest_url(settings: RestSettings, context: RequestContext, path: str = "/") -> str:
    """The URL of REST ``path`` (``get_rest_url``): ``/`` is the index, a leading slash is added.

    Pretty permalinks give ``{home}/{prefix}{path}``, index permalinks
    ``{home}/index.php/{prefix}{path}`` and plain permalinks ``{home}/index.php?rest_route={path}``
    (the path verbatim). The scheme is https when the request is over TLS and its host is the
    site's host, and in the admin area when it is served over TLS only.
    """
    path = "/" + (path or "/").lstrip("/")
    home = home_url(settings, context)
    structure = settings.permalink_structure
    if not structure:
        url = f"{home}/index.php?rest_route={path}"
    elif structure.startswith("/index.php"):
        url = f"{home}/index.php/{settings.prefix}{path}"
    else:
        url = f"{home}/{settings.prefix}{path}"
    if context.is_https and urlsplit(home).hostname == context.server_name:
        url = _with_scheme(url, "https")
    if context.is_admin and settings.force_ssl_admin:
        url = _with_scheme(url, "https")
    return url


@lru_cache(maxsize=16)
def _bases(prefix: str) -> tuple[str, str]:
    """The two paths REST routes live under for ``prefix`` (kept: the prefix is fixed)."""
    return f"/{prefix}", f"/index.php/{prefix}"


def extract_rest_route(
    path: str, query: Mapping[str, Any], prefix: str, form: Mapping[str, Any] | None = None
) -> str | RestError | None:
    """The REST route a request addresses, ``None`` when it is not a REST request.

    As WordPress's ``rest_route`` query variable: a form-body value (``form``, POST only) wins,
    then the query string, then the path; both given and different is a 400. It is honoured on
    ``/``, ``/index.php`` and the prefix paths. A ``rest_route`` that is not a string gives 400
    ``rest_path_invalid_type``.
    """
    rewritten: str | None = None
    for base in _bases(prefix):
        if path == base:
            rewritten = "/"
            break
        if path.startswith(base + "/"):
            rewritten = path[len(base) :]
            break
    route: Any = rewritten
    if rewritten is not None or path in ("/", "/index.php"):
        queried = query.get("rest_route")
        posted = form.get("rest_route") if form is not None else None
        if posted is not None and queried is not None and posted != queried:
            return RestError(
                "rest_route_mismatch", "A variable mismatch has been detected.", {"status": 400}
            )
        for candidate in (posted, queried):
            if candidate is not None and candidate != "":
                route = candidate
                break
    if route is None:
        return None
    if not isinstance(route, str):
        return RestError(
            "rest_path_invalid_type", "The REST route parameter must be a string.", {"status": 400}
        )
    return route.rstrip("/\\") or "/"
