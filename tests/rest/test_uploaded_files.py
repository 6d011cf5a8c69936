"""File parts and cut-off bodies in the REST request layer (#21 point 2)."""

from __future__ import annotations

import io

import pytest
from werkzeug.exceptions import ClientDisconnected
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from sitecache.rest.http_request import build_request
from sitecache.rest.uploads import UploadedFile


def form_request(**files: tuple[bytes, str, str]) -> Request:
    builder = EnvironBuilder(
        method="POST",
        data={
            "title": "T",
            **{
                name: (io.BytesIO(data), filename, kind)
                for name, (data, filename, kind) in files.items()
            },
        },
    )
    try:
        return Request(builder.get_environ())
    finally:
        builder.close()


def test_file_parts_are_plain_values_beside_the_form_fields() -> None:
    http = form_request(file=(b"abc", "a.png", "image/png"))
    request = build_request(http, "/x", {})
    assert request.get_file_params() == {"file": UploadedFile("a.png", "image/png", b"abc")}
    assert request.get_file_params()["file"].size == 3
    assert request.get_param("title") == "T"


def test_a_body_shorter_than_its_content_length_is_cut_off() -> None:
    builder = EnvironBuilder(method="POST", data=b"x" * 100, content_type="text/plain")
    environ = builder.get_environ()
    environ["wsgi.input"] = io.BytesIO(b"x" * 40)
    environ["wsgi.input_terminated"] = True  # as gunicorn marks it: werkzeug does not check
    with pytest.raises(ClientDisconnected):
        build_request(Request(environ), "/x", {})
