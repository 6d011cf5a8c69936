"""One purge request (``POST /cache``'s body) carried out: the REST route and the command line.

``POST /site-json/site-cache/v1/cache`` and ``sitecache cache flush`` both hand their request,
as the JSON object ``POST /cache`` takes, to `purge_request`: the same validation, the same
messages, the same engine calls, so the same purge listeners (static-file copies, the purge
webhook) hear about it whichever door it came through.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from sitecache.cache.api.schemas import CACHE_SCHEMA, validate_body
from sitecache.cache.engine import CacheEngine
from sitecache.cache.purging import PurgeResult
from sitecache.domain_errors import InvalidFields, InvalidURL, NotFoundError

__all__ = ["PURGE_SCOPES", "PurgeSeams", "purge_request", "url_refusal"]

#: Purge scopes of ``POST /cache``, in the order they are looked for.
PURGE_SCOPES: Final = ("all", "expired", "url", "urls", "post_id", "tag", "tags")


class PurgeSeams(Protocol):
    """What a purge of a post asks the site (`CacheApi`'s filters)."""

    engine: CacheEngine

    def post_exists(self, post_id: int) -> bool | None:
        """Whether the site has the post (``None``: unknown)."""

    def post_tags(self, post_id: int) -> list[str]:
        """The purge tags of a post and its related pages."""


def _one_error(field: str, message: str) -> InvalidFields:
    return InvalidFields.from_fields({field: {"code": "rest_invalid_param", "message": message}})


def url_refusal(error: InvalidURL, field: str, name: str) -> InvalidFields:
    """The engine's refusal of one URL as the routes' one 400, under ``field`` (the body
    key sent: ``url`` or ``urls``), its message naming ``name`` (``url``, ``urls[2]``)."""
    return InvalidFields.from_fields(
        {field: {"code": error.code, "message": f"{name} {error.reason}."}}
    )


def purge_request(api: PurgeSeams, body: Mapping[str, Any]) -> PurgeResult:
    """Validate ``body`` against ``POST /cache``'s schema and purge exactly its one scope
    (``{}``: this site).

    Raises:
        InvalidFields: a field breaks a rule, two scopes, an unknown host or an escaping path
            (400 ``rest_invalid_param`` naming every bad field; nothing purged).
        NotFoundError: a ``post_id`` the site does not have (404 ``rest_post_invalid_id``).
        StorageError: the storage failed.
    """
    clean = validate_body(dict(body), CACHE_SCHEMA)
    if not isinstance(clean, dict):  # the schema's refusal, as a domain exception
        data = {key: value for key, value in (clean.data or {}).items() if key != "status"}
        raise InvalidFields(clean.code, clean.message, data)
    soft = bool(clean.pop("soft", False))
    scopes = [key for key in PURGE_SCOPES if key in clean]
    if len(scopes) > 1:
        message = f"Send exactly one purge scope, not {', '.join(scopes)}."
        raise InvalidFields.from_fields(
            {key: {"code": "rest_invalid_param", "message": message} for key in scopes}
        )
    scope = scopes[0] if scopes else "site"
    return _SCOPES.get(scope, _purge_tags)(api, scope, clean, soft)


def _purge_site(api: PurgeSeams, scope: str, clean: Mapping[str, Any], soft: bool) -> PurgeResult:
    return api.engine.purge_site(soft=soft)


def _purge_all(api: PurgeSeams, scope: str, clean: Mapping[str, Any], soft: bool) -> PurgeResult:
    return api.engine.purge_all(soft=soft)


def _purge_expired(
    api: PurgeSeams, scope: str, clean: Mapping[str, Any], soft: bool
) -> PurgeResult:
    if soft:
        raise _one_error("soft", "soft does not apply to expired entries.")
    return api.engine.purge_expired()


def _purge_post(api: PurgeSeams, scope: str, clean: Mapping[str, Any], soft: bool) -> PurgeResult:
    post_id = int(clean["post_id"])
    if api.post_exists(post_id) is False:
        raise NotFoundError("rest_post_invalid_id", "Invalid post ID.")
    return api.engine.purge_tags(api.post_tags(post_id), soft=soft, scope="post_id")


def _purge_tags(api: PurgeSeams, scope: str, clean: Mapping[str, Any], soft: bool) -> PurgeResult:
    tags = [clean["tag"]] if scope == "tag" else list(clean["tags"])
    if not tags:
        raise _one_error("tags", "tags must name at least one tag.")
    return api.engine.purge_tags(tags, soft=soft, scope=scope)


def _purge_urls(api: PurgeSeams, scope: str, clean: Mapping[str, Any], soft: bool) -> PurgeResult:
    urls = [clean["url"]] if scope == "url" else list(clean["urls"])
    if not urls:
        raise _one_error("urls", "urls must name at least one URL.")
    for index, url in enumerate(urls):
        # Errors are reported under the field that was sent (url, or urls[i]).
        try:
            api.engine.resolve_url(url)
        except InvalidURL as refused:
            raise url_refusal(
                refused, scope, "url" if scope == "url" else f"urls[{index}]"
            ) from None
    return api.engine.purge_urls(urls, soft=soft, scope=scope)


_Purge = Callable[[PurgeSeams, str, Mapping[str, Any], bool], PurgeResult]

#: scope -> what purges it (``tag`` and ``tags`` are the default)
_SCOPES: Final[Mapping[str, _Purge]] = {
    "site": _purge_site,
    "all": _purge_all,
    "expired": _purge_expired,
    "url": _purge_urls,
    "urls": _purge_urls,
    "post_id": _purge_post,
}
