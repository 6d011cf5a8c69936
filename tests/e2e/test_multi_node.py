"""Three nodes behind one imagined load balancer share logins, edits and the page cache.

Three gunicorn nodes (`tests.e2e.cluster`), one Redis page-cache storage, one site store; every
request carries the site's public Host. A session made on node A works on node B; an edit made
on node C is seen by the first anonymous read of every node once its response has returned,
although each node had the old page cached; an application password made on A works on C; a
logout on B ends the session on A.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.parse import urlencode, urlsplit

import pytest

from tests.cache.conftest import REDIS_URL, redis_or_skip
from tests.e2e.cluster import Cluster, basic, log_in, rest_nonce

#: ``None``: the nodes share one data directory (SQLite, one machine). Set it to a
#: ``postgresql://`` URL to run the same test with one data directory per node and the site in
#: that database.
DATABASE_URL: str | None = None
A, B, C = 0, 1, 2
POSTS = "/site-json/site/v2/posts"
ME = "/site-json/site/v2/users/me"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    redis_or_skip()
    nodes = Cluster(
        tmp_path_factory.mktemp("nodes"), 3, redis_url=REDIS_URL, database_url=DATABASE_URL
    )
    nodes.start()
    nodes.cli("user", "create", "ada", "--role", "administrator", "--password", "ada-password")
    yield nodes
    nodes.stop()


@pytest.fixture
def show_logs_on_failure(cluster: Cluster, request: pytest.FixtureRequest) -> Iterator[None]:
    failed_before = request.session.testsfailed
    yield
    if request.session.testsfailed > failed_before:
        print(cluster.logs())


def session_headers(cookie: str, nonce: str) -> dict[str, str]:
    return {"Cookie": cookie, "X-Site-Nonce": nonce}


def path_of(url: str) -> str:
    return urlsplit(url).path


def cache_outcome(headers: dict[str, str]) -> str:
    """``hit``, ``fwd=uri-miss``, ``fwd=bypass`` ... from the Cache-Status header."""
    return headers.get("cache-status", "").split(";")[1].strip()


@pytest.mark.usefixtures("show_logs_on_failure")
def test_a_session_made_on_one_node_writes_on_another_and_an_edit_reaches_every_node(
    cluster: Cluster,
) -> None:
    status, post = cluster.rest(
        A, "POST", POSTS, {"title": "Shared story", "content": "Old words", "status": "publish"}
    )
    assert status == 201, post
    pages = [path_of(post["link"]), "/"]
    with cluster.clients() as clients:
        # Every node has both pages cached (one Redis): a read there now is a hit.
        for client in clients:
            for path in pages:
                client.request("GET", path)
                status, headers, body = client.request("GET", path)
                assert status == 200, (path, status)
                assert b"Old words" in body, path
                assert cache_outcome(headers) == "hit", (path, headers.get("cache-status"))

        cookie = log_in(clients[A], "ada", "ada-password")
        nonce = rest_nonce(clients[A], cookie)

        # The cookie alone is not enough on B either; with A's nonce it writes.
        status, refused = cluster.rest(B, "POST", POSTS, {"title": "Draft"}, {"Cookie": cookie})
        assert status == 401, refused
        status, draft = cluster.rest(
            B, "POST", POSTS, {"title": "Drafted on B"}, session_headers(cookie, nonce)
        )
        assert status == 201, draft
        _, me = cluster.rest(A, "GET", ME, headers=session_headers(cookie, nonce))
        assert draft["author"] == me["id"]

        status, edited = cluster.rest(
            C,
            "POST",
            f"{POSTS}/{post['id']}",
            {"content": "New words from C"},
            session_headers(cookie, nonce),
        )
        assert status == 200, edited
        # The edit's response has returned: the first anonymous read of each node is new.
        for index, client in enumerate(clients):
            for path in pages:
                status, headers, body = client.request("GET", path)
                assert status == 200, (index, path, status)
                served = f"node {index}: {path} ({headers.get('cache-status')})"
                assert b"Old words" not in body, f"the old page after the edit returned: {served}"
                assert b"New words from C" in body, served


@pytest.mark.usefixtures("show_logs_on_failure")
def test_an_application_password_made_on_one_node_works_on_another(cluster: Cluster) -> None:
    with cluster.clients() as clients:
        cookie = log_in(clients[A], "ada", "ada-password")
        nonce = rest_nonce(clients[A], cookie)
    status, created = cluster.rest(
        A,
        "POST",
        "/site-json/site/v2/users/me/application-passwords",
        {"name": "made on A"},
        session_headers(cookie, nonce),
    )
    assert status == 201, created
    password = created["password"]
    status, me = cluster.rest(C, "GET", f"{ME}?context=edit", headers=basic("ada", password))
    assert status == 200, me
    assert me["username"] == "ada"
    status, refused = cluster.rest(C, "GET", ME, headers=basic("ada", "abcd " * 5 + "abcd"))
    assert status == 401, refused


@pytest.mark.usefixtures("show_logs_on_failure")
def test_a_logout_on_one_node_ends_the_session_on_every_node(cluster: Cluster) -> None:
    with cluster.clients() as clients:
        cookie = log_in(clients[A], "ada", "ada-password")
        for client in clients:
            status, _, _ = client.request(
                "GET", "/site-admin/rest-nonce", headers={"Cookie": cookie}
            )
            assert status == 200
        status, _, confirm = clients[B].request("GET", "/logout", headers={"Cookie": cookie})
        found = re.search(rb'name="_sitenonce" value="([0-9a-f]+)"', confirm)
        assert status == 200
        assert found is not None, confirm[:500]
        status, headers, _ = clients[B].request(
            "POST",
            "/logout",
            urlencode({"_sitenonce": found.group(1).decode()}).encode(),
            {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
        )
        assert (status, headers["location"]) == (303, "/login?loggedout=true")
        for index, client in enumerate(clients):
            status, _, body = client.request(
                "GET", "/site-admin/rest-nonce", headers={"Cookie": cookie}
            )
            assert status == 403, (index, body[:300])
        status, _, body = clients[A].request(
            "POST",
            POSTS,
            json.dumps({"title": "After logout"}).encode(),
            {"Cookie": cookie, "Content-Type": "application/json"},
        )
        assert status == 401, body[:300]
