"""``site/v2/media``: uploads (form and raw body), limits, names, serving, deleting (#21)."""

from __future__ import annotations

import base64
import io
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from werkzeug.datastructures import Headers
from werkzeug.test import Client, EnvironBuilder, TestResponse, run_wsgi_app
from werkzeug.wrappers import Response

from sitecache.app import App
from tests.conftest import AppFactory, both_engines

#: Every case runs on SQLite and on PostgreSQL (the site store's two engines).
pytestmark = both_engines


MEDIA = "/site-json/site/v2/media"


def png(width: int = 3, height: int = 2, color: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, "PNG")
    return buffer.getvalue()


def jpeg(width: int = 5, height: int = 4) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), "blue").save(buffer, "JPEG")
    return buffer.getvalue()


class Site:
    def __init__(self, app: App) -> None:
        self.app = app
        self.client = Client(app)
        self.auth: dict[str, dict[str, str]] = {}
        self.ids: dict[str, int] = {}
        for role in ("administrator", "author", "contributor", "subscriber"):
            user = app.auth.users.create(role, "password123", role)
            password, _ = app.auth.app_passwords.create(user, "tests", "")
            token = base64.b64encode(f"{role}:{password}".encode()).decode()
            self.auth[role] = {"Authorization": f"Basic {token}"}
            self.ids[role] = user.id

    def upload_form(
        self,
        data: bytes,
        filename: str,
        content_type: str,
        role: str | None = "author",
        **fields: str,
    ) -> TestResponse:
        return self.client.post(
            MEDIA,
            headers=self.auth[role] if role else {},
            data={"file": (io.BytesIO(data), filename, content_type), **fields},
        )

    def upload_raw(
        self,
        data: bytes,
        content_type: str | None,
        disposition: str | None,
        role: str | None = "author",
        query: str = "",
    ) -> TestResponse:
        headers = dict(self.auth[role]) if role else {}
        if content_type is not None:
            headers["Content-Type"] = content_type
        if disposition is not None:
            headers["Content-Disposition"] = disposition
        return self.client.post(f"{MEDIA}{query}", headers=headers, data=data)

    def call(self, method: str, path: str, role: str | None = None, body: Any = None) -> Any:
        headers = dict(self.auth[role]) if role else {}
        if body is not None:
            headers["Content-Type"] = "application/json"
        return self.client.open(
            path, method=method, headers=headers, data=json.dumps(body) if body else None
        )

    def uploads(self) -> list[Path]:
        root = self.app.config.uploads_directory
        return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []

    def attachment_rows(self) -> int:
        connection = self.app.content.store.connection()
        return int(connection.execute("SELECT COUNT(*) FROM attachments").fetchone()[0])


@pytest.fixture
def media_site(app_factory: AppFactory) -> Site:
    return Site(app_factory(application_passwords="on"))


def test_a_real_png_uploaded_by_form_is_stored_described_and_served(media_site: Site) -> None:
    image = png(3, 2)
    response = media_site.upload_form(image, "Holiday Photo.png", "image/png", alt_text="Sea")
    assert response.status_code == 201, response.get_data(as_text=True)
    data = response.get_json()
    assert data["media_type"] == "image"
    assert data["mime_type"] == "image/png"
    assert data["alt_text"] == "Sea"
    assert data["title"]["rendered"] == "Holiday Photo"
    details = data["media_details"]
    assert (details["width"], details["height"], details["filesize"]) == (3, 2, len(image))
    assert data["source_url"].startswith("http://example.org/uploads/")
    assert data["filename"].startswith("holiday-photo-")
    assert data["filename"].endswith(".png")
    assert response.headers["Location"].endswith(f"/site/v2/media/{data['id']}")
    (stored,) = media_site.uploads()
    assert stored.read_bytes() == image
    assert stat.S_IMODE(stored.stat().st_mode) == 0o644
    assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o755

    with media_site.client.get(data["source_url"].removeprefix("http://example.org")) as served:
        assert served.status_code == 200
        assert served.get_data() == image
    assert served.headers["Content-Type"] == "image/png"
    assert served.headers["X-Content-Type-Options"] == "nosniff"
    assert "max-age=31536000" in served.headers["Cache-Control"]
    assert served.headers["Last-Modified"]
    etag = served.headers["ETag"]
    assert etag.startswith('"')  # strong
    again = media_site.client.get(
        data["source_url"].removeprefix("http://example.org"), headers={"If-None-Match": etag}
    )
    assert again.status_code == 304


