"""Media uploads through a real gunicorn (#21 point 2): a real image in and served back, and
a client that sends less than its ``Content-Length`` and hangs up leaves nothing behind."""

from __future__ import annotations

import base64
import io
import json
import re
import socket
from pathlib import Path

import pytest
from PIL import Image

from tests.e2e.server import LiveServer
from tests.e2e.test_auth import cli

MEDIA = "/site-json/site/v2/media"


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), "purple").save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture(scope="module")
def author(live_server: LiveServer) -> dict[str, str]:
    for login, role in (("ada", "administrator"), ("uma", "author")):
        cli(live_server, "user", "create", login, "--role", role, "--password", f"{login}-pass")
    output = cli(live_server, "app-password", "create", "uma", "--name", "uploads")
    found = re.search(r"password: ((?:\w{4} ){5}\w{4})", output)
    assert found is not None, output
    token = base64.b64encode(f"uma:{found.group(1)}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def stored_files(live_server: LiveServer) -> list[Path]:
    root = live_server.data_dir / "uploads"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_a_real_image_is_uploaded_and_served_back(
    live_server: LiveServer, author: dict[str, str]
) -> None:
    image = png()
    response = live_server.request(
        "POST",
        MEDIA,
        body=image,
        headers={
            **author,
            "Content-Type": "image/png",
            "Content-Disposition": 'attachment; filename="../../etc/e2e photo.png"',
        },
    )
    assert response.status == 201, response.body
    data = json.loads(response.body)
    assert (data["media_details"]["width"], data["media_details"]["height"]) == (40, 30)
    path = "/uploads/" + data["source_url"].split("/uploads/", 1)[1]
    served = live_server.request("GET", path)
    assert served.status == 200
    assert served.body == image
    assert served.headers["content-type"] == "image/png"
    assert served.headers["x-content-type-options"] == "nosniff"
    assert live_server.request("GET", "/uploads/../sitecache.toml").status == 404


def test_a_client_that_hangs_up_mid_upload_leaves_no_file_and_no_row(
    live_server: LiveServer, author: dict[str, str]
) -> None:
    before = stored_files(live_server)
    listed = live_server.request("GET", f"{MEDIA}?context=edit", headers=author)
    count = int(listed.headers["x-site-total"])
    image = png() + b"\0" * 200_000  # larger than one read
    head = (
        f"POST {MEDIA} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: image/png\r\n"
        'Content-Disposition: attachment; filename="cut.png"\r\n'
        f"Authorization: {author['Authorization']}\r\n"
        f"Content-Length: {len(image)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", live_server.port), timeout=30) as connection:
        connection.sendall(head + image[: len(image) // 3])
        connection.shutdown(socket.SHUT_WR)  # the rest never comes
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    if answer:  # the server may answer before the connection goes
        assert answer.startswith(b"HTTP/1.1 400"), answer[:200]
    # Another request on another connection is served after the cut one finished.
    after = live_server.request("GET", f"{MEDIA}?context=edit", headers=author)
    assert int(after.headers["x-site-total"]) == count
    assert stored_files(live_server) == before
