"""Blocks in post content rendered by the theme with the site's data (`BlockRenderer`)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import Markup
from werkzeug.test import Client

from sitecache.app import App, create_app
from sitecache.site import Post
from sitecache.site.blocks import BlockContext, BlockTypeError, RenderedBlock
from tests.site.conftest import SmallSite

SITE = "http://example.org"


def page_of(app: App, post: Post) -> tuple[str, str]:
    """The entry content of a post's page and its ``Cache-Tag``."""
    response = Client(app).get(app.site.post_url(post).removeprefix(SITE), base_url=SITE)
    assert response.status_code == 200
    text = response.get_data(as_text=True)
    content = text[text.index('<div class="entry-content">') : text.index("</article>")]
    return content, str(response.headers.get("Cache-Tag", ""))


def with_blocks(app: App, content: str, **fields: Any) -> Post:
    return app.content.create_post(title="Blocks", content=content, status="publish", **fields)


def test_latest_posts_lists_the_newest_posts_escaped_and_not_the_page_itself(
    app: App, site: SmallSite
) -> None:
    for number in range(3):
        app.content.create_post(
            title=f"News <{number}>", status="publish", date_gmt=1_750_000_000 + number
        )
    post = with_blocks(
        app,
        'Before.\n\n<!-- wp:latest-posts {"postsToShow":2,"displayPostDate":true} /-->\n\nAfter.',
        date_gmt=1_760_000_000,
    )
    content, tags = page_of(app, post)
    assert content.index("<p>Before.</p>") < content.index("wp-block-latest-posts")
    assert content.index("wp-block-latest-posts") < content.index("<p>After.</p>")
    assert re.findall(r"post-title\" href=\"[^\"]+\">([^<]+)</a>", content) == [
        "News &lt;2&gt;",
        "News &lt;1&gt;",
    ]
    assert "wp-block-latest-posts__post-date" in content
    assert "post-list" in tags.split(",")


def test_latest_posts_of_a_category_ordered_by_title(app: App, site: SmallSite) -> None:
    chosen = app.content.create_term("category", "Chosen")
    for title in ("Zebra", "Another"):
        app.content.create_post(title=title, status="publish", term_ids=[chosen.id])
    attrs = f'{{"categories":[{{"id":{chosen.id}}}],"orderBy":"title","order":"asc"}}'
    content, _ = page_of(app, with_blocks(app, f"<!-- wp:latest-posts {attrs} /-->"))
    titles = re.findall(r"post-title\" href=\"[^\"]+\">([^<]+)</a>", content)
    assert titles == ["Another", "Zebra"]


def test_archives_list_months_with_counts(app: App, site: SmallSite) -> None:
    app.content.create_post(title="Later", status="publish", date_gmt=1_700_000_000 + 40 * 86400)
    content, tags = page_of(app, with_blocks(app, '<!-- wp:archives {"showPostCounts":true} /-->'))
    months = re.findall(
        r'<a href="http://example.org/(\d{4}/\d\d)/">([^<]+)</a>&nbsp;\((\d+)\)', content
    )
    assert ("2023/11", "November 2023", "1") in months
    assert ("2023/12", "December 2023", "1") in months
    assert "post-list" in tags.split(",")


def test_categories_and_tag_cloud_list_terms_and_are_tagged_by_taxonomy(
    app: App, site: SmallSite
) -> None:
    content, tags = page_of(
        app,
        with_blocks(
            app,
            '<!-- wp:categories {"showPostCounts":true} /-->\n'
            '<!-- wp:tag-cloud {"showTagCounts":true,"smallestFontSize":"10px"} /-->',
        ),
    )
    assert (
        '<a href="http://example.org/category/news/">News</a> (2)' in content
    )  # the post and this page
    assert 'href="http://example.org/tag/python/"' in content
    assert 'style="font-size: 10px"' in content
    assert {"term-list-category", "term-list-post_tag"} <= set(tags.split(","))


def test_search_block_sends_s_to_the_home_page(app: App, site: SmallSite) -> None:
    content, _ = page_of(app, with_blocks(app, '<!-- wp:search {"label":"Find <it>"} /-->'))
    assert 'action="http://example.org/"' in content
    assert 'name="s"' in content
    assert "Find &lt;it&gt;" in content