def test_a_jpeg_sent_as_the_raw_body_with_content_disposition(media_site: Site) -> None:
    image = jpeg(5, 4)
    response = media_site.upload_raw(
        image, "image/jpeg", 'attachment; filename="cat.jpeg"', query="?title=Kitty"
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    data = response.get_json()
    assert data["title"]["rendered"] == "Kitty"
    assert data["media_details"]["width"] == 5
    assert data["filename"].endswith(".jpg")


@pytest.mark.parametrize(
    ("content_type", "disposition", "code"),
    [
        (None, 'attachment; filename="a.png"', "rest_upload_no_content_type"),
        ("image/png", None, "rest_upload_no_content_disposition"),
        ("image/png", "attachment", "rest_upload_invalid_disposition"),
        ("image/png", 'attachment; filename=""', "rest_upload_invalid_disposition"),
    ],
)
def test_a_raw_upload_needs_its_type_and_a_file_name(
    media_site: Site, content_type: str | None, disposition: str | None, code: str
) -> None:
    response = media_site.upload_raw(png(), content_type, disposition)
    assert response.status_code == 400
    assert response.get_json()["code"] == code
    assert media_site.uploads() == []


def test_an_upload_without_data_is_refused(media_site: Site) -> None:
    response = media_site.call("POST", MEDIA, "author")
    assert response.get_json()["code"] == "rest_upload_no_data"
    other_field = media_site.client.post(
        MEDIA,
        headers=media_site.auth["author"],
        data={"picture": (io.BytesIO(png()), "a.png", "image/png")},
    )
    assert other_field.get_json()["code"] == "rest_upload_no_data"
    assert media_site.uploads() == []


def test_an_oversize_file_is_refused_with_wordpress_code_and_leaves_nothing(
    media_site: Site,
) -> None:
    media_site.app.content.update_option("upload_max_bytes", 1000)
    big = png(300, 300, "white") + b"\0" * 2000
    response = media_site.upload_form(big, "big.png", "image/png")
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_upload_file_too_big"
    assert media_site.uploads() == []
    assert media_site.attachment_rows() == 0


def test_a_body_over_the_request_limit_is_a_413(
    media_site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sitecache.rest.http.MAX_BODY_BYTES", 2000)
    monkeypatch.setattr("sitecache.app.MAX_BODY_BYTES", 2000)
    monkeypatch.setattr("sitecache.rest.http_request.MAX_BODY_BYTES", 2000)
    response = media_site.upload_raw(b"x" * 5000, "text/plain", 'attachment; filename="a.txt"')
    assert response.status_code == 413
    assert response.get_json()["code"] == "rest_payload_too_large"
    assert media_site.uploads() == []


@pytest.mark.parametrize(
    ("data", "filename", "content_type"),
    [
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "x.svg", "image/svg+xml"),
        (b"<html><script>alert(1)</script></html>", "x.html", "text/html"),
        (b"MZ\x90\x00", "x.exe", "application/x-msdownload"),
        (png(), "x.png", "application/octet-stream"),  # allowed by its extension: control
    ],
)
def test_forbidden_types_are_refused(
    media_site: Site, data: bytes, filename: str, content_type: str
) -> None:
    response = media_site.upload_form(data, filename, content_type)
    if filename == "x.png":
        assert response.status_code == 201
        return
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_upload_sideload_error"
    assert media_site.uploads() == []


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (png(), "image/jpeg"),  # a PNG declared as a JPEG
        (b"<html>not an image</html>", "image/png"),
        (png()[:20], "image/png"),  # damaged
        (png(), "application/pdf"),
        (png(), "text/plain"),
    ],
)
def test_content_that_is_not_of_its_declared_type_is_refused(
    media_site: Site, data: bytes, content_type: str
) -> None:
    response = media_site.upload_form(data, "file.bin", content_type)
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_upload_sideload_error"
    assert media_site.uploads() == []
    assert media_site.attachment_rows() == 0


