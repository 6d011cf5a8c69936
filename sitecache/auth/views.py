"""The HTML side of authentication: log in and out, the REST nonce, the account page and the
application-password authorization screen.

Every page here is personal or a form: it is sent with ``Cache-Control: no-store, private``,
may not be framed (``X-Frame-Options: DENY``) and keeps its URL out of referrers. Redirect
targets are limited to this site.

The pages build their links, form actions and redirects from the request's mount point
(werkzeug's ``script_root``, from ``SCRIPT_NAME``): served at the root they point at ``/login``,
mounted under ``/cache-admin`` (werkzeug's ``DispatcherMiddleware``) at ``/cache-admin/login``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import quote, urlencode, urlsplit

from jinja2 import Environment
from werkzeug.wrappers import Request, Response

from sitecache.auth.app_passwords import ApplicationPassword
from sitecache.auth.authenticators import REST_NONCE_ACTION
from sitecache.auth.db import DatabaseError
from sitecache.auth.origin import request_cross_site_reason
from sitecache.auth.redirect_urls import is_loopback_host, redirect_url_problem, with_query
from sitecache.auth.roles import SiteUser
from sitecache.auth.service import AUTHORIZE_PATH, AuthService
from sitecache.auth.sessions import COOKIE_NAME, Session
from sitecache.auth.throttle import login_account, wait_message
from sitecache.domain_errors import DomainError, OutageError
from sitecache.rest import RestServer
from sitecache.rest.internal_call import call_rest
from sitecache.rest.plain_responses import method_not_allowed
from sitecache.rest.urls import mount_point
from sitecache.schema import is_uuid
from sitecache.schema.dates import format_timestamp

__all__ = [
    "ADMIN_PATH",
    "LOGIN_PATH",
    "LOGOUT_PATH",
    "NONCE_PATH",
    "AuthViews",
    "mounted",
    "safe_redirect",
]

logger = logging.getLogger("sitecache.auth")

LOGIN_PATH: Final = "/login"
LOGOUT_PATH: Final = "/logout"
ADMIN_PATH: Final = "/site-admin/"
NONCE_PATH: Final = "/site-admin/rest-nonce"
COPY_SCRIPT_PATH: Final = "/site-admin/copy.js"
#: The account page's copy button: shown only when scripts run, copies the new password.
COPY_SCRIPT: Final = """\
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  var field = document.getElementById(button.getAttribute("data-copy"));
  if (!field) { return; }
  button.hidden = false;
  button.addEventListener("click", function () {
    field.select();
    var done = function () { button.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(done, function () {
        document.execCommand("copy"); done();
      });
    } else {
      document.execCommand("copy"); done();
    }
  });
});
"""
LOGOUT_ACTION: Final = "log-out"
AUTHORIZE_ACTION: Final = "authorize_application_password"
BAD_LOGIN: Final = "The username or password you entered is incorrect."
_PRIVATE_HEADERS: Final = {
    "Cache-Control": "no-store, private",
    "X-Frame-Options": "DENY",
    # No plugins, no frames, no inline or foreign script (only the site's own copy button
    # script, `COPY_SCRIPT_PATH`); the site's style sheet and style attributes are allowed.
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self'; "
        "base-uri 'none'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "same-origin",
}
_TRUE_VALUES: Final = frozenset({"1", "on", "true", "yes", "forever"})

View = Callable[[Request], Response]


def mounted(request: Request, path: str) -> str:
    """``path`` (a path of this application, ``/login``) as the browser reaches it: under the
    request's mount point (``script_root``; ``""`` at the root), percent-escaped."""
    return mount_point(request.environ) + path


def safe_redirect(target: object, home_url: str, default: str = ADMIN_PATH) -> str:
    """``target`` when it stays on this site (a local path or this host's URL), else ``default``.

    A mounted application passes its mounted account page as ``default`` (`mounted`).
    """
    if not isinstance(target, str) or not target or any(c in target for c in "\r\n\\\0"):
        return default
    parts = urlsplit(target)
    if not parts.scheme and not parts.netloc:
        return target if target.startswith("/") and not target.startswith("//") else default
    home = urlsplit(home_url)
    if parts.scheme in ("http", "https") and parts.netloc.lower() == home.netloc.lower():
        return target
    return default


