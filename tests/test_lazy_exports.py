"""`sitecache.lazy_exports`: a package's names imported on first use, then kept."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sitecache.auth
import sitecache.rest


@pytest.mark.parametrize("package", [sitecache.auth, sitecache.rest])
def test_every_exported_name_resolves_and_an_unknown_one_is_an_attribute_error(
    package: object,
) -> None:
    for name in package.__all__:  # type: ignore[attr-defined]
        assert getattr(package, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        package.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(package, "no_such_name")


def test_a_name_is_imported_on_first_use_and_kept() -> None:
    script = (
        "import sys, sitecache.auth as auth\n"
        "assert 'sitecache.auth.service' not in sys.modules\n"
        "assert 'AuthService' not in vars(auth)\n"
        "service = auth.AuthService\n"
        "assert 'sitecache.auth.service' in sys.modules\n"
        "assert vars(auth)['AuthService'] is service\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)
