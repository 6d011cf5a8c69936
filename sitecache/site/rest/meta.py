"""``site/v2`` routes describing the site: types, statuses, taxonomies, search and settings."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.rest.server import FORBIDDEN_MESSAGE
from sitecache.schema import filter_response_by_context, get_endpoint_args_for_schema
from sitecache.site.content import ContentService, PostQuery, TermQuery
from sitecache.site.models import Post, Term
from sitecache.site.options import OPTION_SCHEMAS
from sitecache.site.rest.base import (
    NAMESPACE,
    RoutedController,
    collection_params,
    context_param,
    denied,
    edit_context_check,
    id_list_param,
    int_list,
    paginated,
    require_capability,
)
from sitecache.site.rest.meta_schemas import (
    SEARCH_SCHEMA,
    SETTINGS_SCHEMA,
    STATUS_SCHEMA,
    TAXONOMY_SCHEMA,
    TYPE_SCHEMA,
)

__all__ = ["MetaRoutes"]

_TYPES: Final[Mapping[str, dict[str, Any]]] = {
    "post": {
        "name": "Posts",
        "singular": "Post",
        "description": "",
        "hierarchical": False,
        "has_archive": False,
        "taxonomies": ["category", "post_tag"],
        "rest_base": "posts",
        "supports": {
            "title": True,
            "editor": True,
            "author": True,
            "excerpt": True,
            "comments": True,
            "revisions": True,
        },
        "cap": "posts",
    },
    "page": {
        "name": "Pages",
        "singular": "Page",
        "description": "",
        "hierarchical": True,
        "has_archive": False,
        "taxonomies": [],
        "rest_base": "pages",
        "supports": {
            "title": True,
            "editor": True,
            "author": True,
            "page-attributes": True,
            "comments": True,
            "revisions": True,
        },
        "cap": "pages",
    },
    "attachment": {
        "name": "Media",
        "singular": "Media",
        "description": "",
        "hierarchical": False,
        "has_archive": False,
        "taxonomies": [],
        "rest_base": "media",
        "supports": {"title": True, "author": True, "comments": True},
        "cap": "posts",
    },
}
_STATUSES: Final[Mapping[str, dict[str, Any]]] = {
    "publish": {
        "name": "Published",
        "public": True,
        "private": False,
        "protected": False,
        "queryable": True,
        "date_floating": False,
    },
    "future": {
        "name": "Scheduled",
        "public": False,
        "private": False,
        "protected": True,
        "queryable": False,
        "date_floating": False,
    },
    "draft": {
        "name": "Draft",
        "public": False,
        "private": False,
        "protected": True,
        "queryable": False,
        "date_floating": True,
    },
    "pending": {
        "name": "Pending",
        "public": False,
        "private": False,
        "protected": True,
        "queryable": False,
        "date_floating": True,
    },
    "private": {
        "name": "Private",
        "public": False,
        "private": True,
        "protected": False,
        "queryable": False,
        "date_floating": False,
    },
    "trash": {
        "name": "Trash",
        "public": False,
        "private": False,
        "protected": False,
        "queryable": False,
        "date_floating": False,
    },
}
_TAXONOMIES: Final[Mapping[str, dict[str, Any]]] = {
    "category": {
        "name": "Categories",
        "singular": "Category",
        "description": "",
        "hierarchical": True,
        "rest_base": "categories",
        "show_cloud": True,
        "types": ["post"],
    },
    "post_tag": {
        "name": "Tags",
        "singular": "Tag",
        "description": "",
        "hierarchical": False,
        "rest_base": "tags",
        "show_cloud": True,
        "types": ["post"],
    },
}


class MetaRoutes(RoutedController):
    """Types, statuses, taxonomies, search and settings.

    Args:
        content: the content service.
        post_link: the permalink of a post; term_link: the archive URL of a term.
    """

    def __init__(
        self,
        content: ContentService,
        post_link: Callable[[Post], str],
        term_link: Callable[[Term], str],
    ) -> None:
        self.content = content
        self.post_link = post_link
        self.term_link = term_link

    def register(self, server: RestServer) -> None:
        """Register every route (``rest_api_init``)."""
        self._server = server
        self._register_catalogues(server)
        server.register_rest_route(
            NAMESPACE,
            "/search",
            {
                "methods": "GET",
                "callback": self.search,
                "permission_callback": lambda request: True,
                "args": _search_args(),
            },
            schema=_schema_callback(SEARCH_SCHEMA),
        )
        self._register_settings(server)

    def _register_catalogues(self, server: RestServer) -> None:
        """``/types``, ``/statuses``, ``/taxonomies`` and one item of each."""
        context = {"context": context_param()}
        for base, key, schema, collection, item, check in (
            (
                "types",
                "type",
                TYPE_SCHEMA,
                self.get_types,
                self.get_type,
                self.types_permissions_check,
            ),
            (
                "statuses",
                "status",
                STATUS_SCHEMA,
                self.get_statuses,
                self.get_status,
                self.statuses_permissions_check,
            ),
            (
                "taxonomies",
                "taxonomy",
                TAXONOMY_SCHEMA,
                self.get_taxonomies,
                self.get_taxonomy,
                self.types_permissions_check,
            ),
        ):
            schema_callback = _schema_callback(schema)
            args = dict(context)
            if base == "taxonomies":
                args["type"] = {
                    "description": "Limit results to taxonomies associated with a specific post "
                    "type.",
                    "type": "string",
                }
            server.register_rest_route(
                NAMESPACE,
                f"/{base}",
                {
                    "methods": "GET",
                    "callback": collection,
                    "permission_callback": check,
                    "args": args,
                },
                schema=schema_callback,
            )
            server.register_rest_route(
                NAMESPACE,
                f"/{base}/(?P<{key}>[\\w-]+)",
                {
                    "methods": "GET",
                    "callback": item,
                    "permission_callback": check,
                    "args": dict(context),
                },
                schema=schema_callback,
            )

    def _register_settings(self, server: RestServer) -> None:
        """``/settings``: read and update the site's options."""
        server.register_rest_route(
            NAMESPACE,
            "/settings",
            [
                {
                    "methods": "GET",
                    "callback": self.get_settings,
                    "permission_callback": self.settings_permissions_check,
                    "args": {},
                },
                {
                    "methods": "POST, PUT, PATCH",
                    "callback": self.update_settings,
                    "permission_callback": self.settings_permissions_check,
                    "args": get_endpoint_args_for_schema(SETTINGS_SCHEMA, "POST, PUT, PATCH"),
                },
            ],
            schema=_schema_callback(SETTINGS_SCHEMA),
        )

    def _keyed(
        self, request: RestRequest, schema: dict[str, Any], items: Mapping[str, RestResponse]
    ) -> dict[str, Any]:
        """A collection keyed by slug, each item filtered by the request's context here.

        The server's context filter would take a keyed object for one resource (a status
        named ``private`` is also a property of the status schema), so the items are filtered
        one by one and the server is told the filtering is done.
        """
        context = str(request.get_param("context") or "view")
        data = {
            key: filter_response_by_context(
                self.server.response_to_data(response, False), schema, context
            )
            for key, response in items.items()
        }
        request.remove_param("context")
        return data

    # ------------------------------------------------------------------ permissions
    def types_permissions_check(self, request: RestRequest) -> bool:
        """Public; ``context=edit`` needs ``edit_posts``."""
        edit_context_check(request, "edit_posts")
        return True

    def statuses_permissions_check(self, request: RestRequest) -> bool:
        """Public for ``publish``; other statuses need ``edit_posts``."""
        edit_context_check(request, "edit_posts")
        status = request.get_param("status")
        if isinstance(status, str) and status != "publish" and not request.user.can("edit_posts"):
            if status not in _STATUSES:
                raise RestError("rest_status_invalid", "Invalid status.", {"status": 404})
            raise denied(request, "rest_cannot_read_status", "Cannot view status.")
        return True

    def settings_permissions_check(self, request: RestRequest) -> bool:
        """Settings are for administrators (``manage_options``)."""
        return require_capability(request, "manage_options", "rest_forbidden", FORBIDDEN_MESSAGE)

    # ------------------------------------------------------------------ types
    def _type(self, slug: str, request: RestRequest) -> RestResponse:
        info = _TYPES[slug]
        cap = info["cap"]
        data = {
            "capabilities": {
                f"{verb}_{cap}": f"{verb}_{cap}"
                for verb in ("edit", "edit_others", "publish", "read_private", "delete")
            },
            "description": info["description"],
            "hierarchical": info["hierarchical"],
            "viewable": True,
            "labels": {"name": info["name"], "singular_name": info["singular"]},
            "name": info["name"],
            "slug": slug,
            "supports": info["supports"],
            "has_archive": info["has_archive"],
            "taxonomies": info["taxonomies"],
            "rest_base": info["rest_base"],
            "rest_namespace": NAMESPACE,
        }
        return self._with_collection_links(data, "/types", info["rest_base"])

    def _with_collection_links(
        self, data: dict[str, Any], collection: str, rest_base: str
    ) -> RestResponse:
        """``data`` linked to its ``collection`` (a path below the namespace) and to the items
        of its ``rest_base`` (a post type's or a taxonomy's)."""
        response = RestResponse(data)
        rest = self.server.rest_url
        response.add_link("collection", rest(f"/{NAMESPACE}{collection}"))
        response.add_link(
            f"{self.server.settings.api_root_rel}items", rest(f"/{NAMESPACE}/{rest_base}")
        )
        return response

    def get_types(self, request: RestRequest) -> dict[str, Any]:
        """Every post type, keyed by slug."""
        return self._keyed(
            request, TYPE_SCHEMA, {slug: self._type(slug, request) for slug in _TYPES}
        )

    def get_type(self, request: RestRequest) -> RestResponse:
        """One post type."""
        slug = str(request.get_param("type"))
        if slug not in _TYPES:
            raise RestError("rest_type_invalid", "Invalid post type.", {"status": 404})
        return self._type(slug, request)

    # ------------------------------------------------------------------ statuses
    def _status(self, slug: str) -> RestResponse:
        info = _STATUSES[slug]
        data = {**info, "slug": slug, "show_in_list": slug != "trash"}
        response = RestResponse(data)
        response.add_link("archives", self.server.rest_url(f"/{NAMESPACE}/posts?status={slug}"))
        return response

    def get_statuses(self, request: RestRequest) -> dict[str, Any]:
        """The statuses the caller may see, keyed by slug (anonymous: ``publish`` only)."""
        visible = _STATUSES if request.user.can("edit_posts") else {"publish": _STATUSES["publish"]}
        return self._keyed(request, STATUS_SCHEMA, {slug: self._status(slug) for slug in visible})

    def get_status(self, request: RestRequest) -> RestResponse:
        """One status."""
        slug = str(request.get_param("status"))
        if slug not in _STATUSES:
            raise RestError("rest_status_invalid", "Invalid status.", {"status": 404})
        return self._status(slug)

    # ------------------------------------------------------------------ taxonomies
    def _taxonomy(self, slug: str) -> RestResponse:
        info = _TAXONOMIES[slug]
        data = {
            "capabilities": {
                "manage_terms": "manage_categories",
                "edit_terms": "manage_categories",
                "delete_terms": "manage_categories",
                "assign_terms": "edit_posts",
            },
            "description": info["description"],
            "hierarchical": info["hierarchical"],
            "labels": {"name": info["name"], "singular_name": info["singular"]},
            "name": info["name"],
            "slug": slug,
            "show_cloud": info["show_cloud"],
            "types": info["types"],
            "rest_base": info["rest_base"],
            "rest_namespace": NAMESPACE,
        }
        return self._with_collection_links(data, "/taxonomies", info["rest_base"])

    def get_taxonomies(self, request: RestRequest) -> dict[str, Any]:
        """Every taxonomy (of ``type`` when given), keyed by slug."""
        post_type = request.get_param("type")
        chosen = {
            slug: self._taxonomy(slug)
            for slug, info in _TAXONOMIES.items()
            if not post_type or post_type in info["types"]
        }
        return self._keyed(request, TAXONOMY_SCHEMA, chosen)

    def get_taxonomy(self, request: RestRequest) -> RestResponse:
        """One taxonomy."""
        slug = str(request.get_param("taxonomy"))
        if slug not in _TAXONOMIES:
            raise RestError("rest_taxonomy_invalid", "Invalid taxonomy.", {"status": 404})
        return self._taxonomy(slug)

    # ------------------------------------------------------------------ search
    def search(self, request: RestRequest) -> RestResponse:
        """Published posts and pages (``type=post``) or terms (``type=term``) matching
        ``search``, with totals and prev/next links."""
        page = int(request.get_param("page") or 1)
        per_page = int(request.get_param("per_page") or 10)
        subtypes = request.get_param("subtype")
        wanted = set(subtypes) if isinstance(subtypes, list) else {str(subtypes or "any")}
        if request.get_param("type") == "term":
            results, total = self._search_terms(request, wanted, page, per_page)
        else:
            types = tuple(t for t in ("post", "page") if "any" in wanted or t in wanted)
            if not types:
                return paginated(self.server, request, [], 0, per_page, page)
            results, total = self._search_posts(request, types, page, per_page)
        return paginated(
            self.server, request, results, total, per_page, page, "rest_search_invalid_page_number"
        )

    def _search_terms(
        self, request: RestRequest, wanted: set[str], page: int, per_page: int
    ) -> tuple[list[Any], int]:
        """One page of the terms of the ``wanted`` taxonomies matching ``search``, and how
        many match in all."""
        found: list[Term] = []
        for taxonomy in (t for t in _TAXONOMIES if "any" in wanted or t in wanted):
            found += self.content.query_terms(
                TermQuery(
                    taxonomy=taxonomy,
                    search=str(request.get_param("search") or ""),
                    include=int_list(request.get_param("include")),
                    exclude=int_list(request.get_param("exclude")),
                    per_page=10_000,
                )
            )[0]
        results = [
            self._search_result(
                item.id,
                item.name,
                self.term_link(item),
                "term",
                item.taxonomy,
                f"/{_TAXONOMIES[item.taxonomy]['rest_base']}/{item.id}",
                f"/taxonomies/{item.taxonomy}",
            )
            for item in found[(page - 1) * per_page : page * per_page]
        ]
        return results, len(found)

    def _search_posts(
        self, request: RestRequest, types: tuple[str, ...], page: int, per_page: int
    ) -> tuple[list[Any], int]:
        """One page of the published posts of ``types`` matching ``search``, and how many
        match in all."""
        posts, total = self.content.query_posts(
            PostQuery(
                types=types,
                search=str(request.get_param("search") or ""),
                # WordPress's rule: a logged-out search never finds a protected post.
                without_password=bool(request.get_param("search"))
                and not getattr(request.user, "id", 0),
                include=int_list(request.get_param("include")),
                exclude=int_list(request.get_param("exclude")),
                page=page,
                per_page=per_page,
            )
        )
        results = [
            self._search_result(
                post.id,
                post.title,
                self.post_link(post),
                "post",
                post.type,
                f"/{_TYPES[post.type]['rest_base']}/{post.id}",
                f"/types/{post.type}",
            )
            for post in posts
        ]
        return results, total

    def _search_result(
        self,
        item_id: int,
        title: str,
        url: str,
        kind: str,
        subtype: str,
        self_path: str,
        about_path: str,
    ) -> Any:
        """One search hit as data, with its embeddable ``self`` link and its ``about`` link
        (paths below the namespace)."""
        rest = self.server.rest_url
        response = RestResponse(
            {"id": item_id, "title": title, "url": url, "type": kind, "subtype": subtype}
        )
        response.add_link("self", rest(f"/{NAMESPACE}{self_path}"), {"embeddable": True})
        response.add_link("about", rest(f"/{NAMESPACE}{about_path}"))
        return self.server.response_to_data(response, False)

    # ------------------------------------------------------------------ settings
    def get_settings(self, request: RestRequest) -> dict[str, Any]:
        """Every site option."""
        return self.content.options.all()

    def update_settings(self, request: RestRequest) -> dict[str, Any]:
        """Set the options given, all or none (each fires ``updated_option`` when it changes,
        after the commit)."""
        with self.content.batch():
            for name in OPTION_SCHEMAS:
                value = request.get_param(name)
                if value is not None:
                    self.content.update_option(name, value)
        return self.content.options.all()


def _search_args() -> dict[str, Any]:
    """The arguments of ``GET /search``."""
    search_args = collection_params(offset=False)
    search_args["context"] = context_param(contexts=("view", "embed"))
    search_args.update(
        {
            "type": {
                "default": "post",
                "description": "Limit results to items of an object type.",
                "type": "string",
                "enum": ["post", "term"],
            },
            "subtype": {
                "default": "any",
                "description": "Limit results to items of one or more object subtypes.",
                "type": "array",
                "items": {
                    "enum": ["post", "page", "category", "post_tag", "any"],
                    "type": "string",
                },
            },
            "exclude": id_list_param("Ensure result set excludes specific IDs."),
            "include": id_list_param("Limit result set to specific IDs."),
        }
    )
    return search_args


def _schema_callback(schema: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    def callback() -> dict[str, Any]:
        return schema

    return callback
