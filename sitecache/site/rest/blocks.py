"""``site/v2/block-types`` and ``site/v2/block-renderer``: the server-rendered block types,
listed and rendered (WordPress's block types and block renderer controllers).

Both need a user who can edit posts (``rest_block_type_cannot_view`` / ``block_cannot_read``,
401 or 403). The renderer answers only for ``context=edit`` (its ``context`` argument's enum is
``["edit"]`` while the default is ``view``, as in WordPress, so a request without it is a 400
``rest_invalid_param``); with ``post_id`` it renders in that post's context and needs the right
to edit that post. Its ``attributes`` are validated and sanitized by the block type's schema
before anything runs (400 ``rest_invalid_param`` with the engine's per-attribute detail); an
unknown name is 404 ``block_invalid``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.schema import sanitize_value_from_schema, validate_value_from_schema
from sitecache.site.blocks import BlockRenderer, BlockType
from sitecache.site.content import ContentService
from sitecache.site.models import Post
from sitecache.site.rest.base import NAMESPACE, RoutedController, context_param, denied
from sitecache.site.rest.block_schemas import BLOCK_TYPE_SCHEMA, RENDERED_BLOCK_SCHEMA

__all__ = ["BlockRoutes"]

_TYPE_FIELDS: Final = {
    "api_version": 3,
    "provides_context": {},
    "uses_context": [],
    "selectors": {},
    "styles": [],
    "variations": [],
    "parent": None,
    "ancestor": None,
    "allowed_blocks": None,
    "example": None,
    "block_hooks": {},
    "editor_script_handles": [],
    "script_handles": [],
    "view_script_handles": [],
    "view_script_module_ids": [],
    "editor_style_handles": [],
    "style_handles": [],
    "view_style_handles": [],
    "editor_script": None,
    "script": None,
    "view_script": None,
    "editor_style": None,
    "style": None,
}
"""The fields of a block type that a server-rendered block of this site leaves at WordPress's
empty values (no scripts, styles, variations or block hooks)."""


class BlockRoutes(RoutedController):
    """The block types and block renderer routes.

    Args:
        content: the content service (the renderer's ``post_id``).
        blocks: the block renderer (and its registry).
        can_edit: whether a request's user may edit a post (``edit_post``).
    """

    def __init__(
        self,
        content: ContentService,
        blocks: BlockRenderer,
        can_edit: Callable[[RestRequest, Post], bool],
    ) -> None:
        self.content = content
        self.blocks = blocks
        self.can_edit = can_edit

    def register(self, server: RestServer) -> None:
        """Register the routes (``rest_api_init``)."""
        self._server = server
        namespace_arg = {"description": "Block namespace.", "type": "string"}
        types_schema = _schema_callback(BLOCK_TYPE_SCHEMA)
        for route, args in (
            ("/block-types", {"context": context_param(), "namespace": namespace_arg}),
            (
                "/block-types/(?P<namespace>[a-zA-Z0-9_-]+)",
                {"context": context_param(), "namespace": namespace_arg},
            ),
        ):
            server.register_rest_route(
                NAMESPACE,
                route,
                {
                    "methods": "GET",
                    "callback": self.get_block_types,
                    "permission_callback": self.block_types_permissions_check,
                    "args": args,
                },
                schema=types_schema,
            )
        server.register_rest_route(
            NAMESPACE,
            "/block-types/(?P<namespace>[a-zA-Z0-9_-]+)/(?P<name>[a-zA-Z0-9_-]+)",
            {
                "methods": "GET",
                "callback": self.get_block_type,
                "permission_callback": self.block_types_permissions_check,
                "args": {
                    "name": {"description": "Block name.", "type": "string"},
                    "namespace": namespace_arg,
                    "context": context_param(),
                },
            },
            schema=types_schema,
        )
        server.register_rest_route(
            NAMESPACE,
            "/block-renderer/(?P<name>[a-z0-9-]+/[a-z0-9-]+)",
            {
                "methods": "GET, POST",
                "callback": self.render,
                "permission_callback": self.render_permissions_check,
                "args": self._renderer_args(),
            },
            schema=_schema_callback(RENDERED_BLOCK_SCHEMA),
        )

    def _renderer_args(self) -> dict[str, Any]:
        """WordPress's block renderer arguments; ``attributes`` checked by the named block
        type's own schema."""
        return {
            "name": {"description": "Unique registered name for the block.", "type": "string"},
            "context": {
                "description": "Scope under which the request is made; determines fields "
                "present in response.",
                "type": "string",
                "enum": ["edit"],
                "default": "view",
                # The value the request ends up with (given, else the default) is checked,
                # with the other arguments: the default on its own is not in the enum (as in
                # WordPress), so checking it alone would refuse every request.
                "sanitize_callback": _check_final_context,
            },
            "attributes": {
                "description": "Attributes for the block.",
                "type": "object",
                "default": {},
                "validate_callback": self._validate_attributes,
                "sanitize_callback": self._sanitize_attributes,
            },
            "post_id": {"description": "ID of the post context.", "type": "integer"},
        }

    def _attributes_schema(self, request: RestRequest) -> dict[str, Any] | None:
        block_type = self.blocks.registry.get(str(request.get_param("name") or ""))
        return None if block_type is None else block_type.attributes_schema()

    def _validate_attributes(self, value: Any, request: RestRequest, param: str) -> Any:
        schema = self._attributes_schema(request)
        if schema is None:
            return True  # an unknown block is refused by the handler (block_invalid)
        return validate_value_from_schema(value, schema, param)

    def _sanitize_attributes(self, value: Any, request: RestRequest, param: str) -> Any:
        schema = self._attributes_schema(request)
        if schema is None:
            return value
        return sanitize_value_from_schema(value, schema, param)

    # ------------------------------------------------------------------ permissions
    def block_types_permissions_check(self, request: RestRequest) -> bool:
        """Block types are for users who can edit posts."""
        if request.user.can("edit_posts"):
            return True
        raise denied(
            request,
            "rest_block_type_cannot_view",
            "Sorry, you are not allowed to manage block types.",
        )

    def render_permissions_check(self, request: RestRequest) -> bool:
        """With ``post_id``: the right to edit that post; else: ``edit_posts``."""
        post_id = request.get_param("post_id")
        if isinstance(post_id, int) and post_id > 0:
            post = self.content.get_post(post_id)
            if post is None or not self.can_edit(request, post):
                raise denied(
                    request,
                    "block_cannot_read",
                    "Sorry, you are not allowed to read blocks of this post.",
                )
            return True
        if request.user.can("edit_posts"):
            return True
        raise denied(
            request, "block_cannot_read", "Sorry, you are not allowed to read blocks as this user."
        )

    # ------------------------------------------------------------------ block types
    def _block_type(self, block_type: BlockType) -> RestResponse:
        data = {
            **_TYPE_FIELDS,
            "name": block_type.name,
            "title": block_type.title,
            "description": block_type.description,
            "icon": block_type.icon,
            "category": block_type.category,
            "keywords": list(block_type.keywords),
            "textdomain": block_type.textdomain,
            "attributes": {key: dict(value) for key, value in block_type.attributes.items()},
            "supports": dict(block_type.supports),
            "is_dynamic": block_type.is_dynamic,
        }
        response = RestResponse(data)
        rest = self.server.rest_url
        response.add_link("collection", rest(f"/{NAMESPACE}/block-types"))
        response.add_link("self", rest(f"/{NAMESPACE}/block-types/{block_type.name}"))
        response.add_link("up", rest(f"/{NAMESPACE}/block-types/{block_type.namespace}"))
        if block_type.is_dynamic:
            response.add_link(
                f"{self.server.settings.api_root_rel}render-block",
                rest(f"/{NAMESPACE}/block-renderer/{block_type.name}?context=edit"),
            )
        return response

    def get_block_types(self, request: RestRequest) -> list[Any]:
        """Every block type (of ``namespace`` when given)."""
        namespace = request.get_param("namespace")
        return [
            self.server.response_to_data(self._block_type(block_type), False)
            for block_type in self.blocks.registry
            if not namespace or block_type.namespace == namespace
        ]

    def get_block_type(self, request: RestRequest) -> RestResponse:
        """One block type, or 404 ``rest_block_type_invalid``."""
        name = f"{request.get_param('namespace')}/{request.get_param('name')}"
        block_type = self.blocks.registry.get(name)
        if block_type is None:
            raise RestError("rest_block_type_invalid", "Invalid block type.", {"status": 404})
        return self._block_type(block_type)

    # ------------------------------------------------------------------ renderer
    def render(self, request: RestRequest) -> dict[str, Any]:
        """``{"rendered": <HTML>}`` of the named block with the given attributes."""
        post_id = request.get_param("post_id")
        post = self.content.get_post(post_id) if isinstance(post_id, int) and post_id > 0 else None
        rendered = self.blocks.render_block(
            str(request.get_param("name")), request.get_param("attributes"), post
        )
        if isinstance(rendered, RestError):
            if rendered.code not in ("block_invalid", "block_render_failed"):
                rendered.data = {**(rendered.data or {}), "status": 400}
            raise rendered
        return {"rendered": str(rendered.html)}


_RENDER_CONTEXT: Final = {"type": "string", "enum": ["edit"]}


def _check_final_context(value: Any, request: RestRequest, param: str) -> Any:
    """The renderer's ``context`` as the request ends up with it (given, else ``view``),
    or the schema engine's error: only ``edit`` is accepted."""
    final = request.get_param(param)
    verdict = validate_value_from_schema(final, _RENDER_CONTEXT, param)
    return verdict if isinstance(verdict, RestError) else final


def _schema_callback(schema: dict[str, Any]) -> Callable[[], dict[str, Any]]:
    def callback() -> dict[str, Any]:
        return schema

    return callback
