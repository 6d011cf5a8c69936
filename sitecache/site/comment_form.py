"""The comment form's POST (``/comment-post``): check, store, set the commenter cookie, redirect.

A form posted from another site's page is refused (403). A new comment is held or approved by
the content store's moderation rules; the answer is a 302 to the comment on its post (a held
one with ``unapproved`` and a keyed ``moderation-hash``, so its author alone sees it) and the
only response of the site that sets a cookie. A refused form answers the status the REST API
would give the same refusal, with a page saying why and the form again, holding what was
typed, and a link back to the post: nothing is stored, and nothing typed is lost.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlencode

from werkzeug.wrappers import Request, Response

from sitecache.domain_errors import DomainError, ForbiddenError, NotFoundError, OutageError
from sitecache.site.commenting import (
    COOKIE_LIFETIME,
    comment_author_cookie_name,
    cookie_value,
    moderation_hash,
    parse_submission,
)
from sitecache.site.models import PUBLIC_STATUSES, Comment, Post
from sitecache.site.postpass import is_unlocked
from sitecache.site.site_form import NO_STORE, SiteForm
from sitecache.site.targets import REST_BASES, number
from sitecache.site.views import COMMENT_POST_PATH

__all__ = ["CommentForm"]

#: The comment form's fields a refusal shows again as they were typed.
_TYPED_FIELDS: Final = ("comment", "author", "email", "url", "comment_post_ID", "comment_parent")


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


class CommentForm(SiteForm):
    """Takes comment form POSTs.

    Args:
        server: the REST server (the home URL; the status each refusal answers with).
        content: the content service.
        links: the site's URLs (the post's permalink).
        renderer: renders the page of a refused form.
        secret: the key of the moderation hashes and of the cookies that unlock protected posts.
    """

    refused_title = "Comment not posted"
    cross_site_message = "Sorry, comments must be posted from this site."
    not_allowed_cache_control = ""

    def take(self, request: Request, home: str) -> Response:
        """Store the comment; set the commenter cookie and redirect to it on its post."""
        try:
            post, comment = self._store(request)
        except OutageError:
            raise  # the database failed, not the form: the edge answers 503/507
        except DomainError as error:
            # The status the REST API would answer this refusal with.
            status = self.server.error_handlers.to_rest_error(error).status
            return self.refused_keeping_text(request, error.message, status)
        location = self.links.post_url(post)
        if comment.status == "hold":
            query = urlencode(
                {"unapproved": comment.id, "moderation-hash": moderation_hash(self.secret, comment)}
            )
            location += f"?{query}"
        return self.redirect_with_cookie(
            f"{location}#comment-{comment.id}",
            302,
            home,
            (comment_author_cookie_name(home), cookie_value(comment.author_name)),
            COOKIE_LIFETIME,
        )

    def refused_keeping_text(self, request: Request, message: str, status: int) -> Response:
        """The page of a refused comment, ``status``: why, and the comment form again with
        what was typed (the text is never lost), posting to the same place, with a link back
        to the post; without a post to go back to, the text alone, to copy."""
        typed = {name: _text(request.form.get(name)) for name in _TYPED_FIELDS}
        post = self.content.get_post(number(typed["comment_post_ID"]))
        shown = post is not None and post.is_published and post.type in REST_BASES
        body = self.renderer.render(
            "comment_refused.html",
            title=self.refused_title,
            message=message,
            typed=typed,
            post_url=self.links.post_url(post) if shown and post is not None else "",
            post_title=post.title if shown and post is not None else "",
            comment_action=self.links.url(COMMENT_POST_PATH),
        )
        response = Response(body, status=status, mimetype="text/html")
        response.headers["Cache-Control"] = NO_STORE
        return response

    def _store(self, request: Request) -> tuple[Post, Comment]:
        """The post commented on and the comment stored.

        Raises:
            DomainError: the form is invalid, the post is not published, is protected and not
                unlocked by this visitor, or its comments are closed.
        """
        submission = parse_submission(request.form.to_dict(flat=True))
        post = self.content.get_post(submission.post_id)
        if post is None or post.status not in PUBLIC_STATUSES or post.type not in REST_BASES:
            raise NotFoundError("comment_id_not_found", "The post does not exist.")
        # A protected post takes comments only from a visitor who unlocked it (its cookie).
        if post.password and not is_unlocked(
            self.secret, post, request.cookies, self.server.home_url()
        ):
            raise ForbiddenError(
                "comment_on_password_protected",
                "Sorry, this post is password protected: enter its password to comment.",
            )
        if post.comment_status != "open":
            raise ForbiddenError("comment_closed", "Sorry, comments are closed for this item.")
        comment = self.content.add_comment(
            post_id=post.id,
            parent=submission.parent,
            author_name=submission.author_name,
            author_email=submission.author_email,
            author_url=submission.author_url,
            author_ip=request.remote_addr or "",
            author_agent=(request.user_agent.string or "")[:254],
            content=submission.content,
        )
        return post, comment