def test_svg_is_accepted_only_when_the_setting_allows_it_and_is_served_as_a_download(
    media_site: Site,
) -> None:
    types = [*media_site.app.content.get_option("upload_mime_types"), "image/svg+xml"]
    media_site.app.content.update_option("upload_mime_types", types)
    svg = b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>"
    response = media_site.upload_form(svg, "logo.svg", "image/svg+xml")
    assert response.status_code == 201
    path = response.get_json()["source_url"].removeprefix("http://example.org")
    with media_site.client.get(path) as served:
        assert served.status_code == 200
    assert served.headers["Content-Type"].startswith("image/svg+xml")
    assert served.headers["Content-Disposition"] == "attachment"
    assert "sandbox" in served.headers["Content-Security-Policy"]


@pytest.mark.parametrize(
    "filename",
    ["../../etc/passwd.png", "..\\..\\x.png", "a\x00b.png", "/abs/../../évil\t.png", "....png"],
)
def test_a_path_traversal_file_name_never_becomes_a_path(
    media_site: Site, tmp_path: Path, filename: str
) -> None:
    response = media_site.upload_form(png(), filename, "image/png")
    assert response.status_code == 201, response.get_data(as_text=True)
    (stored,) = media_site.uploads()
    root = media_site.app.config.uploads_directory.resolve()
    assert root in stored.resolve().parents
    name = stored.name
    assert name.endswith(".png")
    assert all(char.isascii() and (char.isalnum() or char in "-.") for char in name)
    assert ".." not in name
    title = response.get_json()["title"]["rendered"]
    assert "\x00" not in title
    assert "/" not in title
    assert "\\" not in title


def test_anonymous_and_subscribers_cannot_upload(media_site: Site) -> None:
    anonymous = media_site.upload_form(png(), "a.png", "image/png", role=None)
    assert anonymous.status_code == 401
    assert anonymous.get_json()["code"] == "rest_cannot_create"
    assert media_site.upload_form(png(), "a.png", "image/png", "subscriber").status_code == 403
    assert media_site.upload_form(png(), "a.png", "image/png", "contributor").status_code == 403
    assert media_site.uploads() == []


def test_updates_change_title_caption_and_alt_text(media_site: Site) -> None:
    made = media_site.upload_form(png(), "a.png", "image/png").get_json()
    path = f"{MEDIA}/{made['id']}"
    response = media_site.call(
        "POST",
        path,
        "author",
        {"title": "New", "caption": "A caption", "alt_text": "Alt", "description": "Long"},
    )
    assert response.status_code == 200, response.get_data(as_text=True)
    data = media_site.call("GET", path + "?context=edit", "author").get_json()
    assert data["title"]["raw"] == "New"
    assert data["caption"]["raw"] == "A caption"
    assert data["description"]["raw"] == "Long"
    assert data["alt_text"] == "Alt"
    assert media_site.call("POST", path, "contributor", {"title": "x"}).status_code == 403


def test_delete_needs_force_and_removes_the_row_and_the_file(media_site: Site) -> None:
    made = media_site.upload_form(png(), "a.png", "image/png").get_json()
    path = f"{MEDIA}/{made['id']}"
    refused = media_site.call("DELETE", path, "author")
    assert refused.status_code == 501
    assert refused.get_json()["code"] == "rest_trash_not_supported"
    assert len(media_site.uploads()) == 1
    assert media_site.call("DELETE", path, None).status_code == 401
    response = media_site.call("DELETE", path + "?force=true", "author")
    assert response.status_code == 200
    assert response.get_json()["deleted"] is True
    assert media_site.uploads() == []
    assert media_site.attachment_rows() == 0
    assert media_site.call("GET", path).status_code == 404
    source = made["source_url"].removeprefix("http://example.org")
    assert media_site.client.get(source).status_code == 404


def test_media_of_a_draft_is_hidden_from_the_public(media_site: Site) -> None:
    content = media_site.app.content
    author = media_site.ids["author"]
    draft = content.create_post(title="Draft", status="draft", author=author)
    public = content.create_post(title="Public", status="publish", author=author)
    hidden = media_site.upload_form(png(), "h.png", "image/png", post=str(draft.id)).get_json()
    shown = media_site.upload_form(png(), "s.png", "image/png", post=str(public.id)).get_json()
    loose = media_site.upload_form(png(), "l.png", "image/png").get_json()
    listed = {item["id"] for item in media_site.call("GET", MEDIA).get_json()}
    assert listed == {shown["id"], loose["id"]}
    assert media_site.call("GET", f"{MEDIA}/{hidden['id']}").status_code == 401
    everything = media_site.call("GET", MEDIA, "administrator").get_json()
    assert {item["id"] for item in everything} == {hidden["id"], shown["id"], loose["id"]}
    assert shown["post"] == public.id