def _path_and_query(request: Request) -> str:
    """The request's full path (mount point included) and query string for a redirect back to
    it (werkzeug's ``full_path`` fails on a query string that is not UTF-8; its bytes are
    escaped here)."""
    query = quote(request.query_string, safe="/?&=%:@!$'()*+,;~-._")
    path = mounted(request, request.path)
    return f"{path}?{query}" if query else path


class AuthViews:
    """The pages of the auth layer.

    Args:
        auth: the site's auth service.
        server: the REST server (site name, URLs).
        templates: the Jinja2 environment.
    """

    def __init__(self, auth: AuthService, server: RestServer, templates: Environment) -> None:
        self.auth = auth
        self.server = server
        self.templates = templates

    def routes(self) -> dict[str, View]:
        """Path → view (each behind the ``force_ssl_admin`` rule)."""
        views: dict[str, View] = {
            LOGIN_PATH: self.login,
            LOGOUT_PATH: self.logout,
            NONCE_PATH: self.rest_nonce,
            COPY_SCRIPT_PATH: self.copy_script,
            "/site-admin": self.account,
            ADMIN_PATH: self.account,
            AUTHORIZE_PATH: self.authorize_application,
        }
        return {
            path: self._from_this_site(self._over_tls_when_forced(view))
            for path, view in views.items()
        }

    def _from_this_site(self, view: View) -> View:
        def guarded(request: Request) -> Response:
            if request.method == "POST":
                # SECURITY: every POST here changes state (a session, an application password):
                # one posted from another site's page is refused before anything is read or
                # counted (login CSRF; `sitecache.auth.origin`).
                reason = request_cross_site_reason(request, self.server.home_url())
                if reason is not None:
                    logger.warning("Refused a cross-site POST %r: %s", request.path, reason)
                    return self.render(
                        request,
                        "message.html",
                        status=403,
                        title="Request refused",
                        message="Sorry, this form must be submitted from this site's own pages.",
                    )
            return view(request)

        return guarded

    def _over_tls_when_forced(self, view: View) -> View:
        def guarded(request: Request) -> Response:
            if self.server.settings.force_ssl_admin and request.scheme != "https":
                # SECURITY: credentials and sessions never travel over plain http then; 308
                # keeps the method, so a form posted over http is re-posted over https.
                return self.redirect(f"https://{request.host}{_path_and_query(request)}", 308)
            return view(request)

        return guarded

    def _cookie_secure(self, request: Request) -> bool:
        """Whether the session cookie is ``Secure``: over TLS, or when the site is https-only."""
        settings = self.server.settings
        return (
            request.scheme == "https"
            or settings.force_ssl_admin
            or (settings.site_url or "").startswith("https://")
        )

    # ------------------------------------------------------------------ helpers
    def render(
        self, request: Request, template: str, status: int = 200, **context: Any
    ) -> Response:
        """``template`` as a private page, its login, logout and account links under
        ``request``'s mount point."""
        settings = self.server.settings
        body = self.templates.get_template(template).render(
            site_name=settings.site_name,
            home_url=self.server.home_url(),
            login_path=mounted(request, LOGIN_PATH),
            logout_path=mounted(request, LOGOUT_PATH),
            admin_path=mounted(request, ADMIN_PATH),
            **context,
        )
        return self._private(Response(body, status=status, mimetype="text/html"))

    @staticmethod
    def _private(response: Response) -> Response:
        for name, value in _PRIVATE_HEADERS.items():
            response.headers[name] = value
        return response

    def redirect(self, location: str, status: int = 303) -> Response:
        response = Response("", status=status)
        response.headers["Location"] = location
        return self._private(response)

    def _login_redirect(self, request: Request) -> Response:
        back = _path_and_query(request)
        return self.redirect(f"{mounted(request, LOGIN_PATH)}?{urlencode({'redirect_to': back})}")

    def _session(self, request: Request) -> Session | None:
        return self.auth.session_from_environ(request.environ)

    def _nonce(self, action: str, session: Session) -> str:
        return self.auth.nonces.create(action, session.user.id, session.token)

    def _nonce_valid(self, request: Request, action: str, session: Session) -> bool:
        nonce = request.form.get("_sitenonce") or request.args.get("_sitenonce") or ""
        return bool(self.auth.nonces.verify(nonce, action, session.user.id, session.token))

    @staticmethod
    def _method_not_allowed(allowed: str) -> Response:
        return method_not_allowed(allowed)

    # ------------------------------------------------------------------ log in and out
    def login(self, request: Request) -> Response:
        """``GET /login`` shows the form; ``POST /login`` starts a session."""
        home = self.server.home_url()
        target = safe_redirect(
            request.values.get("redirect_to"), home, default=mounted(request, ADMIN_PATH)
        )
        if request.method not in ("GET", "HEAD", "POST"):
            return self._method_not_allowed("GET, HEAD, POST")
        if request.method != "POST":
            if self._session(request) is not None:
                return self.redirect(target)
            notice = "You are now logged out." if request.args.get("loggedout") else ""
            return self.render(
                request, "login.html", redirect_to=target, notice=notice, error="", log=""
            )

        login = (request.form.get("log") or "").strip()
        password = request.form.get("pwd") or ""
        remember = (request.form.get("remember") or "").lower() in _TRUE_VALUES
        ip = str(request.environ.get("REMOTE_ADDR") or "")
        user = self.auth.users.find(login) if login else None
        # The account's failures count together whether it is named by login or e-mail.
        account = login_account(user, login)
        # Checked and counted in one step, so concurrent guesses cannot slip past the limit.
        wait = self.auth.throttle.begin_attempt(account, ip)
        if wait > 0:
            response = self.render(
                request,
                "login.html",
                status=429,
                redirect_to=target,
                notice="",
                log=login,
                error=wait_message(wait),
            )
            response.headers["Retry-After"] = str(wait)
            return response
        if user is None:
            self.auth.users.hasher.burn(password)  # SECURITY: same time as a wrong password
            verified = False
        else:
            verified = self.auth.users.check_password(user, password)
        if user is None or not verified:
            # The attempt was counted as a failure already.
            return self.render(
                request, "login.html", redirect_to=target, notice="", log=login, error=BAD_LOGIN
            )
        self.auth.throttle.record_success(account, ip)
        previous = self._session(request)
        if previous is not None:
            self.auth.sessions.revoke(previous.token)
        session = self.auth.sessions.create(
            user, remember=remember, ip=ip, user_agent=request.headers.get("User-Agent", "")
        )
        response = self.redirect(target)
        response.set_cookie(
            COOKIE_NAME,
            session.token,
            max_age=self.auth.sessions.cookie_max_age(session),
            path="/",
            secure=self._cookie_secure(request),
            httponly=True,
            samesite="Lax",
        )
        return response

    def logout(self, request: Request) -> Response:
        """``GET /logout`` asks to confirm; ``POST /logout`` (with its nonce) ends the session."""
        session = self._session(request)
        if request.method not in ("GET", "HEAD", "POST"):
            return self._method_not_allowed("GET, HEAD, POST")
        if session is None:
            return self.redirect(mounted(request, LOGIN_PATH))
        if request.method != "POST":
            return self.render(
                request, "logout.html", user=session.user, nonce=self._nonce(LOGOUT_ACTION, session)
            )
        if not self._nonce_valid(request, LOGOUT_ACTION, session):
            return self.render(
                request,
                "message.html",
                status=403,
                title="Link expired",
                message="The link you followed has expired. Please try again.",
            )
        self.auth.sessions.revoke(session.token)
        response = self.redirect(f"{mounted(request, LOGIN_PATH)}?loggedout=true")
        response.delete_cookie(
            COOKIE_NAME,
            path="/",
            secure=self._cookie_secure(request),
            httponly=True,
            samesite="Lax",
        )
        return response

    # ------------------------------------------------------------------ nonce and account
    def rest_nonce(self, request: Request) -> Response:
        """``GET /site-admin/rest-nonce``: a fresh ``site_rest`` nonce, 403 when logged out."""
        if request.method not in ("GET", "HEAD"):
            return self._method_not_allowed("GET, HEAD")
        session = self._session(request)
        if session is None:
            return self._private(
                Response("You are not logged in.\n", status=403, mimetype="text/plain")
            )
        nonce = self._nonce(REST_NONCE_ACTION, session)
        return self._private(Response(nonce, mimetype="text/plain"))

    def copy_script(self, request: Request) -> Response:
        """``GET /site-admin/copy.js``: the account page's copy button (a fixed script)."""
        if request.method not in ("GET", "HEAD"):
            return self._method_not_allowed("GET, HEAD")
        response = Response(COPY_SCRIPT, mimetype="text/javascript")
        response.headers["Cache-Control"] = "no-cache"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response

    def account(self, request: Request) -> Response:
        """``GET /site-admin/``: who is logged in, their application passwords, log out.

        ``POST`` (with the ``site_rest`` nonce) creates or revokes an application password
        through the REST routes ``site/v2/users/me/application-passwords`` and, when that
        worked, redirects back here (POST-redirect-GET: reloading repeats nothing) to a page
        that shows what was done, and a new password, once (`sitecache.auth.flash`). A refused
        form is shown again with its reasons.
        """
        if request.method not in ("GET", "HEAD", "POST"):
            return self._method_not_allowed("GET, HEAD, POST")
        session = self._session(request)
        if session is None:
            return self._login_redirect(request)
        created: dict[str, str] = {}
        details: list[str] = []
        status, notice, error = 200, "", ""
        if request.method == "POST":
            status, notice, error, details, created = self._account_action(request)
            if not error:
                done = self._after_account_action(request, session, notice, created)
                if done is not None:
                    return done
        else:
            message = self._take_flash(session, request.args.get("done", ""))
            notice = str(message.get("notice") or "")
            kept = message.get("created")
            if isinstance(kept, dict):
                created = {str(key): str(value) for key, value in kept.items()}
        passwords = self.auth.app_passwords.list(session.user)
        return self.render(
            request,
            "site_admin.html",
            status=status,
            user=session.user,
            passwords=[self._describe(password) for password in passwords],
            logout_nonce=self._nonce(LOGOUT_ACTION, session),
            rest_nonce=self._nonce(REST_NONCE_ACTION, session),
            nonce_path=mounted(request, NONCE_PATH),
            copy_script_path=mounted(request, COPY_SCRIPT_PATH),
            dashboard_path=mounted(request, "/site-admin/cache"),
            api_root=self.server.rest_url("/"),  # under the mount point too
            notice=notice,
            error=error,
            error_details=details,
            created=created,
        )

    def _after_account_action(
        self, request: Request, session: Session, notice: str, created: Mapping[str, str]
    ) -> Response | None:
        """The 303 back to the account page, its message kept for it (``None`` when the
        message cannot be kept: the page is then shown as the POST's answer)."""
        message: dict[str, Any] = {"notice": notice}
        if created:
            # SECURITY: sealed with a key only this session's cookie gives (`flash.seal`), kept
            # until the redirect reads it (at most `flash.LIFETIME` seconds), then gone.
            message["created"] = dict(created)
        try:
            reference = self.auth.flash.put(session, message)
        except DatabaseError:
            logger.warning("the account page's message could not be kept", exc_info=True)
            return None
        return self.redirect(f"{mounted(request, ADMIN_PATH)}?{urlencode({'done': reference})}")

    def _take_flash(self, session: Session, reference: str) -> dict[str, Any]:
        if not reference:
            return {}
        try:
            return self.auth.flash.take(session, reference) or {}
        except DatabaseError:
            logger.warning("the account page's message could not be read", exc_info=True)
            return {}

    def _account_action(self, request: Request) -> tuple[int, str, str, list[str], dict[str, str]]:
        """Run the account form's action through the REST API: (status, notice, error, the
        error's per-field reasons, the new password's name and secret when one was created).

        A refusal shows what the REST API or the command line would say: the summary, worded
        for a form (`RestAnswer.form_message`), and each field's reason under it."""
        nonce = request.form.get("_sitenonce", "")
        base = "/site/v2/users/me/application-passwords"
        action = request.form.get("action", "")
        if action == "create_app_password":
            name = request.form.get("name", "").strip()
            answer = call_rest(self.server, request, "POST", base, nonce, {"name": name})
            if answer.ok and isinstance(answer.data, dict):
                data = answer.data
                return (
                    201,
                    f"Created {data.get('name', name)}.",
                    "",
                    [],
                    {
                        "name": str(data.get("name", name)),
                        "password": str(data.get("password", "")),
                    },
                )
        elif action == "revoke_app_password":
            uuid = request.form.get("uuid", "")
            if not is_uuid(uuid):
                return 400, "", "That application password does not exist.", [], {}
            answer = call_rest(self.server, request, "DELETE", f"{base}/{uuid}", nonce)
            if answer.ok:
                return 200, "Application password revoked.", "", [], {}
        else:
            return 400, "", "The form asked for nothing known.", [], {}
        return answer.status, "", answer.form_message, list(answer.details.values()), {}

    @staticmethod
    def _describe(password: ApplicationPassword) -> dict[str, str]:
        return {
            "uuid": password.uuid,
            "name": password.name,
            "created": format_timestamp(password.created) + " UTC",
            "last_used": (
                format_timestamp(password.last_used) + " UTC" if password.last_used else "never"
            ),
            "last_ip": password.last_ip or "",
        }

    # ------------------------------------------------------------------ authorization screen
    def _authorize_params(self, values: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
        params = {
            key: str(values.get(key) or "").strip()
            for key in ("app_name", "app_id", "success_url", "reject_url")
        }
        problems = []
        if params["app_id"] and not is_uuid(params["app_id"]):
            problems.append("The application ID must be a UUID.")
        for key, label in (("success_url", "success URL"), ("reject_url", "reject URL")):
            problem = redirect_url_problem(params[key], is_loopback_host)
            if problem:
                problems.append(f"The {label} is not allowed: {problem}")
        return params, problems

    def authorize_application(self, request: Request) -> Response:
        """The screen where a logged-in user approves (or rejects) an application."""
        if request.method not in ("GET", "HEAD", "POST"):
            return self._method_not_allowed("GET, HEAD, POST")
        session = self._session(request)
        if session is None:
            return self._login_redirect(request)
        if not self.auth.policy.available(request.environ):
            return self.render(
                request,
                "message.html",
                status=501,
                title="Application passwords are not available",
                message="Application passwords are only available over HTTPS.",
            )
        source = request.form if request.method == "POST" else request.args
        params, problems = self._authorize_params(source)
        if problems:
            return self.render(
                request,
                "message.html",
                status=400,
                title="Cannot authorize application",
                problems=problems,
            )
        if request.method != "POST":
            context: dict[str, Any] = {
                **params,
                "user": session.user,
                "nonce": self._nonce(AUTHORIZE_ACTION, session),
            }
            return self.render(request, "authorize_application.html", **context)
        if not self._nonce_valid(request, AUTHORIZE_ACTION, session):
            return self.render(
                request,
                "message.html",
                status=403,
                title="Link expired",
                message="The link you followed has expired. Please try again.",
            )
        if "reject" in request.form:
            if params["reject_url"]:
                return self.redirect(with_query(params["reject_url"], {"success": "false"}))
            return self.redirect(mounted(request, ADMIN_PATH))
        return self._approve(request, session.user, params)

    def _approve(self, request: Request, user: SiteUser, params: dict[str, str]) -> Response:
        name = (request.form.get("new_application_password_name") or params["app_name"]).strip()
        if not name:
            return self.render(
                request,
                "message.html",
                status=400,
                title="Cannot authorize application",
                problems=["The application needs a name."],
            )
        try:
            password, _ = self.auth.app_passwords.create(user, name, params["app_id"])
        except OutageError:
            raise  # the database failed, not the request: the edge answers 503/507
        except DomainError as error:
            return self.render(
                request,
                "message.html", status=409, title="Cannot authorize application",
                problems=[error.message],
            )  # fmt: skip
        if params["success_url"]:
            return self.redirect(
                with_query(
                    params["success_url"],
                    {
                        "site_url": self.server.home_url(),
                        "user_login": user.login,
                        "password": password,
                    },
                )
            )
        return self.render(
            request, "authorize_result.html", user=user, name=name, password=password
        )
