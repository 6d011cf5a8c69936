"""The one-time messages between a form's POST and the page it redirects to are sealed for the
session that made them (`sitecache.auth.flash`)."""

from __future__ import annotations

from sitecache.auth.flash import FlashMessages, open_sealed, seal
from sitecache.auth.sessions import Session
from tests.auth.conftest import Site

MESSAGE = {"notice": "Created laptop.", "created": {"password": "abcd efgh ijkl mnop qrst uvwx"}}


def session(site: Site, token: str) -> Session:
    return Session(site.users["author"], token, 2_000_000_000, remember=False)


def test_a_sealed_message_opens_only_for_its_session_and_its_row(site: Site) -> None:
    mine, other = session(site, "t" * 43), session(site, "u" * 43)
    value = seal(mine, "flash:row", MESSAGE)
    assert "abcd" not in value
    assert "laptop" not in value
    assert open_sealed(mine, "flash:row", value) == MESSAGE
    assert open_sealed(other, "flash:row", value) is None  # another session's key
    assert open_sealed(mine, "flash:another-row", value) is None  # copied to another row


def test_an_altered_or_unknown_value_does_not_open(site: Site) -> None:
    mine = session(site, "t" * 43)
    value = seal(mine, "flash:row", MESSAGE)
    flipped = value[:-2] + ("A" if value[-2] != "A" else "B") + value[-1]
    assert open_sealed(mine, "flash:row", flipped) is None
    assert open_sealed(mine, "flash:row", '{"notice": "plaintext"}') is None
    assert open_sealed(mine, "flash:row", "v1.not base64!") is None
    assert open_sealed(mine, "flash:row", "v1.") is None


def test_two_seals_of_one_message_differ(site: Site) -> None:
    mine = session(site, "t" * 43)
    assert seal(mine, "flash:row", MESSAGE) != seal(mine, "flash:row", MESSAGE)


def test_a_message_is_taken_once_by_its_session(site: Site) -> None:
    flash = FlashMessages(site.app.auth.store, site.app.auth.flash.clock)
    mine, other = session(site, "t" * 43), session(site, "u" * 43)
    reference = flash.put(mine, MESSAGE)
    assert flash.take(other, reference) is None
    assert flash.take(mine, reference) == MESSAGE
    assert flash.take(mine, reference) is None


def test_a_message_an_earlier_release_kept_in_plaintext_is_deleted_by_the_next_one(
    site: Site,
) -> None:
    flash = FlashMessages(site.app.auth.store, site.app.auth.flash.clock)
    name = "flash:9999999999:0123456789abcdef0123456789abcdef:old"
    with site.app.auth.store.transaction() as connection:
        connection.execute(
            "INSERT INTO options (name, value) VALUES (?, ?)",
            (name, '{"created": {"password": "abcd efgh ijkl mnop qrst uvwx"}}'),
        )
    flash.put(session(site, "t" * 43), MESSAGE)
    rows = (
        site.app.auth.store.connection()
        .execute("SELECT name, value FROM options WHERE name LIKE 'flash:%'")
        .fetchall()
    )
    assert len(rows) == 1  # the new message only
    assert str(rows[0][0]) != name
    assert str(rows[0][1]).startswith("v1.")