def test_invalid_attributes_render_a_comment_and_the_page_still_answers(
    app: App, site: SmallSite
) -> None:
    content, _ = page_of(
        app,
        with_blocks(
            app,
            '<!-- wp:latest-posts {"postsToShow":"--><script>"} /-->\n'
            "<!-- wp:archives {not json} /-->",
        ),
    )
    assert "<!-- core/latest-posts not rendered: attributes[postsToShow] is not of type " in (
        content
    )
    assert "<!-- core/archives not rendered: the attributes are not valid JSON -->" in content
    assert "<script" not in content
    assert "wp-block-latest-posts" not in content


def test_unknown_blocks_are_left_as_their_escaped_inner_text(app: App, site: SmallSite) -> None:
    content, _ = page_of(
        app, with_blocks(app, "<!-- wp:paragraph --><p>Hi & bye</p><!-- /wp:paragraph -->")
    )
    assert "<p>&lt;p&gt;Hi &amp; bye&lt;/p&gt;</p>" in content


def test_a_plugin_block_renders_through_the_app_with_its_tags(app: App, site: SmallSite) -> None:
    def shout(attributes: dict[str, Any], inner: str, block: BlockContext) -> RenderedBlock:
        word = str(attributes["word"]).upper()
        return RenderedBlock(Markup("<strong>{}</strong>").format(word), ("shouts",))

    def text(attributes: dict[str, Any], inner: str, block: BlockContext) -> str:
        return f"<{inner}> in post {block.post.id if block.post else 0}"

    def broken(attributes: dict[str, Any], inner: str, block: BlockContext) -> str:
        raise RuntimeError("plugin bug")

    app.register_block_type(
        "my/shout", {"word": {"type": "string", "default": "hey"}}, shout, title="Shout"
    )
    app.register_block_type("my/text", {}, text)
    app.register_block_type("my/broken", {}, broken)
    with pytest.raises(BlockTypeError):
        app.register_block_type("my/shout", {}, shout)
    post = with_blocks(
        app,
        '<!-- wp:my/shout {"word":"<a&b>"} /--><!-- wp:my/text -->inner<!-- /wp:my/text -->'
        "<!-- wp:my/broken /-->",
    )
    content, tags = page_of(app, post)
    assert "<strong>&lt;A&amp;B&gt;</strong>" in content
    assert f"&lt;inner&gt; in post {post.id}" in content
    assert "<!-- my/broken not rendered: The block could not be rendered. -->" in content
    assert "shouts" in tags.split(",")


def test_excerpts_and_feeds_show_the_words_without_the_blocks(app: App, site: SmallSite) -> None:
    with_blocks(
        app, 'Words here.<!-- wp:latest-posts {"postsToShow":2} /-->', date_gmt=1_760_000_000
    )
    home = Client(app).get("/", base_url=SITE).get_data(as_text=True)
    feed = Client(app).get("/feed/", base_url=SITE).get_data(as_text=True)
    assert "Words here." in home
    assert "wp:latest-posts" not in home
    assert "wp:latest-posts" not in feed


@pytest.fixture(scope="module")
def shared_app(tmp_path_factory: pytest.TempPathFactory) -> App:
    application = create_app(
        {
            "data_dir": str(tmp_path_factory.mktemp("blocks") / "var"),
            "site_url": SITE,
            "password_hash_cost": 1024,
            "cache_timers": False,
        }
    )
    application.content.create_term("post_tag", "<b>tag</b>")
    application.content.create_post(title="<script>alert(1)</script>", status="publish")
    return application


pieces = st.sampled_from(
    [
        "<!-- wp:", "latest-posts ", "search ", "tag-cloud ", "my/x ", "/wp:search ", "/-->",
        " -->", "{", "}", '"label":', '"postsToShow":', '"<script>x</script>"', '"--><b>"',
        "3", ",", "<b>", "&", "\n\n", "-->", "<!--",
    ]
)  # fmt: skip


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.one_of(pieces, st.text(max_size=4)), max_size=25).map("".join))
def test_no_content_lets_markup_through(shared_app: App, text: str) -> None:
    post = Post(1, "post", "publish", 0, 0, "p", "p", text, "", 0, 0)
    html = str(shared_app.site.blocks.render_content(post).html)
    assert "<script" not in html
    assert "<b>" not in html
    # Every comment is one of the renderer's own, whole.
    for comment in re.findall(r"<!--.*?-->", html, flags=re.DOTALL):
        assert re.fullmatch(r"<!-- [a-z0-9-]+/[a-z0-9-]+ not rendered: [^<>]* -->", comment)
    assert html.count("<!--") == html.count(" -->")
