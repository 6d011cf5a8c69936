"""The post a ``site/v2`` item request names is read from the store once per request.

The permission callback, the handler and the ``Allow`` header (which asks the update and
delete permission callbacks too) all need the same post: the first read is kept on the
request, so a GET costs one read of the post instead of four.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from sitecache.site import Post, PostQuery
from tests.site.conftest import AdminRest


@pytest.fixture
def reads(admin_rest: AdminRest, monkeypatch: pytest.MonkeyPatch) -> Counter[int]:
    """How many times each post id was read with ``get_post`` since the fixture started."""
    content = admin_rest.app.content
    counted: Counter[int] = Counter()
    read = content.get_post

    def counting(post_id: int) -> Post | None:
        counted[post_id] += 1
        return read(post_id)

    monkeypatch.setattr(content, "get_post", counting)
    return counted


def _first(admin_rest: AdminRest, post_type: str) -> int:
    posts, _ = admin_rest.app.content.query_posts(PostQuery(types=(post_type,)))
    return posts[0].id


@pytest.mark.parametrize(("post_type", "base"), [("post", "posts"), ("page", "pages")])
def test_an_item_get_reads_its_post_once(
    admin_rest: AdminRest, reads: Counter[int], post_type: str, base: str
) -> None:
    post_id = _first(admin_rest, post_type)
    response = admin_rest.call("GET", f"/site/v2/{base}/{post_id}")
    assert response.status_code == 200, response.text
    # The administrator may do everything: the Allow header asked every permission callback.
    assert response.headers["Allow"] == "GET, POST, PUT, PATCH, DELETE"
    assert reads[post_id] == 1


def test_an_unknown_post_is_looked_for_once_and_still_answers_404(
    admin_rest: AdminRest, reads: Counter[int]
) -> None:
    response = admin_rest.call("GET", "/site/v2/posts/987654")
    assert response.status_code == 404
    body: Any = response.json
    assert body["code"] == "rest_post_invalid_id"
    assert reads[987654] == 1


def test_the_allow_header_after_an_update_judges_the_updated_post(
    admin_rest: AdminRest, reads: Counter[int]
) -> None:
    post_id = _first(admin_rest, "post")
    response = admin_rest.call("POST", f"/site/v2/posts/{post_id}", {"title": "Renamed"})
    assert response.status_code == 200, response.text
    assert response.json["title"]["raw"] == "Renamed"  # type: ignore[index]
    assert response.headers["Allow"] == "GET, POST, PUT, PATCH, DELETE"
    assert admin_rest.app.content.get_post(post_id).title == "Renamed"  # type: ignore[union-attr]


def test_each_request_reads_the_post_afresh(admin_rest: AdminRest, reads: Counter[int]) -> None:
    post_id = _first(admin_rest, "post")
    admin_rest.call("GET", f"/site/v2/posts/{post_id}")
    assert reads[post_id] == 1
    admin_rest.app.content.update_post(post_id, title="Changed between requests")
    reads.clear()
    response = admin_rest.call("GET", f"/site/v2/posts/{post_id}?context=edit")
    assert response.json["title"]["raw"] == "Changed between requests"  # type: ignore[index]
    assert reads[post_id] == 1
