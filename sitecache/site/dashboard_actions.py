"""What the cache dashboard's forms do, as data: one `Action` per form, each a REST request of
``site-cache/v1`` (the dashboard has no other way to the cache), what it did in words, and for
the actions that cannot be undone, the question asked first.

Purging everything, restoring the defaults, turning caching off and cancelling a preload ask
for confirmation: without ``confirmed=yes`` in the form they answer a page asking it, with the
numbers at stake ("This deletes all 281 cached pages (4.2 MB)"), whose button sends the same
form again confirmed. Every action says what it did ("Deleted 281 pages (4.2 MB).").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from sitecache.rest.internal_call import RestAnswer
from sitecache.site.settings_form import body_from_form, group_keys, group_named
from sitecache.wording import human_bytes, plural

__all__ = [
    "ACTIONS",
    "PURGE_FORM_FIELDS",
    "Action",
    "Confirmation",
    "Done",
    "RestCall",
    "is_count",
]


class RestCall(Protocol):
    """A ``site-cache/v1`` request made as the logged-in administrator."""

    def __call__(
        self,
        method: str,
        route: str,
        body: Any = None,
        query: dict[str, Any] | None = None,
    ) -> RestAnswer: ...


@dataclass(frozen=True)
class Done:
    """What an action did: the REST answer, the sentence saying it (shown once, after the
    redirect), a result to show with it (the cache test's attempts) and the redirect's query."""

    answer: RestAnswer
    words: str = ""
    result: Mapping[str, Any] | None = None
    query: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Confirmation:
    """The question an action asks before it runs: a title, what will happen, the button."""

    title: str
    text: str
    button: str


@dataclass(frozen=True)
class Action:
    """One form's action: the tab it belongs to, what it does, and what it asks first."""

    tab: str
    run: Callable[[RestCall, Mapping[str, str]], Done]
    confirm: Callable[[RestCall, Mapping[str, str]], Confirmation | None] | None = None


#: The purge forms' ``scope`` values and the form field each sends to ``POST /cache`` (``None``:
#: no field; ``all`` sends ``{"all": true}``, ``site`` an empty body, which purges this site).
PURGE_FORM_FIELDS: Final[dict[str, str | None]] = {
    "url": "url",
    "tag": "tag",
    "post_id": "post_id",
    "all": None,
    "site": None,
}
#: The scopes that empty the cache (asked first).
_EVERYTHING: Final = ("all", "site")


def _data(answer: RestAnswer) -> dict[str, Any]:
    return answer.data if answer.ok and isinstance(answer.data, dict) else {}


def is_count(text: str) -> bool:
    """Whether ``text`` is a whole number ``int()`` reads: ASCII digits only (``"²".isdigit()``
    is true and ``int("²")`` fails), and short enough for ``int()``'s digit limit."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def _refused(message: str) -> RestAnswer:
    return RestAnswer(400, {"code": "rest_invalid_param", "message": message,
                            "data": {"status": 400}})  # fmt: skip


# ---------------------------------------------------------------------- caching on and off
def _switch(enabled: bool) -> Callable[[RestCall, Mapping[str, str]], Done]:
    def run(rest: RestCall, form: Mapping[str, str]) -> Done:
        answer = rest("POST", "/settings", {"enabled": enabled})
        if enabled:
            return Done(answer, "Caching is on: visitors' pages are cached and served again.")
        return Done(answer, "Caching is off: every visitor gets a freshly rendered page.")

    return run


def _confirm_off(rest: RestCall, form: Mapping[str, str]) -> Confirmation:
    entries = _data(rest("GET", "/stats")).get("entries") or {}
    kept = plural(int(entries.get("total") or 0), "cached page")
    return Confirmation(
        "Turn caching off?",
        "Every visitor will get a freshly rendered page: the site does more work and answers "
        f"more slowly. The {kept} are kept, unused, until caching is turned on again.",
        "Turn caching off",
    )


# ---------------------------------------------------------------------- settings
def _labels(rest: RestCall) -> tuple[dict[str, Any], dict[str, str]]:
    """The published settings schema and each key's label."""
    schema = _data(rest("OPTIONS", "/settings")).get("schema") or {}
    properties = schema.get("properties") or {}
    return schema, {key: str(prop.get("title") or key) for key, prop in properties.items()}


def _changed(before: Mapping[str, Any], after: Mapping[str, Any], labels: Mapping[str, str]) -> str:
    names = [labels.get(key, key) for key in after if before.get(key) != after.get(key)]
    return ", ".join(names)


def _save_settings(rest: RestCall, form: Mapping[str, str]) -> Done:
    schema, labels = _labels(rest)
    group = group_named(form.get("group", ""))
    before = _data(rest("GET", "/settings"))
    body = body_from_form(schema, form, group_keys(group, schema))
    answer = rest("POST", "/settings", body)
    changed = _changed(before, _data(answer), labels)
    if not changed:
        return Done(answer, f"Nothing changed in {group.heading}.")
    return Done(answer, f"Saved {group.heading}: {changed}.", query={"group": group.name})


def _reset_settings(rest: RestCall, form: Mapping[str, str]) -> Done:
    _, labels = _labels(rest)
    before = _data(rest("GET", "/settings"))
    answer = rest("POST", "/settings", {"reset": True})
    changed = _changed(before, _data(answer), labels)
    if not changed:
        return Done(answer, "Every setting already had its default value: nothing changed.")
    count = plural(changed.count(", ") + 1, "setting")
    return Done(answer, f"Restored the defaults: {count} changed ({changed}).")


def _confirm_reset(rest: RestCall, form: Mapping[str, str]) -> Confirmation:
    return Confirmation(
        "Restore every setting to its default?",
        "Every change made to the cache settings is lost; the cached pages stay. This "
        "cannot be undone.",
        "Restore the defaults",
    )


# ---------------------------------------------------------------------- purges
def _purge(rest: RestCall, form: Mapping[str, str]) -> Done:
    scope = form.get("scope", "")
    field_name = PURGE_FORM_FIELDS.get(scope, "")
    if field_name == "":
        # An unknown scope must never fall back to purging the whole site.
        known = ", ".join(PURGE_FORM_FIELDS)
        return Done(_refused(f"Unknown purge scope {scope!r}: send one of {known}."))
    body: dict[str, Any] = {}
    target = "every host" if scope == "all" else "this site"
    if scope == "all":
        body["all"] = True
    elif field_name is not None:
        text = form.get(field_name, "").strip()
        # Anything but plain digits goes as typed, for the API to refuse with its reason.
        body[field_name] = int(text) if field_name == "post_id" and is_count(text) else text
        target = {"url": text, "tag": f"the tag {text}", "post_id": f"post {text}"}[scope]
    soft = bool(form.get("soft"))
    if soft:
        body["soft"] = True
    answer = rest("POST", "/cache", body)
    data = _data(answer)
    count = int(data.get("deleted") or 0)
    size = human_bytes(int(data.get("bytes") or 0))
    if not count:
        return Done(answer, f"No cached page was found for {target}: nothing was purged.")
    done = "Marked" if soft else "Deleted"
    pages = plural(count, "page")
    return Done(answer, f"{done} {pages}{' stale' if soft else ''} ({size}) of {target}.")


def _confirm_purge(rest: RestCall, form: Mapping[str, str]) -> Confirmation | None:
    scope = form.get("scope", "")
    if scope not in _EVERYTHING:
        return None
    stats = _data(rest("GET", "/stats"))
    count = int((stats.get("entries") or {}).get("total") or 0)
    size = human_bytes(int((stats.get("bytes") or {}).get("total") or 0))
    where = "of every host" if scope == "all" else "of this site"
    pages = f"all {plural(count, 'cached page')}" if count != 1 else "the 1 cached page"
    if form.get("soft"):
        return Confirmation(
            "Mark every cached page stale?",
            f"This marks {pages} ({size}) {where} stale: each is rendered again on its next "
            "visit, while that visitor gets the old copy.",
            "Yes, mark them stale",
        )
    return Confirmation(
        "Delete every cached page?",
        f"This deletes {pages} ({size}) {where}. Visitors get freshly rendered pages, "
        "and the site does more work, until the cache fills again.",
        f"Yes, delete {plural(count, 'page')}",
    )


# ---------------------------------------------------------------------- preload
def _preload_start(rest: RestCall, form: Mapping[str, str]) -> Done:
    answer = rest("POST", "/preload", {"enable": True})
    total = int(_data(answer).get("total") or 0)
    return Done(
        answer, f"Preload started: {plural(total, 'page')} to visit.", query={"watch": "preload"}
    )


def _preload_cancel(rest: RestCall, form: Mapping[str, str]) -> Done:
    answer = rest("POST", "/preload", {"enable": False})
    data = _data(answer)
    done, total = int(data.get("done") or 0), int(data.get("total") or 0)
    if not total:
        return Done(answer, "No preload was running: nothing to cancel.")
    return Done(answer, f"Preload cancelled after {done:,} of {plural(total, 'page')}.")


def _confirm_cancel(rest: RestCall, form: Mapping[str, str]) -> Confirmation | None:
    progress = _data(rest("GET", "/status")).get("preload") or {}
    if not progress.get("running"):
        return None
    done, total = int(progress.get("done") or 0), int(progress.get("total") or 0)
    return Confirmation(
        "Cancel the preload?",
        f"{done:,} of {plural(total, 'page')} are done. The pages not visited yet stay "
        "uncached until a visitor (or the next preload) asks for them.",
        "Cancel the preload",
    )


# ---------------------------------------------------------------------- diagnostics
def _test(rest: RestCall, form: Mapping[str, str]) -> Done:
    url = form.get("url", "").strip() or "/"
    answer = rest("POST", "/cache/test", {"url": url})
    data = _data(answer)
    if data.get("status"):
        words = f"The cache works for {url}: the page was stored, then served from the cache."
    else:
        words = f"The cache test of {url} failed: {data.get('reason') or 'see below'}"
    return Done(answer, words, result={**data, "url": url})


def _debug(on: bool) -> Callable[[RestCall, Mapping[str, str]], Done]:
    def run(rest: RestCall, form: Mapping[str, str]) -> Done:
        answer = rest("POST", "/settings", {"debug": on})
        if on:
            return Done(answer, "The debug log is on: turn it off when you are done.")
        return Done(answer, "The debug log is off.")

    return run


#: Every form's action, by the form's ``action`` value.
ACTIONS: Final[dict[str, Action]] = {
    "caching_on": Action("overview", _switch(True)),
    "caching_off": Action("overview", _switch(False), _confirm_off),
    "save_settings": Action("settings", _save_settings),
    "reset_settings": Action("settings", _reset_settings, _confirm_reset),
    "purge": Action("contents", _purge, _confirm_purge),
    "preload_start": Action("preload", _preload_start),
    "preload_cancel": Action("preload", _preload_cancel, _confirm_cancel),
    "test": Action("diagnostics", _test),
    "debug_on": Action("diagnostics", _debug(True)),
    "debug_off": Action("diagnostics", _debug(False)),
}
