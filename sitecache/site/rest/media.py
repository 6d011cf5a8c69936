"""``site/v2/media``: the attachments controller (WordPress's shapes and error codes).

A file is uploaded as the ``file`` part of a ``multipart/form-data`` body (other parts and the
query give the fields), or as the raw body with ``Content-Type`` and ``Content-Disposition:
attachment; filename="..."``. Uploading needs ``upload_files`` (and the right to edit the
post given as ``post``); reading an attachment is public when it has no parent or a published
one; changing needs ``edit_posts`` (``edit_others_posts`` for someone else's); deleting needs
``force`` (attachments have no trash: ``rest_trash_not_supported``) and ``delete_posts``.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Final

from werkzeug.http import parse_options_header

from sitecache.errors import RestError
from sitecache.rest import RestRequest, RestResponse, RestServer
from sitecache.rest.uploads import UploadedFile
from sitecache.site.content import ContentService
from sitecache.site.media_library import Attachment, MediaLibrary
from sitecache.site.models import Post
from sitecache.site.render import paragraphs
from sitecache.site.rest.base import (
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
    require_force,
    require_found,
)
from sitecache.site.rest.media_schema import ATTACHMENT_STATUSES, media_schema
from sitecache.site.rest.post_types import (
    add_post_links,
    check_statuses,
    paginated_posts,
    post_collection_params,
    post_fields,
    post_query,
    requested_statuses,
    title_field,
)
from sitecache.site.upload_types import FILE_TYPES

__all__ = ["MediaController"]

logger = logging.getLogger(__name__)

_ORDERBY: Final = ["author", "date", "id", "include", "modified", "parent", "slug", "title"]
_MEDIA_CLASSES: Final = ["image", "video", "text", "application", "audio"]
_TEXT_FIELDS: Final = (("title", "title"), ("caption", "excerpt"), ("description", "content"))
"""Text arguments (rendered-or-raw) and the post columns they set."""
_BAD_DISPOSITION: Final = (
    "Invalid Content-Disposition supplied. Content-Disposition needs to be formatted as"
    ' `attachment; filename="image.png"` or similar.'
)


class MediaController(CollectionController):
    """The ``/media`` routes.

    Args:
        content: the content service.
        library: the attachments and their files.
    """

    rest_base = "media"

    def __init__(self, content: ContentService, library: MediaLibrary) -> None:
        self.content = content
        self.library = library
        self.schema = media_schema()

    # ------------------------------------------------------------------ registration
    def collection_params(self) -> dict[str, Any]:
        """The collection's query arguments."""
        params = post_collection_params(
            orderby=_ORDERBY,
            statuses=list(ATTACHMENT_STATUSES),
            default_status="inherit",
            date_words="ISO8601 compliant",
            filters={
                "parent": id_list_param("Limit result set to items with particular parent IDs."),
                "parent_exclude": id_list_param(
                    "Limit result set to all items except those of a particular parent ID."
                ),
            },
        )
        params.update(
            {
                "media_type": {
                    "default": None,
                    "description": "Limit result set to attachments of a particular media type"
                    " or media types.",
                    "type": "array",
                    "items": {"type": "string", "enum": _MEDIA_CLASSES},
                },
                "mime_type": {
                    "default": None,
                    "description": "Limit result set to attachments of a particular MIME type"
                    " or MIME types.",
                    "type": "array",
                    "items": {"type": "string"},
                },
            }
        )
        return params

    def register(self, server: RestServer) -> None:
        """Register the collection and item routes (``rest_api_init``)."""
        self.register_collection(server, CrudPermissions.of(self), item_noun="attachment")

    # ------------------------------------------------------------------ permissions
    def _attachment(self, request: RestRequest) -> Attachment:
        return require_found(
            self.library.get(id_param(request)), "rest_post_invalid_id", "Invalid post ID."
        )

    def _can_edit_post(self, request: RestRequest, post: Post) -> bool:
        """``edit_post`` of a post, page or attachment."""
        user = request.user
        edit, others = (
            ("edit_pages", "edit_others_pages")
            if post.type == "page"
            else ("edit_posts", "edit_others_posts")
        )
        if not user.can(edit):
            return False
        return post.author == getattr(user, "id", 0) or bool(user.can(others))

    def can_read(self, request: RestRequest, post: Post) -> bool:
        """Whether the caller may see an attachment: an ``inherit`` one without a parent or
        whose parent is published without a password, or one the caller may edit."""
        if post.status == "inherit":
            if not post.parent:
                return True
            parent = self.content.get_post(post.parent)
            if parent is None or parent.is_public:
                return True
        if post.status == "private" and request.user.can("read_private_posts"):
            return True
        return self._can_edit_post(request, post)

    def get_items_permissions_check(self, request: RestRequest) -> bool:
        """Anybody may list; ``context=edit`` needs ``edit_posts``."""
        edit_context_check(request, "edit_posts")
        return True

    def get_item_permissions_check(self, request: RestRequest) -> bool:
        """A readable attachment; ``context=edit`` needs the right to edit it."""
        found = self._attachment(request)
        if request.get_param("context") == "edit" and not self._can_edit_post(request, found.post):
            raise denied(
                request, "rest_forbidden_context", "Sorry, you are not allowed to edit this post."
            )
        if not self.can_read(request, found.post):
            raise denied(request, "rest_forbidden", "Sorry, you are not allowed to do that.")
        return True

    def create_item_permissions_check(self, request: RestRequest) -> bool:
        """``upload_files``, and the right to edit the post given as ``post``."""
        if request.get_param("id"):
            raise RestError("rest_post_exists", "Cannot create existing post.", {"status": 400})
        if not request.user.can("upload_files"):
            raise denied(
                request,
                "rest_cannot_create",
                "Sorry, you are not allowed to upload media on this site.",
            )
        return self._check_parent(request)

    def _check_parent(self, request: RestRequest) -> bool:
        """The ``author`` and ``post`` a write asks for: someone else as the author needs
        ``edit_others_posts``; the post must be one the caller may edit (not a revision or an
        attachment)."""
        author = request.get_param("author")
        user = request.user
        if (
            isinstance(author, int)
            and author != getattr(user, "id", 0)
            and not user.can("edit_others_posts")
        ):
            raise denied(
                request,
                "rest_cannot_edit_others",
                "Sorry, you are not allowed to update posts as this user.",
            )
        parent_id = request.get_param("post")
        if not isinstance(parent_id, int) or not parent_id:
            return True
        parent = self.content.get_post(parent_id)
        if parent is not None and parent.type in ("revision", "attachment"):
            raise RestError(
                "rest_invalid_param",
                "Invalid parent type.",
                {"status": 400, "params": {"post": "Invalid parent type."}},
            )
        if parent is None or not self._can_edit_post(request, parent):
            raise denied(
                request,
                "rest_cannot_edit",
                "Sorry, you are not allowed to upload media to this post.",
            )
        return True

    def update_item_permissions_check(self, request: RestRequest) -> bool:
        """The right to edit this attachment (and the post given as ``post``)."""
        found = self._attachment(request)
        if not self._can_edit_post(request, found.post):
            raise denied(
                request, "rest_cannot_edit", "Sorry, you are not allowed to edit this post."
            )
        return self._check_parent(request)

    def delete_item_permissions_check(self, request: RestRequest) -> bool:
        """``delete_posts``, plus ``delete_others_posts`` for someone else's attachment."""
        found = self._attachment(request)
        user = request.user
        allowed = bool(user.can("delete_posts"))
        if found.post.author != getattr(user, "id", 0):
            allowed = allowed and bool(user.can("delete_others_posts"))
        if not allowed:
            raise denied(
                request, "rest_cannot_delete", "Sorry, you are not allowed to delete this post."
            )
        return True

    # ------------------------------------------------------------------ reading
    def get_items(self, request: RestRequest) -> RestResponse:
        """One page of attachments, with totals and prev/next links."""
        wanted = requested_statuses(request, "inherit")
        check_statuses(
            request, wanted, {"private": "read_private_posts", "trash": "edit_posts"}.get
        )
        query = replace(
            post_query(request, ("attachment",), wanted),
            parents=int_list(request.get_param("parent")),
            parents_exclude=int_list(request.get_param("parent_exclude")),
            mime_types=tuple(str(s).lower() for s in request.get_param("mime_type") or ()),
            mime_classes=tuple(str(s) for s in request.get_param("media_type") or ()),
            # SECURITY: who cannot edit posts sees only media of published posts.
            public_parents_only=not request.user.can("edit_posts"),
        )
        posts, total = self.content.query_posts(query)
        files = self.library.files_of([post.id for post in posts])
        data = [
            self.server.response_to_data(self.prepare(Attachment(post, files[post.id])), False)
            for post in posts
            if post.id in files
        ]
        return paginated_posts(self.server, request, data, total, query)

    def get_item(self, request: RestRequest) -> RestResponse:
        """One attachment."""
        return self.prepare(self._attachment(request))

    def source_url(self, attachment: Attachment) -> str:
        """The public URL of an attachment's file."""
        return self.server.home_url() + self.library.files.url_path(attachment.file.file)

    def prepare(self, attachment: Attachment) -> RestResponse:
        """An attachment's data (every field; the server filters by context) and links."""
        post, file = attachment.post, attachment.file
        source = self.source_url(attachment)
        file_type = FILE_TYPES.get(post.mime_type)
        is_image = file_type is not None and file_type.media_type == "image"
        details: dict[str, Any] = {"filesize": file.filesize}
        if is_image:
            details = {
                "width": file.width,
                "height": file.height,
                "file": file.file,
                "filesize": file.filesize,
                "sizes": {},
            }
        data = post_fields(
            post, self.content, guid=source, link=source, texts={"title": title_field(post)}
        )
        data.update(
            {
                "alt_text": file.alt_text,
                "caption": {"raw": post.excerpt, "rendered": str(paragraphs(post.excerpt))},
                "description": {"raw": post.content, "rendered": str(paragraphs(post.content))},
                "media_type": "image" if is_image else "file",
                "mime_type": post.mime_type,
                "media_details": details,
                "post": post.parent,
                "source_url": source,
                "missing_image_sizes": [],
                "filename": file.file.rsplit("/", 1)[-1],
                "filesize": file.filesize,
            }
        )
        response = RestResponse(data)
        add_post_links(self.server, response, self.rest_base, post)
        return response

    # ------------------------------------------------------------------ writing
    def _fields(self, request: RestRequest) -> dict[str, Any]:
        """The attachment fields a create or update request sets."""
        fields: dict[str, Any] = {}
        for param, column in _TEXT_FIELDS:
            text = raw_text(request.get_param(param))
            if text is not None:
                fields[column] = text
        alt_text = request.get_param("alt_text")
        if isinstance(alt_text, str):
            fields["alt_text"] = alt_text
        slug = request.get_param("slug")
        if isinstance(slug, str):
            fields["slug"] = slug
        fields.update(int_columns(request, (("post", "parent"), ("author", "author"))))
        fields.update(date_field(request, self.content))
        return fields

    def create_item(self, request: RestRequest) -> RestResponse:
        """Upload a file (201, ``Location`` of the new attachment)."""
        upload = _upload_of(request)
        fields = self._fields(request)
        fields.setdefault("author", int(getattr(request.user, "id", 0)))
        data, declared, name = upload
        try:
            attachment = self.library.upload(data, declared, name, **fields)
        except OSError:
            # The details (paths, errno) go to the log, never to the client.
            logger.exception("an upload could not be written")
            raise RestError(
                "rest_upload_unknown_error", "The file could not be stored.", {"status": 500}
            ) from None
        return created(
            self.server, self.prepare(attachment), f"/{self.rest_base}/{attachment.post.id}"
        )

    def update_item(self, request: RestRequest) -> RestResponse:
        """Change an attachment's title, caption, description, alternative text or post."""
        found = self._attachment(request)
        fields = self._fields(request)
        return self.prepare(self.library.update(found.post.id, **fields))

    def delete_item(self, request: RestRequest) -> RestResponse:
        """Delete an attachment and its file for good (``force`` is required)."""
        found = self._attachment(request)
        require_force(request, "The post does not support trashing. Set 'force=true' to delete.")
        request.set_param("context", "edit")
        answer = deleted(self.server, self.prepare(found))
        self.library.delete(found.post.id)
        return answer


def _upload_of(request: RestRequest) -> tuple[bytes, str, str]:
    """``(bytes, declared type, client file name)`` of the upload a request carries: the
    ``file`` part of a form, else the raw body with its ``Content-Type`` and
    ``Content-Disposition`` (WordPress's ``upload_from_file`` / ``upload_from_data``)."""
    files = request.get_file_params()
    if files:
        part = files.get("file")
        if not isinstance(part, UploadedFile):
            raise RestError("rest_upload_no_data", "No data supplied.", {"status": 400})
        return part.data, part.type, part.name
    body = request.get_body()
    if not body:
        raise RestError("rest_upload_no_data", "No data supplied.", {"status": 400})
    content_type = request.get_header("content_type")
    if not content_type:
        raise RestError("rest_upload_no_content_type", "No Content-Type supplied.", {"status": 400})
    disposition = request.get_header("content_disposition")
    if not disposition:
        raise RestError(
            "rest_upload_no_content_disposition",
            "No Content-Disposition supplied.",
            {"status": 400},
        )
    _, options = parse_options_header(disposition)
    name = options.get("filename", "")
    if not name.strip():
        raise RestError("rest_upload_invalid_disposition", _BAD_DISPOSITION, {"status": 400})
    return body, content_type, name
