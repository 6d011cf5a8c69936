"""The cache dashboard at ``/site-admin/cache`` (administrators only).

Everything it shows and does goes through the ``site-cache/v1`` REST API (`call_rest`): reads
are REST GETs made as the logged-in administrator, and each form (every one carries the
``site_rest`` nonce) becomes the REST request a script would send, so nothing here is a second
code path. The page is server-rendered (it works without JavaScript); while a preload runs it
refreshes itself every two seconds (a ``<meta http-equiv=refresh>``: the progress bar stays live
without a script). Like every admin page it is ``no-store, private``: the page cache never
stores it (the admin paths bypass it).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Final
from urllib.parse import urlencode

from jinja2 import Environment
from werkzeug.wrappers import Request, Response

from sitecache.auth import AuthService
from sitecache.auth.authenticators import REST_NONCE_ACTION
from sitecache.auth.origin import request_cross_site_reason
from sitecache.auth.roles import is_site_admin
from sitecache.auth.sessions import Session
from sitecache.auth.views import ADMIN_PATH, LOGIN_PATH, mounted
from sitecache.rest.internal_call import RestAnswer, call_rest
from sitecache.rest.plain_responses import method_not_allowed
from sitecache.rest.server import RestServer
from sitecache.site.settings_form import body_from_form, form_fields
from sitecache.site.stats_chart import bar_chart, line_chart

__all__ = ["DASHBOARD_PATH", "CacheDashboard"]

logger = logging.getLogger("sitecache.site")

DASHBOARD_PATH: Final = "/site-admin/cache"
NAMESPACE: Final = "/site-cache/v1"
PER_PAGE: Final = 20
_HEADERS: Final = {
    "Cache-Control": "no-store, private",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "Referrer-Policy": "same-origin",
}

Action = Callable[[Request, str], tuple[RestAnswer, str]]


#: The purge forms' ``scope`` values and the form field each sends to ``POST /cache`` (``None``:
#: no field; ``all`` sends ``{"all": true}``, ``site`` an empty body, which purges this site).
PURGE_FORM_FIELDS: Final[dict[str, str | None]] = {
    "url": "url",
    "tag": "tag",
    "post_id": "post_id",
    "all": None,
    "site": None,
}


class CacheDashboard:
    """The dashboard's one view.

    Args:
        auth: the auth service (sessions, nonces).
        server: the REST server the forms are answered by.
        templates: the Jinja2 environment.
        explanations: bypass reason -> a sentence saying why (the cache's own words, passed in
            by the application, since the site never imports the cache).
    """

    def __init__(
        self,
        auth: AuthService,
        server: RestServer,
        templates: Environment,
        explanations: Mapping[str, str],
    ) -> None:
        self.auth = auth
        self.server = server
        self.templates = templates
        self.explanations = dict(explanations)
        self.actions: dict[str, Action] = {
            "save_settings": self._save_settings,
            "reset_settings": lambda request, nonce: (
                self._rest(request, nonce, "POST", "/settings", {"reset": True}),
                "Settings restored to their defaults.",
            ),
            "purge": self._purge,
            "preload_start": lambda request, nonce: (
                self._rest(request, nonce, "POST", "/preload", {"enable": True}),
                "Preload started.",
            ),
            "preload_cancel": lambda request, nonce: (
                self._rest(request, nonce, "POST", "/preload", {"enable": False}),
                "Preload cancelled.",
            ),
            "test": self._test,
        }

    def routes(self) -> dict[str, Callable[[Request], Response]]:
        """Path -> view."""
        return {DASHBOARD_PATH: self.view, DASHBOARD_PATH + "/": self.view}

    # ------------------------------------------------------------------ helpers
    def _rest(
        self,
        request: Request,
        nonce: str,
        method: str,
        route: str,
        body: Any = None,
        query: dict[str, Any] | None = None,
    ) -> RestAnswer:
        return call_rest(self.server, request, method, NAMESPACE + route, nonce, body, query)

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

    # ------------------------------------------------------------------ the view
    def view(self, request: Request) -> Response:
        """``GET`` shows the dashboard; ``POST`` runs one form's action through the REST API
        and shows the dashboard with its result (400 with inline errors when refused)."""
        if request.method not in ("GET", "HEAD", "POST"):
            return method_not_allowed("GET, HEAD, POST")
        session = self.auth.session_from_environ(request.environ)
        if session is None:
            response = self._respond("", 303)
            back = mounted(request, DASHBOARD_PATH)
            response.headers["Location"] = (
                mounted(request, LOGIN_PATH) + "?" + urlencode({"redirect_to": back})
            )
            return response
        if not is_site_admin(session.user):
            return self._message(
                403, "Not allowed", "Sorry, only site administrators may manage the cache."
            )
        nonce = self.auth.nonces.create(REST_NONCE_ACTION, session.user.id, session.token)
        if request.method != "POST":
            return self._render(request, session, nonce)
        return self._post(request, session, nonce)

    def _post(self, request: Request, session: Session, nonce: str) -> Response:
        # SECURITY: a form posted from another site's page is refused before anything runs.
        if request_cross_site_reason(request, self.server.home_url()) is not None:
            return self._message(403, "Request refused", "This form must be sent from this site.")
        sent = request.form.get("_sitenonce", "")
        action = self.actions.get(request.form.get("action", ""))
        if action is None:
            return self._message(400, "Unknown action", "The form asked for nothing known.")
        # The form's own nonce is what the REST API checks (X-Site-Nonce): a stale or forged
        # one is refused there with 403 rest_cookie_invalid_nonce.
        answer, done = action(request, sent)
        if answer.ok:
            # The preload just started: this page follows it live (see `_render`'s ``watch``).
            watch = request.form.get("action") == "preload_start"
            return self._render(
                request, session, nonce, notice=done, result=answer.data, watch=watch
            )
        errors = answer.details
        submitted = request.form if request.form.get("action") == "save_settings" else None
        return self._render(
            request,
            session,
            nonce,
            status=answer.status,
            error=answer.form_message,
            errors=errors,
            submitted=submitted,
        )

    def _save_settings(self, request: Request, nonce: str) -> tuple[RestAnswer, str]:
        schema = self._settings_schema(request, nonce)
        body = body_from_form(schema, request.form)
        return self._rest(request, nonce, "POST", "/settings", body), "Settings saved."

    def _purge(self, request: Request, nonce: str) -> tuple[RestAnswer, str]:
        form = request.form
        scope = form.get("scope", "")
        field = PURGE_FORM_FIELDS.get(scope, "")
        if field == "":
            # An unknown scope must never fall back to purging the whole site.
            message = f"Unknown purge scope {scope!r}: send one of {', '.join(PURGE_FORM_FIELDS)}."
            error = {"code": "rest_invalid_param", "message": message, "data": {"status": 400}}
            return RestAnswer(400, error), ""
        body: dict[str, Any] = {}
        if scope == "all":
            body["all"] = True
        elif field is not None:
            text = form.get(field, "").strip()
            # Anything but plain digits goes as typed, for the API to refuse with its reason.
            body[field] = int(text) if field == "post_id" and _is_count(text) else text
        if form.get("soft"):
            body["soft"] = True
        answer = self._rest(request, nonce, "POST", "/cache", body)
        data = answer.data if isinstance(answer.data, dict) else {}
        how = "marked stale" if form.get("soft") else "deleted"
        return answer, f"Purged: {data.get('deleted', 0)} entries {how} ({data.get('scope', '')})."

    def _test(self, request: Request, nonce: str) -> tuple[RestAnswer, str]:
        url = request.form.get("url", "").strip() or "/"
        answer = self._rest(request, nonce, "POST", "/cache/test", {"url": url})
        data = answer.data if isinstance(answer.data, dict) else {}
        verdict = "passed" if data.get("status") else "failed"
        reason = f": {data['reason']}" if data.get("reason") else "."
        return answer, f"Cache test of {url} {verdict}{reason}"

    def _settings_schema(self, request: Request, nonce: str) -> dict[str, Any]:
        """The schema ``OPTIONS /settings`` publishes."""
        answer = self._rest(request, nonce, "OPTIONS", "/settings")
        data = answer.data if isinstance(answer.data, dict) else {}
        schema = data.get("schema")
        return schema if isinstance(schema, dict) else {}

    # ------------------------------------------------------------------ rendering
    def _contents(self, request: Request, nonce: str) -> dict[str, Any]:
        search = request.args.get("s", "").strip()
        page_text = request.args.get("paged", "1")
        page = int(page_text) if _is_count(page_text) and int(page_text) > 0 else 1
        query: dict[str, Any] = {"page": page, "per_page": PER_PAGE}
        if search:
            query["search"] = search
        answer = self._rest(request, nonce, "GET", "/cache", query=query)
        pages = int(answer.headers.get("X-Site-TotalPages", "0") or 0)
        total = int(answer.headers.get("X-Site-Total", "0") or 0)
        entries = answer.data if answer.ok and isinstance(answer.data, list) else []
        links = {}
        for name, number in (("prev", page - 1), ("next", page + 1)):
            if 1 <= number <= pages:
                links[name] = "?" + urlencode(
                    {"s": search, "paged": number} if search else {"paged": number}
                )
        return {
            "entries": entries,
            "search": search,
            "page": page,
            "pages": pages,
            "total": total,
            "links": links,
            "error": answer.error_message,
        }

    def _render(
        self,
        request: Request,
        session: Session,
        nonce: str,
        status: int = 200,
        notice: str = "",
        error: str = "",
        errors: Mapping[str, str] | None = None,
        submitted: Mapping[str, str] | None = None,
        result: Any = None,
        watch: bool = False,
    ) -> Response:
        """The dashboard. While a preload runs, only the *watch* view (``?watch=preload``, or
        the answer to "Start preload") reloads itself every two seconds to move its progress
        bar: the plain view never reloads under a hand typing into the settings form."""
        watch = watch or request.args.get("watch") == "preload"
        settings = self._rest(request, nonce, "GET", "/settings")
        schema = self._settings_schema(request, nonce)
        values: Mapping[str, Any] = settings.data if isinstance(settings.data, dict) else {}
        if submitted is not None:
            # Show what was typed (nothing was saved), with the API's message beside each field.
            values = {**values, **body_from_form(schema, submitted)}
        status_data = self._rest(request, nonce, "GET", "/status").data or {}
        stats = self._rest(request, nonce, "GET", "/stats").data or {}
        preload = status_data.get("preload") or {} if isinstance(status_data, dict) else {}
        requests = stats.get("requests") or {} if isinstance(stats, dict) else {}
        reasons = stats.get("bypass_reasons") or {} if isinstance(stats, dict) else {}
        fields = form_fields(schema, values, errors)
        inline = {field.name for field in fields}
        body = self.templates.get_template("cache_dashboard.html").render(
            site_name=self.server.settings.site_name,
            home_url=self.server.home_url(),
            user=session.user,
            nonce=nonce,
            dashboard_path=mounted(request, DASHBOARD_PATH),
            admin_path=mounted(request, ADMIN_PATH),
            notice=notice,
            error=error,
            # The reasons no field of the settings form shows beside itself (a purge's url).
            error_details=[
                message for name, message in (errors or {}).items() if name not in inline
            ],
            fields=fields,
            status=status_data if isinstance(status_data, dict) else {},
            stats=stats if isinstance(stats, dict) else {},
            chart=bar_chart(
                [
                    (name, int(requests.get(name) or 0))
                    for name in ("hit", "stale", "miss", "bypass")
                ]
            ),
            history=line_chart(stats.get("series") if isinstance(stats, dict) else None),
            reasons=[
                (reason, count, self.explanations.get(reason, "No explanation recorded."))
                for reason, count in sorted(reasons.items(), key=lambda item: -int(item[1]))
            ],
            preload=preload,
            watch=watch,
            percent=_percent(preload),
            contents=self._contents(request, nonce),
            result=result,
        )
        return self._respond(body, status)


def _is_count(text: str) -> bool:
    """Whether ``text`` is a whole number ``int()`` reads: ASCII digits only (``"²".isdigit()``
    is true and ``int("²")`` fails), and short enough for ``int()``'s digit limit."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def _percent(preload: Mapping[str, Any]) -> int:
    total = int(preload.get("total") or 0)
    done = int(preload.get("done") or 0) + int(preload.get("failed") or 0)
    return min(100, done * 100 // total) if total else 0
