"""The comment form's POST (``/comment-post``): check, store, set the commenter cookie, redirect.

A form posted from another site's page is refused (403). A new comment is held or approved by
the content store's moderation rules; the answer is a 302 to the comment on its post (a held
one with ``unapproved`` and a keyed ``moderation-hash``, so its author alone sees it) and the
only response of the site that sets a cookie. A refused form answers the status the REST API
would give the same refusal, with a page saying why; nothing is stored.
"""

from __future__ import annotations

from urllib.parse import urlencode

from werkzeug.wrappers import Request, Response

from sitecache.auth.origin import request_cross_site_reason
from sitecache.domain_errors import DomainError, ForbiddenError, NotFoundError
from sitecache.rest.plain_responses import method_not_allowed
from sitecache.rest.server import RestServer
from sitecache.site.commenting import (
    COOKIE_LIFETIME,
    comment_author_cookie_name,
    cookie_value,
    moderation_hash,
    parse_submission,
)
from sitecache.site.content import ContentService
from sitecache.site.links import SiteLinks
from sitecache.site.models import PUBLIC_STATUSES, Comment, Post
from sitecache.site.page import PageRenderer, redirect
from sitecache.site.postpass import is_unlocked
from sitecache.site.targets import REST_BASES

__all__ = ["CommentForm"]


class CommentForm:
    """Takes comment form POSTs.

    Args:
        server: the REST server (the home URL; the status each refusal answers with).
        content: the content service.
        links: the site's URLs (the post's permalink).
        renderer: renders the page of a refused form.
        secret: the key of the moderation hashes and of the cookies that unlock protected posts.
    """

    def __init__(
        self,
        server: RestServer,
        content: ContentService,
        links: SiteLinks,
        renderer: PageRenderer,
        secret: bytes,
    ) -> None:
        self.server = server
        self.content = content
        self.links = links
        self.renderer = renderer
        self.secret = secret

    def __call__(self, request: Request) -> Response:
        """Answer a request to the form's URL (POST only)."""
        if request.method != "POST":
            return method_not_allowed("POST")
        home = self.server.home_url()
        # SECURITY: a form posted from another site's page is refused (CSRF), by the same check
        # as the login form's (`sitecache.auth.origin`).
        if request_cross_site_reason(request, home) is not None:
            return self._refused("Sorry, comments must be posted from this site.", 403)
        try:
            post, comment = self._store(request)
        except DomainError as error:
            # The status the REST API would answer this refusal with.
            return self._refused(
                error.message, self.server.error_handlers.to_rest_error(error).status
            )
        location = self.links.post_url(post)
        if comment.status == "hold":
            query = urlencode(
                {"unapproved": comment.id, "moderation-hash": moderation_hash(self.secret, comment)}
            )
            location += f"?{query}"
        response = redirect(f"{location}#comment-{comment.id}", status=302)
        response.headers["Cache-Control"] = "no-store, private"
        response.set_cookie(
            comment_author_cookie_name(home),
            cookie_value(comment.author_name),
            max_age=COOKIE_LIFETIME,
            path="/",
            secure=home.startswith("https://"),
            httponly=True,
            samesite="Lax",
        )
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

    def _refused(self, message: str, status: int) -> Response:
        response = Response(
            self.renderer.render("message.html", title="Comment not posted", message=message),
            status=status,
            mimetype="text/html",
        )
        response.headers["Cache-Control"] = "no-store, private"
        return response
