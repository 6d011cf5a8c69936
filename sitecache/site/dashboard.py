"""The cache dashboard at ``/site-admin/cache`` (administrators only).

Everything it shows and does goes through the ``site-cache/v1`` REST API (`call_rest`): reads
are REST GETs made as the logged-in administrator, and each form (every one carries the
``site_rest`` nonce) becomes the REST request a script would send, so nothing here is a second
code path. Its sections are pages of their own (`TABS`: the overview, contents, preload,
settings, diagnostics, and the glossary of the numbers), server-rendered: everything works
without JavaScript, and the pages carry none.

Forms follow POST-redirect-GET: an action that succeeded answers 303 to its tab, which shows
what was done once (a one-time message kept on the server, `sitecache.auth.flash`), so reloading
the page repeats nothing. A refused form is shown again, 4xx, with an error summary at the top
and each reason beside its field. The actions that cannot be undone (purging everything,
restoring the defaults, turning caching off, cancelling a preload) first answer a page asking
for confirmation (`sitecache.site.dashboard_actions`). While a preload runs, the preload tab's
*watch* view refreshes itself every two seconds (a ``<meta http-equiv=refresh>``). Like every
admin page it is ``no-store, private``: the page cache never stores it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlencode

from jinja2 import Environment
from werkzeug.wrappers import Request, Response

from sitecache.auth import AuthService
from sitecache.auth.authenticators import REST_NONCE_ACTION
from sitecache.auth.db import DatabaseError
from sitecache.auth.origin import request_cross_site_reason
from sitecache.auth.roles import is_site_admin
from sitecache.auth.sessions import Session
from sitecache.auth.views import ADMIN_PATH, LOGIN_PATH, LOGOUT_PATH, mounted
from sitecache.rest.internal_call import RestAnswer, call_rest
from sitecache.rest.plain_responses import method_not_allowed
from sitecache.rest.server import RestServer
from sitecache.site.dashboard_actions import ACTIONS, PURGE_FORM_FIELDS, Done, RestCall
from sitecache.site.dashboard_tabs import (
    contents_tab,
    diagnostics_tab,
    glossary_tab,
    overview_tab,
    preload_tab,
    settings_tab,
)

__all__ = ["DASHBOARD_PATH", "PURGE_FORM_FIELDS", "TABS", "CacheDashboard", "Tab"]

logger = logging.getLogger("sitecache.site")

DASHBOARD_PATH: Final = "/site-admin/cache"
NAMESPACE: Final = "/site-cache/v1"
_HEADERS: Final = {
    "Cache-Control": "no-store, private",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "same-origin",
}


@dataclass(frozen=True)
class Tab:
    """One section of the dashboard: its name, path (under `DASHBOARD_PATH`), title, and
    whether the navigation lists it."""

    name: str
    path: str
    title: str
    listed: bool = True


#: The dashboard's sections, in the navigation's order.
TABS: Final[tuple[Tab, ...]] = (
    Tab("overview", "", "Overview"),
    Tab("contents", "/contents", "Contents"),
    Tab("preload", "/preload", "Preload"),
    Tab("settings", "/settings", "Settings"),
    Tab("diagnostics", "/diagnostics", "Diagnostics"),
    Tab("glossary", "/glossary", "The numbers explained", listed=False),
)
_BY_PATH: Final = {DASHBOARD_PATH + tab.path: tab for tab in TABS}
_BY_NAME: Final = {tab.name: tab for tab in TABS}


class CacheDashboard:
    """The dashboard's views.

    Args:
        auth: the auth service (sessions, nonces, one-time messages).
        server: the REST server the forms are answered by.
        templates: the Jinja2 environment.
        explanations: bypass reason -> a sentence saying why (the cache's own words, passed in
            by the application, since the site never imports the cache).
        debug_log: where the cache's debug log is written ("" when unknown).
    """

    def __init__(
        self,
        auth: AuthService,
        server: RestServer,
        templates: Environment,
        explanations: Mapping[str, str],
        debug_log: str = "",
    ) -> None:
        self.auth = auth
        self.server = server
        self.templates = templates
        self.explanations = dict(explanations)
        self.debug_log = debug_log

    def routes(self) -> dict[str, Callable[[Request], Response]]:
        """Path -> view: each tab, and the overview with a trailing slash too."""
        return {**dict.fromkeys(_BY_PATH, self.view), DASHBOARD_PATH + "/": self.view}

    # ------------------------------------------------------------------ helpers
    def _rest(self, request: Request, nonce: str) -> RestCall:
        def rest(
            method: str, route: str, body: Any = None, query: dict[str, Any] | None = None
        ) -> RestAnswer:
            return call_rest(self.server, request, method, NAMESPACE + route, nonce, body, query)

        return rest

    def _respond(self, body: str, status: int = 200) -> Response:
        response = Response(body, status=status, mimetype="text/html")
        for name, value in _HEADERS.items():
            response.headers[name] = value
        return response

    def _message(self, status: int, title: str, message: str) -> Response:
        body = self.templates.get_template("message.html").render(
            site_name=self.server.settings.site_name,
            home_url=self.server.home_url(),
            title=title,
            message=message,
        )
        return self._respond(body, status)

    @staticmethod
    def _tab_url(request: Request, tab: Tab, query: Mapping[str, str] | None = None) -> str:
        url = mounted(request, DASHBOARD_PATH + tab.path)
        return f"{url}?{urlencode(dict(query))}" if query else url

    # ------------------------------------------------------------------ the view
    def view(self, request: Request) -> Response:
        """``GET`` shows a tab; ``POST`` runs one form's action through the REST API and
        redirects to its tab (or asks first, or shows the form again with its errors)."""
        if request.method not in ("GET", "HEAD", "POST"):
            return method_not_allowed("GET, HEAD, POST")
        session = self.auth.session_from_environ(request.environ)
        if session is None:
            response = self._respond("", 303)
            back = mounted(request, request.path)
            response.headers["Location"] = (
                mounted(request, LOGIN_PATH) + "?" + urlencode({"redirect_to": back})
            )
            return response
        if not is_site_admin(session.user):
            return self._message(
                403, "Not allowed", "Sorry, only site administrators may manage the cache."
            )
        nonce = self.auth.nonces.create(REST_NONCE_ACTION, session.user.id, session.token)
        tab = _BY_PATH.get(request.path.rstrip("/"), TABS[0])
        if request.method != "POST":
            flash = self._take_flash(session, request.args.get("done", ""))
            return self._render(request, session, nonce, tab, flash=flash)
        return self._post(request, session, nonce, tab)

    def _take_flash(self, session: Session, reference: str) -> Mapping[str, Any]:
        if not reference:
            return {}
        try:
            return self.auth.flash.take(session, reference) or {}
        except DatabaseError:
            logger.warning("the dashboard's message could not be read", exc_info=True)
            return {}

    def _post(self, request: Request, session: Session, nonce: str, tab: Tab) -> Response:
        # SECURITY: a form posted from another site's page is refused before anything runs.
        if request_cross_site_reason(request, self.server.home_url()) is not None:
            return self._message(403, "Request refused", "This form must be sent from this site.")
        name = request.form.get("action", "")
        action = ACTIONS.get(name)
        if action is None:
            return self._message(400, "Unknown action", "The form asked for nothing known.")
        # The form's own nonce is what the REST API checks (X-Site-Nonce): a stale or forged
        # one is refused there with 403 rest_cookie_invalid_nonce.
        rest = self._rest(request, request.form.get("_sitenonce", ""))
        home = _BY_NAME[action.tab]
        if action.confirm is not None and request.form.get("confirmed") != "yes":
            question = action.confirm(rest, request.form)
            if question is not None:
                return self._confirm(request, session, nonce, home, question)
        done = action.run(rest, request.form)
        if done.answer.ok:
            return self._after(request, session, nonce, home, done)
        errors = done.answer.details
        return self._render(
            request,
            session,
            nonce,
            home,
            status=done.answer.status,
            error=done.answer.form_message,
            errors=errors,
            submitted=request.form if name == "save_settings" else None,
        )

    def _after(
        self, request: Request, session: Session, nonce: str, tab: Tab, done: Done
    ) -> Response:
        """303 to ``tab`` with a one-time message saying what was done (POST-redirect-GET);
        when the message cannot be kept, the tab itself with it."""
        message: dict[str, Any] = {"notice": done.words}
        if done.result is not None:
            message["result"] = dict(done.result)
        try:
            reference = self.auth.flash.put(session, message)
        except DatabaseError:
            logger.warning("the dashboard's message could not be kept", exc_info=True)
            return self._render(request, session, nonce, tab, flash=message)
        response = self._respond("", 303)
        query = {**done.query, "done": reference}
        response.headers["Location"] = self._tab_url(request, tab, query)
        return response

    def _confirm(
        self, request: Request, session: Session, nonce: str, tab: Tab, question: Any
    ) -> Response:
        """The page asking to confirm the posted form (sent again with ``confirmed=yes``)."""
        fields = [
            (key, value)
            for key, value in request.form.items(multi=True)
            if key not in ("_sitenonce", "confirmed")
        ]
        return self._page(
            request, session, nonce, tab, "cache/confirm.html", question=question, fields=fields
        )

    # ------------------------------------------------------------------ rendering
    def _render(
        self,
        request: Request,
        session: Session,
        nonce: str,
        tab: Tab,
        status: int = 200,
        flash: Mapping[str, Any] | None = None,
        error: str = "",
        errors: Mapping[str, str] | None = None,
        submitted: Mapping[str, str] | None = None,
    ) -> Response:
        """``tab`` with its data (and a refused form's errors, or a done action's message)."""
        rest = self._rest(request, nonce)
        flash = flash or {}
        context: dict[str, Any]
        if tab.name == "overview":
            context = overview_tab(rest, self.explanations)
        elif tab.name == "contents":
            context = contents_tab(rest, request.args)
        elif tab.name == "preload":
            watch = request.args.get("watch") == "preload"
            context = {**preload_tab(rest), "watch": watch}
        elif tab.name == "settings":
            group = (submitted or request.args).get("group", "")
            context = settings_tab(rest, group, errors, submitted)
        elif tab.name == "diagnostics":
            context = diagnostics_tab(rest, flash.get("result"))
            context["debug_log"] = self.debug_log
        else:
            context = glossary_tab(rest)
        shown = {field.name for field in context.get("fields", ())}
        return self._page(
            request,
            session,
            nonce,
            tab,
            f"cache/{tab.name}.html",
            http_status=status,
            notice=str(flash.get("notice") or ""),
            error=error,
            errors=errors or {},
            # The reasons no field of the form shows beside itself (a purge's url).
            error_details=[m for key, m in (errors or {}).items() if key not in shown],
            **context,
        )

    def _page(
        self,
        request: Request,
        session: Session,
        nonce: str,
        tab: Tab,
        template: str,
        http_status: int = 200,
        **context: Any,
    ) -> Response:
        body = self.templates.get_template(template).render(
            site_name=self.server.settings.site_name,
            home_url=self.server.home_url(),
            user=session.user,
            nonce=nonce,
            tab=tab,
            tabs=[(each, self._tab_url(request, each)) for each in TABS if each.listed],
            url_of={each.name: self._tab_url(request, each) for each in TABS},
            action_url=self._tab_url(request, tab),
            admin_path=mounted(request, ADMIN_PATH),
            logout_path=mounted(request, LOGOUT_PATH),
            **context,
        )
        return self._respond(body, http_status)
