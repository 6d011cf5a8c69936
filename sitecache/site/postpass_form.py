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
from dataclasses import dataclass

from werkzeug.wrappers import Request, Response

from sitecache.auth.throttle import LoginThrottle
from sitecache.site.postpass import COOKIE_LIFETIME, postpass_cookie_name, postpass_token
from sitecache.site.site_form import SiteForm
from sitecache.site.targets import REST_BASES, number

__all__ = ["PostPassForm"]


@dataclass(eq=False, repr=False)
class PostPassForm(SiteForm):
    """Takes password form POSTs.

    Args:
        server: the REST server (the home URL).
        content: the content service (the post).
        links: the site's URLs (the post's permalink).
        renderer: renders the page of a refused form.
        secret: the site's secret key (the cookie's keyed hash; no key, no cookie).
        throttle: counts wrong passwords (none: not counted).
    """

    refused_title = "Password not accepted"
    cross_site_message = "Sorry, the password must be sent from this site."

    throttle: LoginThrottle | None = None

    def take(self, request: Request, home: str) -> Response:
        """Check the password of the post the form names; set the cookie and redirect."""
        post = self.content.get_post(number(request.form.get("post_id", "")))
        if (
            post is None
            or post.status != "publish"
            or post.type not in REST_BASES
            or not post.password
            or not self.secret
        ):
            return self.refused("There is no protected post to unlock.", 404)
        account, address = f"postpass:{post.id}", request.remote_addr or ""
        if self.throttle is not None:
            wait = self.throttle.begin_attempt(account, address)
            if wait > 0:
                response = self.refused("Too many wrong passwords. Please try again later.", 429)
                response.headers["Retry-After"] = str(wait)
                return response
        given = request.form.get("post_password", "")
        # SECURITY: constant-time comparison of the password.
        if not hmac.compare_digest(post.password.encode("utf-8"), given.encode("utf-8")):
            return self.refused("Incorrect post password.", 403)
        if self.throttle is not None:
            self.throttle.record_success(account, address)
        return self.redirect_with_cookie(
            self.links.post_url(post),
            303,
            home,
            (postpass_cookie_name(home), postpass_token(self.secret, post.password)),
            COOKIE_LIFETIME,
        )