def test_listing_filters_by_media_type_and_mime_type(media_site: Site) -> None:
    image = media_site.upload_form(png(), "a.png", "image/png").get_json()
    text = media_site.upload_form(b"hello", "a.txt", "text/plain").get_json()
    assert text["media_type"] == "file"
    images = media_site.call("GET", f"{MEDIA}?media_type=image").get_json()
    assert [item["id"] for item in images] == [image["id"]]
    texts = media_site.call("GET", f"{MEDIA}?mime_type=text/plain").get_json()
    assert [item["id"] for item in texts] == [text["id"]]


def test_uploading_to_a_post_needs_the_right_to_edit_it(media_site: Site) -> None:
    admin_post = media_site.app.content.create_post(title="Admin's", status="publish", author=1)
    response = media_site.upload_form(png(), "a.png", "image/png", post=str(admin_post.id))
    assert response.status_code == 403
    assert response.get_json()["code"] == "rest_cannot_edit"


def test_serving_refuses_traversal_and_unknown_paths(media_site: Site) -> None:
    made = media_site.upload_form(png(), "a.png", "image/png").get_json()
    secret = media_site.app.config.data_dir / "site.db"
    for path in (
        "/uploads/../site.db",
        "/uploads/%2e%2e/site.db",
        "/uploads/..%2fsite.db",
        "/uploads/2026/01/../../../site.db",
        "/uploads/" + made["source_url"].split("/uploads/")[1] + "/../x",
        "/uploads/.htaccess",
    ):
        response = media_site.client.get(path)
        assert response.status_code == 404, path
        if secret.exists():
            assert response.get_data() != secret.read_bytes()
    assert media_site.client.post("/uploads/2026/01/a.png").status_code == 405


