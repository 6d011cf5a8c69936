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
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from tests.cache.conftest import REDIS_URL, redis_or_skip
from tests.doc_pages import blocks, page
from tests.e2e.cluster import Cluster, basic, log_in, rest_nonce
from tests.e2e.deployment import wait_for
from tests.e2e.race import Client
from tests.e2e.server import free_port
from tests.postgres import schema

A, B, C = 0, 1, 2
POSTS = "/site-json/site/v2/posts"
ME = "/site-json/site/v2/users/me"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    redis_or_skip()
    # One PostgreSQL (a schema of its own) and one Redis; each node its own data directory.
    with schema() as database_url:
        nodes = Cluster(
            tmp_path_factory.mktemp("nodes"), 3, redis_url=REDIS_URL, database_url=database_url
        )
        nodes.start()
        try:
            nodes.cli(
                "user", "create", "ada", "--role", "administrator", "--password", "ada-password"
            )
            yield nodes
        finally:
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


NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)


def docs_nginx_config(cluster: Cluster, listen: int, directory: Path) -> str:
    """The docs' nginx block (docs/howto/several-nodes.md) with this cluster's nodes as its
    upstream servers and a loopback port to listen on, in a whole ``nginx.conf``."""
    [block] = [b for b in blocks(page("howto/several-nodes.md")) if b.language == "nginx"]
    servers = re.findall(r"server 10\.0\.0\.\d+:8000", block.text)
    assert len(servers) == len(cluster.nodes), block.text
    text = block.text.replace("listen 443 ssl;", f"listen 127.0.0.1:{listen};")
    for server, node in zip(servers, cluster.nodes, strict=True):
        text = text.replace(server, f"server 127.0.0.1:{node.port}")
    return (
        f"pid {directory}/nginx.pid;\nerror_log {directory}/error.log;\nevents {{}}\n"
        f"http {{\naccess_log off;\n{text}}}\n"
    )


@pytest.mark.skipif(NGINX is None, reason="needs nginx (Debian: apt-get install nginx-light)")
@pytest.mark.usefixtures("show_logs_on_failure")
def test_the_docs_nginx_block_spreads_the_requests_and_skips_a_dead_node(
    cluster: Cluster,
) -> None:
    assert NGINX is not None
    # nginx's workers (nobody, when started as root) must reach its temporary directories.
    directory = Path(tempfile.mkdtemp(prefix="sitecache-nodes-nginx-"))
    directory.chmod(0o755)
    listen = free_port()
    conf = directory / "nginx.conf"
    conf.write_text(docs_nginx_config(cluster, listen, directory), encoding="utf-8")
    nginx = subprocess.Popen([NGINX, "-c", str(conf), "-p", str(directory), "-g", "daemon off;"])
    front = Client(listen, cluster.host)
    try:
        wait_for(lambda: _answers(front), 10, "nginx to answer")
        marks = {index: node.log().count("/site-admin/rest-nonce")
                 for index, node in enumerate(cluster.nodes)}  # fmt: skip
        cookie = log_in(front, "ada", "ada-password")
        for _ in range(3 * len(cluster.nodes)):
            assert rest_nonce(front, cookie)  # whichever node answers knows the session
        for index, node in enumerate(cluster.nodes):
            assert node.log().count("/site-admin/rest-nonce") > marks[index], f"node {index}"
        cluster.kill(C)
        try:
            for _ in range(3 * len(cluster.nodes)):
                status, _, body = front.request("GET", "/")
                assert status == 200, body[:300]
                assert rest_nonce(front, cookie)
        finally:
            cluster.restart(C)
    finally:
        front.close()
        nginx.terminate()
        nginx.wait(timeout=30)
        error_log = directory / "error.log"
        if error_log.exists():
            print(f"----- nginx error log -----\n{error_log.read_text(errors='replace')}")
        shutil.rmtree(directory, ignore_errors=True)


def _answers(client: Client) -> bool:
    try:
        return client.request("GET", "/site-json/")[0] == 200
    except OSError:
        return False


@pytest.mark.usefixtures("show_logs_on_failure")
def test_a_purge_on_one_node_removes_the_static_copies_of_every_node(cluster: Cluster) -> None:
    # Trial 2: in static-file mode each node's nginx serves the copies under its own static
    # root (a node writes the copies of the pages it renders), and a purge removed only the
    # copies of the node that made it.
    status, _ = cluster.rest(A, "POST", "/site-json/site-cache/v1/settings", {"static_files": True})
    assert status == 200
    try:
        status, post = cluster.rest(
            A, "POST", POSTS, {"title": "Static everywhere", "status": "publish"}
        )
        assert status == 201, post
        time.sleep(1.2)  # every worker of every node reads the settings within a second
        paths = {A: "/", B: path_of(post["link"])}  # each rendered by one node
        copies = {
            index: cluster.data_dir(index) / "static" / cluster.host / path.strip("/")
            for index, path in paths.items()
        }
        copies = {index: directory / "index.html" for index, directory in copies.items()}
        with cluster.clients() as clients:
            for index, path in paths.items():

                def copied(node: int = index, page: str = path) -> bool:
                    clients[node].request("GET", page)
                    return copies[node].exists()

                wait_for(copied, 10, f"node {index}'s static copy of {path}")
        for path in paths.values():  # purged on the third node, which has no copies
            status, _ = cluster.rest(
                C, "POST", "/site-json/site-cache/v1/cache", {"url": f"http://{cluster.host}{path}"}
            )
            assert status == 200
        for copy in copies.values():  # within a timer tick or two of each node

            def gone(file: Path = copy) -> bool:
                return not file.exists()

            wait_for(gone, 10, f"{copy} to go")
    finally:
        cluster.rest(A, "POST", "/site-json/site-cache/v1/settings", {"static_files": False})
