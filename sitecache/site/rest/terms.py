"""``site/v2/categories`` and ``site/v2/tags``: the terms controller (WordPress's shapes).

Terms are public; creating, updating and deleting need ``manage_categories``. Terms have no
trash: deleting needs ``force=true`` (501 otherwise), and the default category cannot be
deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.site.content import ContentService, TermQuery
from sitecache.site.models import Term
from sitecache.site.rest.base import (
    NAMESPACE,
    CollectionController,
    CrudPermissions,
    collection_params,
    created,
    deleted,
    denied,
    edit_context_check,
    id_list_param,
    id_param,
    listing_args,
    paginated,
    require_force,
    require_found,
)

__all__ = ["TermsController", "term_schema"]

_ALL = ["view", "embed", "edit"]
_VIEW_EDIT = ["view", "edit"]


def term_schema(taxonomy: str) -> dict[str, Any]:
    """The resource schema of a taxonomy's terms."""
    properties = _term_properties(taxonomy)
    if taxonomy == "category":
        properties["parent"] = {
            "description": "The parent term ID.",
            "type": "integer",
            "context": _VIEW_EDIT,
        }
    return {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "title": "category" if taxonomy == "category" else "tag",
        "type": "object",
        "properties": properties,
    }


def _term_properties(taxonomy: str) -> dict[str, Any]:
    """The properties every term has (a category also has ``parent``)."""
    return {
        "id": {
            "description": "Unique identifier for the term.",
            "type": "integer",
            "context": _ALL,
            "readonly": True,
        },
        "count": {
            "description": "Number of published posts for the term.",
            "type": "integer",
            "context": _VIEW_EDIT,
            "readonly": True,
        },
        "description": {
            "description": "HTML description of the term.",
            "type": "string",
            "context": _VIEW_EDIT,
        },
        "link": {
            "description": "URL of the term.",
            "type": "string",
            "format": "uri",
            "context": _ALL,
            "readonly": True,
        },
        "name": {
            "description": "HTML title for the term.",
            "type": "string",
            "context": _ALL,
            "required": True,
            "minLength": 1,
        },
        "slug": {
            "description": "An alphanumeric identifier for the term unique to its type.",
            "type": "string",
            "context": _ALL,
        },
        "taxonomy": {
            "description": "Type attribution for the term.",
            "type": "string",
            "enum": [taxonomy],
            "context": _ALL,
            "readonly": True,
        },
        "meta": {
            "description": "Meta fields.",
            "type": "object",
            "context": _VIEW_EDIT,
            "properties": {},
        },
    }


