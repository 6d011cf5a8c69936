"""One login rule, said and applied alike at every entry (#34): the REST API, the command line
and the user repository refuse and accept the same logins, and each says the rule in the same
words, which name ASCII letters (``ünïcode`` is refused: the old words said "letters")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from werkzeug.test import Client

from sitecache.auth.users import LOGIN_PATTERN, LOGIN_RULE
from sitecache.cli import main
from sitecache.domain_errors import InvalidValueError
from tests.auth.conftest import Site

#: (login, accepted by the rule)
LOGINS = [
    ("ünïcode", False),
    ("Ωmega", False),
    ("\uff41\uff53\uff43\uff49\uff49", False),  # full-width letters
    ("tab\there", False),
    ("x" * 61, False),
    ("plain.Login_1 @-", True),
    ("x" * 60, True),
]


def test_the_rule_names_ascii_letters() -> None:
    assert "ASCII letters" in LOGIN_RULE
    assert "1 to 60" in LOGIN_RULE


@pytest.mark.parametrize(("login", "accepted"), LOGINS)
def test_the_repository_applies_the_rule(site: Site, login: str, accepted: bool) -> None:
    assert bool(LOGIN_PATTERN.match(login)) is accepted
    if accepted:
        created = site.app.auth.users.create(login, "password123", "subscriber", "a@example.org")
        assert created.login == login
        return
    with pytest.raises(InvalidValueError) as refused:
        site.app.auth.users.create(login, "password123", "subscriber", "a@example.org")
    assert refused.value.message == LOGIN_RULE


@pytest.mark.parametrize(("login", "accepted"), LOGINS)
def test_the_rest_api_applies_and_says_the_rule(
    site_factory: Callable[..., Site], login: str, accepted: bool
) -> None:
    site = site_factory(application_passwords="on")
    response = Client(site.app).post(
        "/site-json/site/v2/users",
        json={"username": login, "password": "password123", "email": "someone@example.org"},
        headers=site.basic("administrator"),
    )
    assert (response.status_code == 201) is accepted, response.get_json()
    if not accepted:
        message = response.get_json()["data"]["params"]["username"]
        assert message.startswith("This username is invalid because it uses illegal characters.")
        assert message.endswith(LOGIN_RULE)


@pytest.mark.parametrize("login", [login for login, accepted in LOGINS if not accepted][:3])
def test_the_command_line_applies_and_says_the_rule(
    site: Site, login: str, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = Path(site.app.config.data_dir)
    status = main(["--data-dir", str(data_dir), "user", "create", login, "--password", "x" * 12])
    assert status != 0
    assert LOGIN_RULE in capsys.readouterr().err