class CutOffInput(io.RawIOBase):
    """A WSGI input that gives part of the body and then fails as a dropped client does."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if not self.data:
            raise OSError("client went away")
        size = min(len(buffer), len(self.data))
        buffer[:size] = self.data[:size]
        self.data = self.data[size:]
        return size


def _form_environ(site: Site, data: bytes) -> dict[str, Any]:
    builder = EnvironBuilder(
        path=MEDIA,
        method="POST",
        headers=Headers(site.auth["author"]),
        data={"file": (io.BytesIO(data), "a.png", "image/png")},
    )
    try:
        return builder.get_environ()
    finally:
        builder.close()


def _run(app: App, environ: dict[str, Any]) -> Response:
    iterable, status, headers = run_wsgi_app(app, environ, buffered=True)
    return Response(b"".join(iterable), status=status, headers=headers)


def test_a_body_cut_off_mid_upload_leaves_nothing(media_site: Site) -> None:
    environ = _form_environ(media_site, png(50, 50))
    body = environ["wsgi.input"].read()
    environ["wsgi.input"] = io.BufferedReader(CutOffInput(body[: len(body) // 2]))
    response = _run(media_site.app, environ)
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_incomplete_body"
    assert media_site.uploads() == []
    assert media_site.attachment_rows() == 0


def test_a_body_shorter_than_its_length_leaves_nothing(media_site: Site) -> None:
    environ = _form_environ(media_site, png(50, 50))
    body = environ["wsgi.input"].read()
    environ["wsgi.input"] = io.BytesIO(body[: len(body) // 2])
    response = _run(media_site.app, environ)
    assert response.status_code == 400
    assert media_site.uploads() == []
    assert media_site.attachment_rows() == 0


def test_a_failed_record_removes_the_written_file(
    media_site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the database is gone")

    monkeypatch.setattr(media_site.app.content, "create_post", refuse)
    response = media_site.upload_form(png(), "a.png", "image/png")
    assert response.status_code == 500
    assert media_site.uploads() == []
    assert media_site.attachment_rows() == 0


def test_a_failed_write_leaves_no_temporary_file(
    media_site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_fsync(descriptor: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("sitecache.site.upload_files.os.fsync", broken_fsync)
    response = media_site.upload_form(png(), "a.png", "image/png")
    assert response.status_code == 500
    assert response.get_json()["code"] == "rest_upload_unknown_error"
    assert "disk full" not in response.get_data(as_text=True)
    root = media_site.app.config.uploads_directory
    assert [p for p in root.rglob("*") if p.is_file()] == []
    assert media_site.attachment_rows() == 0


@pytest.fixture
def decompression_limit() -> Iterator[None]:
    saved = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = 100
    yield
    Image.MAX_IMAGE_PIXELS = saved


@pytest.mark.usefixtures("decompression_limit")
def test_a_decompression_bomb_is_refused(media_site: Site) -> None:
    response = media_site.upload_form(png(30, 30), "bomb.png", "image/png")
    assert response.status_code == 400
    assert response.get_json()["code"] == "rest_upload_sideload_error"
    assert media_site.uploads() == []


def test_uploads_root_setting_moves_the_files(app_factory: AppFactory, tmp_path: Path) -> None:
    site = Site(app_factory(application_passwords="on", uploads_root=str(tmp_path / "pub")))
    assert site.upload_form(png(), "a.png", "image/png").status_code == 201
    assert [p.parent.parent.parent for p in site.uploads()] == [tmp_path / "pub"]
    assert os.access(tmp_path / "pub", os.R_OK)


def test_the_page_cache_serves_a_file_and_drops_it_when_the_attachment_is_deleted(
    media_site: Site,
) -> None:
    made = media_site.upload_form(png(), "a.png", "image/png").get_json()
    url = made["source_url"].removeprefix("http://example.org")
    site = {"base_url": "http://example.org"}
    for expected in ("stored", "hit"):
        with media_site.client.get(url, **site) as served:
            assert served.status_code == 200
            assert expected in served.headers["Cache-Status"]
            assert served.headers["X-Content-Type-Options"] == "nosniff"
    response = media_site.call("DELETE", f"{MEDIA}/{made['id']}?force=true", "author")
    assert response.status_code == 200
    with media_site.client.get(url, **site) as gone:
        assert gone.status_code == 404
        assert "hit" not in gone.headers["Cache-Status"]
    root = media_site.app.config.uploads_directory
    assert [p for p in root.rglob("*") if p.is_file()] == []  # no hidden copy left


def test_a_failed_delete_keeps_the_file_served(
    media_site: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = media_site.upload_form(png(), "a.png", "image/png").get_json()

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the database is gone")

    monkeypatch.setattr(media_site.app.content, "delete_post", refuse)
    response = media_site.call("DELETE", f"{MEDIA}/{made['id']}?force=true", "author")
    assert response.status_code == 500
    assert media_site.attachment_rows() == 1
    path = made["source_url"].removeprefix("http://example.org")
    with media_site.client.get(path) as served:
        assert served.status_code == 200


def test_an_author_cannot_give_an_attachment_to_someone_else(media_site: Site) -> None:
    made = media_site.upload_form(png(), "a.png", "image/png").get_json()
    path = f"{MEDIA}/{made['id']}"
    other = media_site.ids["administrator"]
    refused = media_site.call("POST", path, "author", {"author": other})
    assert refused.status_code == 403
    assert refused.get_json()["code"] == "rest_cannot_edit_others"
    moved = media_site.call("POST", path, "administrator", {"author": other})
    assert moved.get_json()["author"] == other


def test_the_upload_options_refuse_unknown_types_and_bad_sizes(media_site: Site) -> None:
    from sitecache.domain_errors import InvalidValueError

    content = media_site.app.content
    assert "image/svg+xml" not in content.get_option("upload_mime_types")
    with pytest.raises(InvalidValueError):
        content.update_option("upload_mime_types", ["application/x-php"])
    with pytest.raises(InvalidValueError):
        content.update_option("upload_max_bytes", 0)
    content.update_option("upload_mime_types", ["text/plain"])
    refused = media_site.upload_form(png(), "a.png", "image/png")
    assert refused.get_json()["code"] == "rest_upload_sideload_error"
    assert media_site.upload_form(b"words", "a.txt", "text/plain").status_code == 201