class TermsController(CollectionController):
    """The routes of one taxonomy (``category`` → ``/categories``, ``post_tag`` → ``/tags``).

    Args:
        taxonomy: ``category`` or ``post_tag``.
        content: the content service.
        link_of: the archive URL of a term (the theme's).
    """

    def __init__(
        self, taxonomy: str, content: ContentService, link_of: Callable[[Term], str]
    ) -> None:
        self.taxonomy = taxonomy
        self.rest_base = "categories" if taxonomy == "category" else "tags"
        self.content = content
        self.link_of = link_of
        self.schema = term_schema(taxonomy)

    def collection_params(self) -> dict[str, Any]:
        """The collection's query arguments."""
        params = collection_params(offset=self.taxonomy != "category")
        params.update(
            {
                "exclude": id_list_param("Ensure result set excludes specific IDs."),
                "include": id_list_param("Limit result set to specific IDs."),
                "order": {
                    "description": "Order sort attribute ascending or descending.",
                    "type": "string",
                    "default": "asc",
                    "enum": ["asc", "desc"],
                },
                "orderby": {
                    "description": "Sort collection by term attribute.",
                    "type": "string",
                    "default": "name",
                    "enum": ["id", "name", "slug", "count", "description"],
                },
                "hide_empty": {
                    "description": "Whether to hide terms not assigned to any posts.",
                    "type": "boolean",
                    "default": False,
                },
                "post": {
                    "description": "Limit result set to terms assigned to a specific post.",
                    "type": "integer",
                },
                "slug": {
                    "description": "Limit result set to terms with one or more specific slugs.",
                    "type": "array",
                    "items": {"type": "string"},
                },
            }
        )
        if self.taxonomy == "category":
            params["parent"] = {
                "description": "Limit result set to terms assigned to a specific parent.",
                "type": "integer",
            }
        return params

    def register(self, server: RestServer) -> None:
        """Register the collection and item routes (``rest_api_init``)."""
        manage = self.manage_permissions_check
        self.register_collection(
            server,
            CrudPermissions(
                list=self.get_items_permissions_check,
                create=manage,
                read=self.get_items_permissions_check,
                update=manage,
                delete=self.delete_permissions_check,
            ),
            item_noun="term",
            force_description="Required to be true, as terms do not support trashing.",
        )

    # ------------------------------------------------------------------ permissions
    def get_items_permissions_check(self, request: RestRequest) -> bool:
        """Public; ``context=edit`` needs ``manage_categories``."""
        edit_context_check(request, "manage_categories")
        return True

    def manage_permissions_check(self, request: RestRequest) -> bool:
        """Creating and editing terms needs ``manage_categories``."""
        if not request.user.can("manage_categories"):
            code = "rest_cannot_create" if request.get_method() == "POST" else "rest_cannot_update"
            if request.get_param("id") is not None:
                code = "rest_cannot_update"
            raise denied(
                request, code, "Sorry, you are not allowed to manage terms in this taxonomy."
            )
        return True

    def delete_permissions_check(self, request: RestRequest) -> bool:
        """Deleting terms needs ``manage_categories`` (the default category: never)."""
        if not request.user.can("manage_categories"):
            raise denied(
                request, "rest_cannot_delete", "Sorry, you are not allowed to delete this term."
            )
        term = self.content.get_term(id_param(request), self.taxonomy)
        default = int(self.content.get_option("default_category"))
        if self.taxonomy == "category" and term is not None and term.id == default:
            raise denied(request, "rest_cannot_delete", "The default category cannot be deleted.")
        return True

    # ------------------------------------------------------------------ handlers
    def _term(self, request: RestRequest) -> Term:
        return require_found(
            self.content.get_term(id_param(request), self.taxonomy),
            "rest_term_invalid",
            "Term does not exist.",
        )

    def get_items(self, request: RestRequest) -> RestResponse:
        """One page of terms, with totals and prev/next links."""
        post = request.get_param("post")
        parent = request.get_param("parent")
        query = TermQuery(
            taxonomy=self.taxonomy,
            slugs=tuple(str(s) for s in request.get_param("slug") or ()),
            parent=parent if isinstance(parent, int) else None,
            post=post if isinstance(post, int) else None,
            hide_empty=bool(request.get_param("hide_empty")),
            **listing_args(request, orderby="name", order="asc"),
        )
        terms, total = self.content.query_terms(query)
        data = [self.server.response_to_data(self.prepare(term), False) for term in terms]
        return paginated(self.server, request, data, total, query.per_page, query.page)

    def get_item(self, request: RestRequest) -> RestResponse:
        """One term."""
        return self.prepare(self._term(request))

    def prepare(self, term: Term) -> RestResponse:
        """A term's data with its links."""
        data: dict[str, Any] = {
            "id": term.id,
            "count": term.count,
            "description": term.description,
            "link": self.link_of(term),
            "name": term.name,
            "slug": term.slug,
            "taxonomy": term.taxonomy,
            "meta": {},
        }
        if self.taxonomy == "category":
            data["parent"] = term.parent
        response = RestResponse(data)
        rest = self.server.rest_url
        base = f"/{NAMESPACE}/{self.rest_base}"
        response.add_link("self", rest(f"{base}/{term.id}"))
        response.add_link("collection", rest(base))
        response.add_link("about", rest(f"/{NAMESPACE}/taxonomies/{self.taxonomy}"))
        if term.parent:
            response.add_link("up", rest(f"{base}/{term.parent}"), {"embeddable": True})
        response.add_link(
            f"{self.server.settings.api_root_rel}post_type",
            rest(f"/{NAMESPACE}/posts?{self.rest_base}={term.id}"),
        )
        return response

    def create_item(self, request: RestRequest) -> RestResponse:
        """Create a term (201)."""
        parent = request.get_param("parent")
        term = self.content.create_term(
            self.taxonomy,
            str(request.get_param("name") or ""),
            slug=str(request.get_param("slug") or ""),
            description=str(request.get_param("description") or ""),
            parent=parent if isinstance(parent, int) else 0,
        )
        return created(self.server, self.prepare(term), f"/{self.rest_base}/{term.id}")

    def update_item(self, request: RestRequest) -> RestResponse:
        """Update a term's name, slug, description or parent."""
        term = self._term(request)
        fields = {
            name: request.get_param(name)
            for name in ("name", "slug", "description", "parent")
            if request.get_param(name) is not None
            and (name != "parent" or self.taxonomy == "category")
        }
        return self.prepare(self.content.update_term(term.id, **fields))

    def delete_item(self, request: RestRequest) -> RestResponse:
        """Delete a term (``force=true`` required)."""
        term = self._term(request)
        require_force(request, 'Terms do not support trashing. Set "force=true" to delete.')
        request.set_param("context", "view")
        answer = deleted(self.server, self.prepare(term))
        self.content.delete_term(term.id)
        return answer
