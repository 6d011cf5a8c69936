"""`RestResponse`: data, status, headers and links of one REST response.

Mirrors ``WP_REST_Response``: links are collected per relation with ``add_link`` and serialized
under ``_links`` (attributes first, ``href`` last), with relations under the API-root URI
compacted through CURIEs (``wp:term``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sitecache.errors import RestError

__all__ = ["RestResponse", "ensure_response", "error_to_response", "find_header"]


class RestResponse:
    """A REST response.

    Args:
        data: the response data (any JSON value; ``None`` gives an empty body).
        status: the HTTP status.
        headers: response headers; they replace the server's defaults of the same name.
    """

    def __init__(
        self, data: Any = None, status: int = 200, headers: Mapping[str, str] | None = None
    ) -> None:
        self.data = data
        self.status = int(status)
        self.headers: dict[str, str] = dict(headers or {})
        self.links: dict[str, list[dict[str, Any]]] = {}
        self.matched_route: str = ""
        self.matched_handler: Mapping[str, Any] | None = None

    def copy_without_headers(self) -> RestResponse:
        """A new response with this one's data, status, links and matched route and handler,
        and no headers of its own."""
        copy = RestResponse.__new__(RestResponse)  # NOTE: what __init__ sets, without its work
        copy.data = self.get_data()
        copy.status = int(self.get_status())
        copy.headers = {}
        copy.links = self.links
        copy.matched_route = self.get_matched_route()
        copy.matched_handler = self.get_matched_handler()
        return copy

    # ------------------------------------------------------------------ WordPress accessors
    def get_data(self) -> Any:
        """The response data."""
        return self.data

    def set_data(self, data: Any) -> None:
        """Replace the response data."""
        self.data = data

    def get_status(self) -> int:
        """The HTTP status."""
        return self.status

    def set_status(self, status: int) -> None:
        """Set the HTTP status."""
        self.status = int(status)

    def get_headers(self) -> dict[str, str]:
        """The response's own headers."""
        return self.headers

    def header(self, name: str, value: str, replace: bool = True) -> None:
        """Set a header; with ``replace=False`` the value is appended after a comma."""
        existing = self._find_header(name)
        if existing is not None and not replace:
            self.headers[existing] = f"{self.headers[existing]}, {value}"
            return
        if existing is not None:
            del self.headers[existing]
        self.headers[name] = value

    def remove_header(self, name: str) -> None:
        """Remove a header (any case)."""
        existing = self._find_header(name)
        if existing is not None:
            del self.headers[existing]

    def _find_header(self, name: str) -> str | None:
        return find_header(self.headers, name)

    def is_error(self) -> bool:
        """Whether the status is 400 or above."""
        return self.status >= 400

    def as_error(self) -> RestError | None:
        """The error this response carries (``{code, message, data}`` body), if it is one."""
        if not self.is_error() or not isinstance(self.data, Mapping):
            return None
        code = self.data.get("code")
        message = self.data.get("message")
        if not isinstance(code, str) or not isinstance(message, str):
            return None
        return RestError(code, message, self.data.get("data"))

    # ------------------------------------------------------------------ links
    def add_link(self, rel: str, href: str, attributes: Mapping[str, Any] | None = None) -> None:
        """Add a link under relation ``rel`` (an ``href`` inside ``attributes`` is ignored)."""
        kept = {key: value for key, value in (attributes or {}).items() if key != "href"}
        self.links.setdefault(rel, []).append({"href": href, "attributes": kept})

    def add_links(self, links: Mapping[str, Any]) -> None:
        """Add several links: relation → one ``{href, ...}`` mapping or a list of them."""
        for rel, value in links.items():
            entries = value if isinstance(value, list) else [value]
            for entry in entries:
                attributes = {key: item for key, item in entry.items() if key != "href"}
                self.add_link(rel, entry["href"], attributes)

    def remove_link(self, rel: str, href: str | None = None) -> None:
        """Remove every link of ``rel``, or only those with this ``href``."""
        if href is None:
            self.links.pop(rel, None)
            return
        kept = [link for link in self.links.get(rel, []) if link["href"] != href]
        if kept:
            self.links[rel] = kept
        else:
            self.links.pop(rel, None)

    def get_links(self) -> dict[str, list[dict[str, Any]]]:
        """The links, relation → list of ``{href, attributes}``."""
        return self.links

    # ------------------------------------------------------------------ matching
    def set_matched_route(self, route: str) -> None:
        """Record the route pattern this response answers."""
        self.matched_route = route

    def get_matched_route(self) -> str:
        """The route pattern this response answers ("" when none matched)."""
        return self.matched_route

    def set_matched_handler(self, handler: Mapping[str, Any] | None) -> None:
        """Record the handler that produced this response."""
        self.matched_handler = handler

    def get_matched_handler(self) -> Mapping[str, Any] | None:
        """The handler that produced this response, if any."""
        return self.matched_handler

    def __repr__(self) -> str:
        return f"<RestResponse {self.status}>"


def find_header(headers: Mapping[str, Any], name: str) -> str | None:
    """The first name in ``headers`` that is ``name`` in any case, or ``None``."""
    lowered = name.lower()
    for key in headers:
        if key.lower() == lowered:
            return key
    return None


def error_to_response(error: RestError) -> RestResponse:
    """The response for ``error``: its body and its status (500 when it has none), with a
    ``Retry-After`` header when its data says when to try again (``retry_after``, seconds: an
    outage of a service the site needs)."""
    response = RestResponse(error.to_dict(), error.status)
    data = error.data
    if isinstance(data, Mapping):
        retry_after = data.get("retry_after")
        if retry_after.__class__ is int and retry_after > 0:
            response.headers["Retry-After"] = str(retry_after)
    return response


def ensure_response(result: Any) -> RestResponse | RestError:
    """A handler's result as a response: errors and responses pass, anything else is wrapped."""
    if isinstance(result, RestResponse | RestError):
        return result
    return RestResponse(result)
