"""``site/v2/posts`` and ``site/v2/pages``: the posts controller (WordPress's shapes).

Published posts are public; drafts, pending, scheduled and trashed posts need the edit
capability of the post type, private ones the read-private one. ``context=edit`` needs the
edit capability. Writes need ``edit_posts`` (``edit_pages``), publishing ``publish_posts``,
someone else's post ``edit_others_posts``; deleting without ``force`` moves to the trash.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Final

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.site.blocks import strip_blocks
from sitecache.site.content import ContentService
from sitecache.site.models import POST_STATUSES, Post
from sitecache.site.render import excerpt_text, paragraphs
from sitecache.site.rest.base import (
    NAMESPACE,
    CollectionController,
    CrudPermissions,
    created,
    date_field,
    deleted,
    denied,
    edit_context_check,
    id_list_param,
    id_param,
    int_columns,
    int_list,
    raw_text,
)
from sitecache.site.rest.post_types import (
    add_post_links,
    check_statuses,
    paginated_posts,
    post_collection_params,
    post_fields,
    post_query,
    read_post,
    requested_statuses,
    title_field,
)
from sitecache.site.rest.posts_schema import post_schema

__all__ = ["PostsController", "post_schema"]


_CAPS: Final[Mapping[str, Mapping[str, str]]] = {
    "post": {
        "edit": "edit_posts",
        "edit_others": "edit_others_posts",
        "edit_published": "edit_published_posts",
        "publish": "publish_posts",
        "read_private": "read_private_posts",
        "delete": "delete_posts",
        "delete_others": "delete_others_posts",
        "delete_published": "delete_published_posts",
    },
    "page": {
        "edit": "edit_pages",
        "edit_others": "edit_others_pages",
        "edit_published": "edit_published_pages",
        "publish": "publish_pages",
        "read_private": "read_private_pages",
        "delete": "delete_pages",
        "delete_others": "delete_others_pages",
        "delete_published": "delete_published_pages",
    },
}
_ORDERBY: Final = [
    "author",
    "date",
    "id",
    "include",
    "modified",
    "parent",
    "slug",
    "title",
    "menu_order",
]


class PostsController(CollectionController):
    """The routes of one post type (``post`` → ``/posts``, ``page`` → ``/pages``).

    Args:
        post_type: ``post`` or ``page``.
        content: the content service.
        link_of: the permalink of a post (the theme's).
        render_content: a post's content as HTML (the theme's, with its blocks rendered);
            escaped paragraphs when not given.
    """

    def __init__(
        self,
        post_type: str,
        content: ContentService,
        link_of: Callable[[Post], str],
        render_content: Callable[[Post], str] | None = None,
    ) -> None:
        self.post_type = post_type
        self.rest_base = "posts" if post_type == "post" else "pages"
        self.content = content
        self.link_of = link_of
        self.render_content = render_content or (lambda post: str(paragraphs(post.content)))
        self.caps = _CAPS[post_type]
        self.schema = post_schema(post_type)

    # ------------------------------------------------------------------ registration
    def collection_params(self) -> dict[str, Any]:
        """The collection's query arguments."""
        params = post_collection_params(
            orderby=_ORDERBY,
            statuses=[*POST_STATUSES, "any"],
            default_status="publish",
            date_words="ISO8601",
        )
        if self.post_type == "post":
            for name in ("categories", "tags"):
                params[name] = id_list_param(
                    f"Limit result set to items with specific terms of the {name} taxonomy."
                )
                params[f"{name}_exclude"] = id_list_param(
                    f"Limit result set to items without specific terms of the {name} taxonomy."
                )
            params["sticky"] = {
                "description": "Limit result set to items that are sticky.",
                "type": "boolean",
            }
        else:
            params["parent"] = id_list_param(
                "Limit result set to items with particular parent IDs."
            )
        return params

    def register(self, server: RestServer) -> None:
        """Register the collection and item routes (``rest_api_init``)."""
        self.register_collection(
            server,
            CrudPermissions.of(self),
            item_noun="post",
            read_args={"password": _PASSWORD_ARG},
        )

    # ------------------------------------------------------------------ permissions
    def _post(self, request: RestRequest) -> Post:
        """The post the request names, read once per request.

        Raises:
            RestError: 404 ``rest_post_invalid_id`` when there is none of this type.
        """
        post = read_post(request, self.content, id_param(request))
        if post is None or post.type != self.post_type:
            raise RestError("rest_post_invalid_id", "Invalid post ID.", {"status": 404})
        return post

    def can_read(self, request: RestRequest, post: Post) -> bool:
        """Whether the caller may see ``post``."""
        if post.status == "publish":
            return True
        user = request.user
        if post.status == "private":
            return bool(user.can(self.caps["read_private"]))
        return self.can_edit(request, post)

    def can_edit(self, request: RestRequest, post: Post) -> bool:
        """Whether the caller may change ``post`` (``edit_post``)."""
        user = request.user
        if not user.can(self.caps["edit"]):
            return False
        if post.author != getattr(user, "id", 0) and not user.can(self.caps["edit_others"]):
            return False
        return post.status not in ("publish", "private") or bool(
            user.can(self.caps["edit_published"])
        )

    def can_delete(self, request: RestRequest, post: Post) -> bool:
        """Whether the caller may delete ``post`` (``delete_post``): ``delete_posts``, plus
        ``delete_others_posts`` / ``delete_published_posts`` when they apply."""
        user = request.user
        allowed = bool(user.can(self.caps["delete"]))
        if post.author != getattr(user, "id", 0):
            allowed = allowed and bool(user.can(self.caps["delete_others"]))
        if post.status == "publish":
            allowed = allowed and bool(user.can(self.caps["delete_published"]))
        return allowed

    def get_items_permissions_check(self, request: RestRequest) -> bool:
        """Anybody may list published posts; ``context=edit`` needs the edit capability."""
        edit_context_check(request, self.caps["edit"])
        return True

    def get_item_permissions_check(self, request: RestRequest) -> bool:
        """Readable posts only; ``context=edit`` needs the right to edit this one."""
        post = self._post(request)
        if request.get_param("context") == "edit" and not self.can_edit(request, post):
            raise denied(
                request, "rest_forbidden_context", "Sorry, you are not allowed to edit this post."
            )
        if not self.can_read(request, post):
            raise denied(request, "rest_forbidden", "Sorry, you are not allowed to do that.")
        given = request.get_param("password")
        # WordPress checks a given password even against a post without one (403 either way).
        if isinstance(given, str) and given and not _same_password(post.password, given):
            raise RestError(
                "rest_post_incorrect_password", "Incorrect post password.", {"status": 403}
            )
        return True

    def can_access_password_content(self, request: RestRequest, post: Post) -> bool:
        """Whether the caller sees the content of a password-protected ``post``: in
        ``context=edit`` with the right to edit it, or with its password as the ``password``
        argument (False for a post without a password: nothing to unlock)."""
        if not post.password:
            return False
        if request.get_param("context") == "edit" and self.can_edit(request, post):
            return True
        given = request.get_param("password")
        return isinstance(given, str) and bool(given) and _same_password(post.password, given)

    def _check_write(self, request: RestRequest, post: Post | None) -> bool:
        user = request.user
        if not user.can(self.caps["edit"]):
            code = "rest_cannot_create" if post is None else "rest_cannot_edit"
            raise denied(
                request, code, "Sorry, you are not allowed to edit posts in this post type."
            )
        if post is not None and not self.can_edit(request, post):
            raise denied(
                request, "rest_cannot_edit", "Sorry, you are not allowed to edit this post."
            )
        author = request.get_param("author")
        if (
            isinstance(author, int)
            and author != getattr(user, "id", 0)
            and not user.can(self.caps["edit_others"])
        ):
            raise denied(
                request,
                "rest_cannot_edit_others",
                "Sorry, you are not allowed to update posts as this user.",
            )
        status = request.get_param("status")
        if status in ("publish", "future", "private") and not user.can(self.caps["publish"]):
            raise denied(
                request,
                "rest_cannot_publish",
                "Sorry, you are not allowed to publish posts in this post type.",
            )
        return True

    def create_item_permissions_check(self, request: RestRequest) -> bool:
        """``edit_posts`` (``edit_pages``), and ``publish_posts`` to publish."""
        if request.get_param("id"):
            raise RestError("rest_post_exists", "Cannot create existing post.", {"status": 400})
        return self._check_write(request, None)

    def update_item_permissions_check(self, request: RestRequest) -> bool:
        """The right to edit this post (and to publish, when asked)."""
        return self._check_write(request, self._post(request))

    def delete_item_permissions_check(self, request: RestRequest) -> bool:
        """``delete_posts``, plus ``delete_others_posts`` / ``delete_published_posts``."""
        if not self.can_delete(request, self._post(request)):
            raise denied(
                request, "rest_cannot_delete", "Sorry, you are not allowed to delete this post."
            )
        return True

    # ------------------------------------------------------------------ reading
    def get_items(self, request: RestRequest) -> RestResponse:
        """One page of posts, with totals and prev/next links."""
        wanted = requested_statuses(request, "publish")
        if "any" in wanted:
            wanted = tuple(s for s in POST_STATUSES if s != "trash")
        check_statuses(request, wanted, self._status_capability)
        query = replace(
            post_query(request, (self.post_type,), wanted),
            term_groups=tuple(
                group
                for group in (
                    int_list(request.get_param("categories")),
                    int_list(request.get_param("tags")),
                )
                if group
            ),
            terms_exclude=int_list(request.get_param("categories_exclude"))
            + int_list(request.get_param("tags_exclude")),
            parents=int_list(request.get_param("parent")),
            sticky=sticky if isinstance(sticky := request.get_param("sticky"), bool) else None,
            # WordPress's rule: a logged-out search never finds a password-protected post.
            without_password=bool(request.get_param("search"))
            and not getattr(request.user, "id", 0),
        )
        posts, total = self.content.query_posts(query)
        data = [self.server.response_to_data(self.prepare(post, request), False) for post in posts]
        return paginated_posts(self.server, request, data, total, query)

    def _status_capability(self, status: str) -> str | None:
        """The capability listing posts of ``status`` needs (``None``: published ones)."""
        if status == "publish":
            return None
        return self.caps["read_private"] if status == "private" else self.caps["edit"]

    def get_item(self, request: RestRequest) -> RestResponse:
        """One post."""
        return self.prepare(self._post(request), request)

    def prepare(self, post: Post, request: RestRequest) -> RestResponse:
        """A post's data (every field; the server filters by context) with its links."""
        protected = bool(post.password)
        # Withheld unless the caller may see it (WordPress's ``post_password_required``).
        withheld = protected and not self.can_access_password_content(request, post)
        guid = f"{self.server.home_url()}/?p={post.id}"
        texts = {
            "password": post.password,
            "title": title_field(post),
            "content": {
                "raw": post.content,
                "rendered": "" if withheld else self.render_content(post),
                "protected": protected,
            },
            "excerpt": {
                "raw": post.excerpt,
                "rendered": ""
                if withheld
                else str(paragraphs(excerpt_text(post.excerpt, strip_blocks(post.content)))),
                "protected": protected,
            },
        }
        data = post_fields(post, self.content, guid=guid, link=self.link_of(post), texts=texts)
        terms = self.content.get_terms(post.term_ids) if post.term_ids else {}
        if self.post_type == "post":
            data["format"] = "standard"
            data["sticky"] = post.sticky
            data["categories"] = [
                i for i in post.term_ids if i in terms and terms[i].taxonomy == "category"
            ]
            data["tags"] = [
                i for i in post.term_ids if i in terms and terms[i].taxonomy == "post_tag"
            ]
        else:
            data["parent"] = post.parent
            data["menu_order"] = post.menu_order
        return self._add_links(RestResponse(data), post)

    def _add_links(self, response: RestResponse, post: Post) -> RestResponse:
        """``self``, ``collection``, ``about``, embeddable ``author``, ``replies``, ``up`` (a
        child page), ``version-history`` (with the revision ``count``) and, when there is a
        revision, ``predecessor-version`` (the newest, with its ``id``), the embeddable
        ``wp:featuredmedia`` when it has a featured image, and the ``wp:term`` links (posts)."""
        add_post_links(self.server, response, self.rest_base, post)
        rest = self.server.rest_url
        base = f"/{NAMESPACE}/{self.rest_base}"
        if self.post_type == "page" and post.parent:
            response.add_link("up", rest(f"{base}/{post.parent}"), {"embeddable": True})
        count, latest = self.content.revision_summary(post.id)
        history = f"{base}/{post.id}/revisions"
        response.add_link("version-history", rest(history), {"count": count})
        if latest is not None:
            response.add_link("predecessor-version", rest(f"{history}/{latest}"), {"id": latest})
        if post.featured_media:
            response.add_link(
                f"{self.server.settings.api_root_rel}featuredmedia",
                rest(f"/{NAMESPACE}/media/{post.featured_media}"),
                {"embeddable": True},
            )
        if self.post_type == "post":
            term_rel = f"{self.server.settings.api_root_rel}term"
            for taxonomy, term_base in (("category", "categories"), ("post_tag", "tags")):
                response.add_link(
                    term_rel,
                    rest(f"/{NAMESPACE}/{term_base}?post={post.id}"),
                    {"taxonomy": taxonomy, "embeddable": True},
                )
        return response

    # ------------------------------------------------------------------ writing
    def prepare_for_database(self, request: RestRequest, post: Post | None) -> dict[str, Any]:
        """The columns a create or update of ``post`` (``None``: a new one) asks for
        (WordPress's ``prepare_item_for_database``); the autosaves share it.

        Raises:
            RestError: 400 for a bad date, term or parent.
        """
        return self._fields(request, post)

    def _fields(self, request: RestRequest, post: Post | None) -> dict[str, Any]:
        """The columns a create or update request sets (``post`` is the post updated)."""
        fields = _scalar_fields(request, with_sticky=self.post_type == "post")
        fields.update(date_field(request, self.content))
        if self.post_type == "post":
            term_ids = self._term_ids(request, post)
            if term_ids is not None:
                fields["term_ids"] = term_ids
        if self.post_type == "page" and fields.get("parent"):
            parent = self.content.get_post(int(fields["parent"]))
            if (
                parent is None
                or parent.type != "page"
                or (post is not None and parent.id == post.id)
            ):
                raise RestError("rest_post_invalid_id", "Invalid post parent ID.", {"status": 400})
        return fields

    def _term_ids(self, request: RestRequest, post: Post | None) -> list[int] | None:
        """The post's terms after ``categories`` / ``tags`` (a taxonomy not given keeps the
        post's current terms); ``None`` when neither is given.

        Raises:
            RestError: 400 ``rest_invalid_term_id`` for a term of the wrong taxonomy.
        """
        given = {name: request.get_param(name) for name in ("categories", "tags")}
        if all(value is None for value in given.values()):
            return None
        current = self.content.get_terms(post.term_ids) if post is not None else {}
        term_ids: list[int] = []
        for name, taxonomy in _TERM_PARAMS:
            if given[name] is not None:
                term_ids += list(int_list(given[name]))
            else:
                term_ids += [t.id for t in current.values() if t.taxonomy == taxonomy]
        wrong = [
            term
            for name, taxonomy in _TERM_PARAMS
            for term in self.content.get_terms(int_list(given[name])).values()
            if term.taxonomy != taxonomy
        ]
        if wrong:
            raise RestError("rest_invalid_term_id", "Invalid term ID.", {"status": 400})
        return term_ids

    def create_item(self, request: RestRequest) -> RestResponse:
        """Create a post (201, ``Location`` of the new post)."""
        fields = self._fields(request, None)
        editor = int(getattr(request.user, "id", 0))
        fields.setdefault("author", editor)
        post = self.content.create_post(type=self.post_type, editor=editor, **fields)
        return created(self.server, self.prepare(post, request), f"/{self.rest_base}/{post.id}")

    def update_item(self, request: RestRequest) -> RestResponse:
        """Update a post."""
        post = self._post(request)
        fields = self._fields(request, post)
        editor = int(getattr(request.user, "id", 0))
        return self.prepare(self.content.update_post(post.id, editor=editor, **fields), request)

    def delete_item(self, request: RestRequest) -> RestResponse:
        """Trash a post, or delete it for good with ``force``."""
        post = self._post(request)
        request.set_param("context", "edit")
        if request.get_param("force"):
            answer = deleted(self.server, self.prepare(post, request))
            self.content.delete_post(post.id, force=True)
            return answer
        self.content.delete_post(post.id)
        trashed = self.content.get_post(post.id)
        return self.prepare(trashed if trashed is not None else post, request)


_PASSWORD_ARG: Final = {
    "description": "The password for the post if it is password protected.",
    "type": "string",
}
"""The item GET's ``password`` argument (WordPress's)."""


def _same_password(expected: str, given: str) -> bool:
    """Whether ``given`` is the post's password (compared in constant time)."""
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))


_TERM_PARAMS: Final = (("categories", "category"), ("tags", "post_tag"))
"""The term arguments of a post and the taxonomy of each."""


def _scalar_fields(request: RestRequest, *, with_sticky: bool) -> dict[str, Any]:
    """The text, number and flag columns given in ``request`` (rendered-or-raw text objects
    give their ``raw``; values of the wrong type are left out)."""
    fields: dict[str, Any] = {}
    for name in ("title", "content", "excerpt"):
        text = raw_text(request.get_param(name))
        if text is not None:
            fields[name] = text
    for name in ("slug", "status", "password", "comment_status", "ping_status"):
        value = request.get_param(name)
        if isinstance(value, str):
            fields[name] = value
    numbers = ("author", "parent", "menu_order", "featured_media")
    fields.update(int_columns(request, ((name, name) for name in numbers)))
    if with_sticky and isinstance(request.get_param("sticky"), bool):
        fields["sticky"] = request.get_param("sticky")
    return fields
