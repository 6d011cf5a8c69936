"""The front site's one route table: every URL shape, matched and built from the same rows.

After werkzeug's ``Map`` and ``MapAdapter``: each `Rule` names an endpoint and a pretty path
template (``/category/<slug>/``), each `QueryForm` the plain query variable of an endpoint
(``?cat=<id>``, WordPress's query variables). `RouteTable.match` turns a request path and query
into the endpoints they may name, in order; `RouteTable.build` turns an endpoint and its values
back into a path, so a URL shape is written once. Posts follow the ``permalink_structure`` option
(``/%postname%/`` by default; ``""`` means plain links such as ``/?p=ID``), so the post rule is
made from the structure; pages live at ``/<parent>/<slug>/`` (``page/<n>/`` after the posts
page's path names its pages); archives at ``/category/<slug>/``, ``/tag/<slug>/``,
``/author/<slug>/``, ``/search/<term>/``, ``/<year>/<month>/<day>/``, and listings add
``page/<n>/`` (``&paged=<n>`` when plain). Pure: no I/O, no request objects.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import quote, quote_plus

__all__ = ["STRUCTURE_TAGS", "Match", "QueryForm", "RouteTable", "Rule"]


@dataclass(frozen=True, slots=True)
class Converter:
    """How one placeholder is matched (a regular expression) and written into a URL."""

    pattern: str
    to_url: Callable[[object], str]


def _digits(width: int) -> Callable[[object], str]:
    return lambda value: f"{int(str(value)):0{width}d}"


CONVERTERS: Final[Mapping[str, Converter]] = {
    "slug": Converter(r"[^/]+", str),
    "term": Converter(r"[^/]+", lambda value: quote(str(value), safe="")),
    # Lazy: ``/<path>/page/<n>/`` is a page of the posts page before it is a child page.
    "path": Converter(r"[a-z0-9-]+(?:/[a-z0-9-]+)*?", str),
    "year": Converter(r"\d{4}", _digits(4)),
    "month": Converter(r"\d{1,2}", _digits(2)),
    "day": Converter(r"\d{1,2}", _digits(2)),
    # The tags of a permalink structure.
    "monthnum": Converter(r"\d{1,2}", _digits(2)),
    "hour": Converter(r"\d{1,2}", _digits(2)),
    "minute": Converter(r"\d{1,2}", _digits(2)),
    "second": Converter(r"\d{1,2}", _digits(2)),
    "post_id": Converter(r"\d+", str),
    "postname": Converter(r"[a-z0-9-]+", str),
    "category": Converter(r"[a-z0-9-]+(?:/[a-z0-9-]+)*", str),
    "author": Converter(r"[a-z0-9-]+", str),
}
"""Placeholder name → its converter (werkzeug's converters, by name)."""

STRUCTURE_TAGS: Final = tuple(
    f"%{name}%"
    for name in (
        "year", "monthnum", "day", "hour", "minute", "second",
        "post_id", "postname", "category", "author",
    )
)  # fmt: skip
"""The tags a ``permalink_structure`` may hold."""
_TAG: Final = re.compile("|".join(re.escape(tag) for tag in STRUCTURE_TAGS))
_PLACEHOLDER: Final = re.compile(r"<([a-z_]+)>")
_PAGED: Final = r"(?:page/(?P<page>\d{1,6})/)?"

Segment = tuple[str, str]
"""``("", text)`` for literal text, ``(name, "")`` for a placeholder."""


def parse_template(template: str) -> tuple[Segment, ...]:
    """``/category/<slug>/`` as segments."""
    segments: list[Segment] = []
    position = 0
    for found in _PLACEHOLDER.finditer(template):
        segments += [("", template[position : found.start()]), (found.group(1), "")]
        position = found.end()
    segments.append(("", template[position:]))
    return tuple(segment for segment in segments if segment != ("", ""))


def structure_template(structure: str) -> tuple[Segment, ...]:
    """A ``permalink_structure`` as segments (a structure without a leading ``/`` gets one)."""
    segments: list[Segment] = []
    position = 0
    for found in _TAG.finditer(structure):
        segments += [("", structure[position : found.start()]), (found.group(0).strip("%"), "")]
        position = found.end()
    segments.append(("", structure[position:]))
    if not structure.startswith("/"):
        segments.insert(0, ("", "/"))
    return tuple(segment for segment in segments if segment != ("", ""))


@dataclass(frozen=True, slots=True)
class Rule:
    """One pretty URL shape of an endpoint.

    Attributes:
        endpoint: what the URL names (``home``, ``category``, ``post``...).
        segments: the path template (`parse_template`).
        paged: whether ``page/<n>/`` may follow (listings).
        pretty_only: matched only with pretty permalinks (posts and pages).
        final: a match naming nothing ends the search (a 404); otherwise the next matching rule
            is tried (a post permalink that names no post may still be a page's path).
    """

    endpoint: str
    segments: tuple[Segment, ...]
    paged: bool = False
    pretty_only: bool = False
    final: bool = True

    @property
    def names(self) -> frozenset[str]:
        """The placeholders of the template."""
        return frozenset(name for name, _ in self.segments if name)

    def regex(self) -> re.Pattern[str]:
        """The compiled regular expression of the whole path."""
        pattern = "".join(
            f"(?P<{name}>{CONVERTERS[name].pattern})" if name else re.escape(text)
            for name, text in self.segments
        )
        return re.compile(f"^{pattern}{_PAGED if self.paged else ''}\\Z")

    def build(self, values: Mapping[str, object], page: int) -> str:
        """The path of ``values`` (page ``page`` of a listing)."""
        path = "".join(
            CONVERTERS[name].to_url(values[name]) if name else text for name, text in self.segments
        )
        return f"{path}page/{page}/" if self.paged and page > 1 else path


def _date_from_m(value: str) -> dict[str, str] | None:
    """``m=YYYY[MM[DD]]`` as year, month and day (``None`` unless 4, 6 or 8 digits)."""
    if not value.isdigit() or len(value) not in (4, 6, 8):
        return None
    parts = {"year": value[:4], "month": value[4:6], "day": value[6:8]}
    return {name: text for name, text in parts.items() if text}


def _m_from_date(values: Mapping[str, object]) -> str:
    month, day = values.get("month"), values.get("day")
    return (
        f"{int(str(values['year'])):04d}"
        + (f"{int(str(month)):02d}" if month else "")
        + (f"{int(str(day)):02d}" if day else "")
    )


@dataclass(frozen=True, slots=True)
class QueryForm:
    """The plain query variable of an endpoint (``?cat=<id>``).

    Attributes:
        key: the query variable.
        endpoint: the endpoint it names.
        read: its value as the endpoint's values (``None``: it names nothing usable).
        write: the endpoint's values as the variable's value, URL-encoded.
        pretty: with pretty permalinks, ``"redirect"`` (a 301 to the pretty URL) or
            ``"ignore"`` (the variable means nothing).
        final: a match naming nothing is a 404; otherwise the path decides (the home page).
    """

    key: str
    endpoint: str
    read: Callable[[str], dict[str, str] | None]
    write: Callable[[Mapping[str, object]], str]
    pretty: str = "ignore"
    final: bool = False


def _reads(name: str) -> Callable[[str], dict[str, str] | None]:
    return lambda text: {name: text}


def _writes(name: str, encode: Callable[[str], str] = str) -> Callable[[Mapping[str, object]], str]:
    return lambda values: encode(str(values[name]))


QUERY_FORMS: Final[tuple[QueryForm, ...]] = (
    # The first variable present decides (WordPress's query variables, in this order).
    QueryForm("s", "search", _reads("term"), _writes("term", quote_plus), pretty="redirect"),
    QueryForm("p", "post", _reads("id"), _writes("id"), pretty="redirect", final=True),
    QueryForm("page_id", "page", _reads("id"), _writes("id"), pretty="redirect", final=True),
    QueryForm("cat", "category", _reads("id"), _writes("id")),
    QueryForm("tag", "tag", _reads("slug"), _writes("slug", quote)),
    QueryForm("author", "author", _reads("id"), _writes("id")),
    QueryForm("feed", "feed", lambda text: {}, lambda values: "rss2"),
    QueryForm("m", "date", _date_from_m, _m_from_date),
)
"""The plain forms of the endpoints, in the order a query is read."""

HOME_PATHS: Final = ("/", "/index.php")
"""The paths whose query string may name a page (plain permalinks)."""


def site_rules(structure: str) -> tuple[Rule, ...]:
    """The pretty rules of the site for ``structure``, in the order they are tried."""
    rules = [
        Rule("home", parse_template("/"), paged=True),
        Rule("home", parse_template("/index.php")),
        Rule("feed", parse_template("/feed/")),
        Rule("sitemap", parse_template("/sitemap.xml")),
        Rule("category", parse_template("/category/<slug>/"), paged=True),
        Rule("tag", parse_template("/tag/<slug>/"), paged=True),
        Rule("author", parse_template("/author/<slug>/"), paged=True),
        Rule("search", parse_template("/search/<term>/"), paged=True),
        Rule("date", parse_template("/<year>/"), paged=True),
        Rule("date", parse_template("/<year>/<month>/"), paged=True),
        Rule("date", parse_template("/<year>/<month>/<day>/"), paged=True),
    ]
    if structure:
        rules.append(Rule("post", structure_template(structure), pretty_only=True, final=False))
    # Pages; ``page/<n>/`` names a page of the posts page (``page_for_posts``) only.
    rules.append(Rule("page", parse_template("/<path>/"), paged=True, pretty_only=True))
    return tuple(rules)


@dataclass(frozen=True, slots=True)
class Match:
    """An endpoint a request may name, with the values read from its path or query.

    Attributes:
        endpoint: the endpoint.
        values: the captured text (``page`` included when given).
        final: when it names nothing, the answer is a 404 (else: try the next match).
        redirect: answer with a 301 to the canonical URL of what it names.
        path: the path matched (a permalink must be its post's own).
    """

    endpoint: str
    values: Mapping[str, str]
    final: bool = True
    redirect: bool = False
    path: str = ""


class RouteTable:
    """The site's URL shapes for one ``permalink_structure``.

    Args:
        structure: the permalink structure (``""``: plain permalinks).
    """

    def __init__(self, structure: str) -> None:
        self.structure = structure
        self.pretty = bool(structure)
        self.rules = site_rules(structure)
        usable = [rule for rule in self.rules if self.pretty or not rule.pretty_only]
        self._compiled = [(rule, rule.regex()) for rule in usable]
        # PERF: building runs for every link of a page; each endpoint's rules are kept with
        # their placeholders, those using the most first.
        self._builders: dict[str, list[tuple[frozenset[str], Rule]]] = {}
        for rule in sorted(usable, key=lambda rule: -len(rule.names)):
            self._builders.setdefault(rule.endpoint, []).append((rule.names, rule))
        self._forms = {form.endpoint: form for form in QUERY_FORMS}

    # ------------------------------------------------------------------ matching
    def match(self, path: str, query: Mapping[str, str]) -> list[Match]:
        """What ``path`` and ``query`` may name, in the order to try them: the query's match
        (on `HOME_PATHS`), then the path's, up to the first final one."""
        matches = self.match_query(query) if path in HOME_PATHS else []
        for rule, regex in self._compiled:
            found = regex.match(path)
            if found is None:
                continue
            values = {name: text for name, text in found.groupdict().items() if text is not None}
            matches.append(Match(rule.endpoint, values, final=rule.final, path=path))
            if rule.final:
                break
        return matches

    def match_query(self, query: Mapping[str, str]) -> list[Match]:
        """The match of a query string (at most one): the first variable of `QUERY_FORMS`
        present decides; ``paged`` alone names a page of the home listing (plain only)."""
        page = query.get("paged", "")
        for form in QUERY_FORMS:
            if form.key not in query:
                continue
            if self.pretty and form.pretty == "ignore":
                continue
            raw = query.get(form.key, "")
            if form.key == "s":
                raw = raw.strip()
                if not raw:  # an empty search: the home page (redirected to when pretty)
                    return [Match("home", {}, redirect=True)] if self.pretty else []
            values = form.read(raw)
            if values is None:
                return []
            if not self.pretty and page:
                values["page"] = page
            return [Match(form.endpoint, values, final=form.final, redirect=self.pretty)]
        if not self.pretty and page:
            return [Match("home", {"page": page}, final=False)]
        return []

    # ------------------------------------------------------------------ building
    def build(
        self, endpoint: str, values: Mapping[str, object], page: int = 1, *, plain: bool = False
    ) -> str:
        """The path of ``endpoint`` with ``values`` (page ``page`` of a listing).

        Pretty permalinks use the rule of the endpoint whose placeholders are the most of
        those given; plain ones (or ``plain``) use its query variable, with ``paged``.

        Raises:
            LookupError: the endpoint has no URL for these values (werkzeug's ``BuildError``;
                a plain form's missing value is a `KeyError`).
        """
        given = {name for name, value in values.items() if value not in (None, "")}
        if self.pretty and not plain:
            rule = self._rule_for(endpoint, given)
            if rule is None:
                raise LookupError(f"no URL for {endpoint} with {sorted(given)}")
            return rule.build(values, page)
        form = self._forms.get(endpoint)
        if form is not None:
            path = f"/?{form.key}={form.write(values)}"
            return f"{path}&paged={page}" if page > 1 else path
        if endpoint == "home":
            return f"/?paged={page}" if page > 1 else "/"
        rule = self._rule_for(endpoint, given)
        if rule is None:
            raise LookupError(f"no URL for {endpoint} with {sorted(given)}")
        return rule.build(values, page)

    def _rule_for(self, endpoint: str, given: set[str]) -> Rule | None:
        """The rule of ``endpoint`` using the most of the ``given`` values (all it needs)."""
        for names, rule in self._builders.get(endpoint, ()):
            if names <= given:
                return rule
        return None
