"""Every XML page stays well-formed whatever text is stored (attack report item 4): the
characters XML 1.0 forbids (C0 controls but tab/LF/CR, lone surrogates, U+FFFE, U+FFFF) are
dropped where the XML templates print values, so neither the feed nor its cached copy breaks."""

from __future__ import annotations

import itertools
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import Markup, escape
from werkzeug.test import Client

from sitecache.app import App, create_app
from sitecache.templating import make_template_environment, xml_text

SITE = "http://example.org"
SLUGS = itertools.count()
FORBIDDEN = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x0e", "\x1b", "\x1f", "\ufffe", "\uffff"]
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff"]
#: Any text, with the forbidden characters (and lone surrogates when stored text can hold
#: them) made frequent.
TEXT = st.text(alphabet=st.one_of(st.characters(), st.sampled_from(FORBIDDEN)), max_size=40)
ANY_TEXT = st.text(
    alphabet=st.one_of(st.characters(), st.sampled_from(FORBIDDEN + SURROGATES)), max_size=40
)
SETTINGS = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


def allowed(character: str) -> bool:
    """XML 1.0's ``Char`` production."""
    point = ord(character)
    return (
        character in "\t\n\r"
        or 0x20 <= point <= 0xD7FF
        or 0xE000 <= point <= 0xFFFD
        or point >= 0x10000
    )


def parse(data: bytes) -> ElementTree.Element:
    return ElementTree.fromstring(data)  # noqa: S314 - our own output


@SETTINGS
@given(text=ANY_TEXT)
def test_xml_text_keeps_exactly_the_characters_xml_allows(text: str) -> None:
    kept = xml_text(text)
    assert kept == "".join(c for c in text if allowed(c))
    element = parse(f"<a>{escape(kept)}</a>".encode())
    # A parser reads CR as LF (XML 1.0 §2.11) and a CR LF pair as one LF.
    assert (element.text or "") == kept.replace("\r\n", "\n").replace("\r", "\n")


def test_xml_text_keeps_markup_safe_and_other_templates_untouched() -> None:
    kept = xml_text(Markup("<b>a\x00b</b>"))
    assert isinstance(kept, Markup)
    assert kept == Markup("<b>ab</b>")
    html = make_template_environment().from_string("{{ x }}").render(x="a\x1bb")
    assert html == "a\x1bb"


def make_app(tmp_path: Path) -> App:
    return create_app(
        {
            "data_dir": str(tmp_path / "var"),
            "site_url": SITE,
            "password_hash_cost": 1024,
            "cache_timers": False,
        }
    )


def test_a_control_character_title_keeps_the_feed_and_its_cached_copy_well_formed(
    tmp_path: Path,
) -> None:
    app = make_app(tmp_path)
    app.content.create_post(title="a\x00b", content="esc\x1b[31m vt\x0b", status="publish")
    client = Client(app, use_cookies=False)
    first = client.get("/feed/", base_url=SITE)
    assert first.headers["Cache-Status"].endswith("stored")
    second = client.get("/feed/", base_url=SITE)
    assert second.headers["Cache-Status"].startswith("sitecache; hit")
    for response in (first, second):
        channel = parse(response.data).find("channel")
        assert channel is not None
        assert [item.findtext("title") for item in channel.iter("item")] == ["ab"]
        assert "esc[31m vt" in (channel.findtext("item/{*}encoded") or "")


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory: pytest.TempPathFactory) -> App:
    """One application for every example of a property (a new one each is slow)."""
    return make_app(tmp_path_factory.mktemp("xml"))


@SETTINGS
@given(title=TEXT, content=TEXT, name=TEXT, term=TEXT)
def test_any_stored_text_leaves_the_feed_and_sitemap_well_formed(
    shared_app: App, title: str, content: str, name: str, term: str
) -> None:
    app = shared_app
    author = app.auth.users.find("writer") or app.auth.users.create(
        "writer", "password123", "author"
    )
    app.auth.users.update(author, {"display_name": name or "w"})
    category = app.content.create_term("category", f"c{term}", slug=f"c-{next(SLUGS)}")
    app.content.update_option("title", f"Site {title}")
    app.content.update_option("description", content)
    app.content.create_post(
        title=title,
        content=content,
        excerpt=term,
        status="publish",
        author=author.id,
        term_ids=[category.id],
    )
    client = Client(app, use_cookies=False)
    for path in ("/feed/", "/feed/", "/sitemap.xml"):
        response = client.get(path, base_url=SITE)
        assert response.status_code == 200, path
        parse(response.data)
