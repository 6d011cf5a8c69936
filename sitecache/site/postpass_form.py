"""The password form's POST (``/postpass``): check the password, set the cookie, redirect.

The form names the post (``post_id``) and the password (``post_password``). A right password
answers 303 to the post's own permalink (never to an address the form names: no open
redirect) with the ``sitecache_postpass_<hash>`` cookie (`sitecache.site.postpass`): HttpOnly,
SameSite=Lax, Secure on an https site, for ten days. A wrong one answers 403 "Incorrect post
password."; wrong guesses are counted by the login throttle (per post and client address) and,
past its limits, answered 429 with ``Retry-After``. A form posted from another site's page is
refused (403). Every answer is ``no-store, private``.
"""

from __future__ import annotations

import hmac

from werkzeug.wrappers import Request, Response

from sitecache.auth.origin import request_cross_site_reason
from sitecache.auth.throttle import LoginThrottle
from sitecache.rest.plain_responses import method_not_allowed
from sitecache.rest.server import RestServer
from sitecache.site.content import ContentService
from sitecache.site.links import SiteLinks
from sitecache.site.page import PageRenderer, redirect
from sitecache.site.postpass import COOKIE_LIFETIME, postpass_cookie_name, postpass_token
from sitecache.site.targets import REST_BASES, number

__all__ = ["PostPassForm"]

_NO_STORE = "no-store, private"


class PostPassForm:
    """Takes password form POSTs.

    Args:
        server: the REST server (the home URL).
        content: the content service (the post).
        links: the site's URLs (the post's permalink).
        renderer: renders the page of a refused form.
        secret: the site's secret key (the cookie's keyed hash; no key, no cookie).
        throttle: counts wrong passwords (none: not counted).
    """

    def __init__(
        self,
        server: RestServer,
        content: ContentService,
        links: SiteLinks,
        renderer: PageRenderer,
        secret: bytes,
        throttle: LoginThrottle | None = None,
    ) -> None:
        self.server = server
        self.content = content
        self.links = links
        self.renderer = renderer
        self.secret = secret
        self.throttle = throttle

    def __call__(self, request: Request) -> Response:
        """Answer a request to the form's URL (POST only)."""
        if request.method != "POST":
            return method_not_allowed("POST", _NO_STORE)
        home = self.server.home_url()
        # SECURITY: a form posted from another site's page is refused (CSRF).
        if request_cross_site_reason(request, home) is not None:
            return self._refused("Sorry, the password must be sent from this site.", 403)
        post = self.content.get_post(number(request.form.get("post_id", "")))
        if (
            post is None
            or post.status != "publish"
            or post.type not in REST_BASES
            or not post.password
            or not self.secret
        ):
            return self._refused("There is no protected post to unlock.", 404)
        account, address = f"postpass:{post.id}", request.remote_addr or ""
        if self.throttle is not None:
            wait = self.throttle.begin_attempt(account, address)
            if wait > 0:
                response = self._refused("Too many wrong passwords. Please try again later.", 429)
                response.headers["Retry-After"] = str(wait)
                return response
        given = request.form.get("post_password", "")
        # SECURITY: constant-time comparison of the password.
        if not hmac.compare_digest(post.password.encode("utf-8"), given.encode("utf-8")):
            return self._refused("Incorrect post password.", 403)
        if self.throttle is not None:
            self.throttle.record_success(account, address)
        response = redirect(self.links.post_url(post), status=303)
        response.headers["Cache-Control"] = _NO_STORE
        response.set_cookie(
            postpass_cookie_name(home),
            postpass_token(self.secret, post.password),
            max_age=COOKIE_LIFETIME,
            path="/",
            secure=home.startswith("https://"),
            httponly=True,
            samesite="Lax",
        )
        return response

    def _refused(self, message: str, status: int) -> Response:
        response = Response(
            self.renderer.render("message.html", title="Password not accepted", message=message),
            status=status,
            mimetype="text/html",
        )
        response.headers["Cache-Control"] = _NO_STORE
        return response
