"""What the ``sitecache`` command line imports (#18): building the parser loads the standard
library only, and the cache commands no command-line user waits on the site for never load
the site, the REST route table, the templates, the image library or a database driver they do
not use. Each check runs in a new interpreter, as a typed command starts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sitecache.auth import AuthService, PasswordHasher
from sitecache.cli import parser as cli_parser

#: what a command that does not serve or render pages must not load
HEAVY = (
    "sitecache.app",
    "sitecache.site",
    "sitecache.rest.server",
    "sitecache.rest.routes",
    "sitecache.auth.service",
    "sitecache.auth.views",
    "jinja2",
    "PIL",
    "psycopg",
    "redis",
    "rich",
    "gunicorn",
    "werkzeug",
)

ROOT = Path(__file__).resolve().parents[1]


def a_site(tmp_path: Path) -> Path:
    """The data directory of a site (the commands refuse one that holds none)."""
    data_dir = tmp_path / "var"
    AuthService(data_dir, hasher=PasswordHasher(n=1024)).store.close()
    return data_dir


def loaded_after(code: str, tmp_path: Path) -> dict[str, object]:
    """Run ``code`` in a new interpreter (this checkout first on its path, no configuration
    from the environment); what it prints last, as JSON."""
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("SITECACHE_")
    }
    environment["PYTHONPATH"] = os.pathsep.join([str(ROOT), *sys.path])
    config = tmp_path / "sitecache.toml"
    config.write_text("password_hash_cost = 1024\n", encoding="utf-8")
    environment["SITECACHE_CONFIG"] = str(config)
    finished = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        check=False,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    result: dict[str, object] = json.loads(finished.stdout.splitlines()[-1])
    return result


REPORT = """
import json, sys
heavy = {heavy!r}
print(json.dumps({{"status": status, "loaded": sorted(
    name for name in sys.modules if name in heavy or name.startswith(tuple(h + "." for h in heavy))
)}}))
"""


def test_building_the_parser_imports_nothing_of_the_package(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from sitecache import cli\n"
        "cli.build_parser()\n"
        "status = 0\n"
        "import json\n"
        "print(json.dumps({'status': 0, 'loaded': sorted(name for name in sys.modules"
        " if name.startswith(('sitecache.', 'werkzeug', 'importlib.metadata'))"
        " and name not in ('sitecache.cli', 'sitecache.cli.parser', 'sitecache.errors'))}))\n"
    )
    assert loaded_after(code, tmp_path) == {"status": 0, "loaded": []}


@pytest.mark.parametrize(
    "arguments",
    [
        ["--version"],
        ["--help"],
        ["cache", "flush", "--help"],
        ["user", "create", "--help"],
    ],
)
def test_help_and_version_load_nothing_heavy(tmp_path: Path, arguments: list[str]) -> None:
    code = (
        "import contextlib, io\n"
        "from sitecache import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        cli.main({arguments!r})\n"
        "    except SystemExit as exit:\n"
        "        status = exit.code\n" + REPORT.format(heavy=(*HEAVY, "sitecache.cache"))
    )
    assert loaded_after(code, tmp_path) == {"status": 0, "loaded": []}


@pytest.mark.parametrize(
    "arguments",
    [
        ["cache", "flush", "--all", "--json"],
        ["cache", "flush"],
        ["cache", "stats", "--json"],
        ["cache", "status"],
    ],
)
def test_cache_commands_load_neither_the_site_nor_the_rest_server(
    tmp_path: Path, arguments: list[str]
) -> None:
    data_dir = a_site(tmp_path)
    code = (
        "import contextlib, io\n"
        "from sitecache import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = cli.main(['--data-dir', {str(data_dir)!r}, *{arguments!r}])\n"
        + REPORT.format(heavy=HEAVY)
    )
    assert loaded_after(code, tmp_path) == {"status": 0, "loaded": []}


def test_a_flush_with_site_plugins_still_loads_the_site(tmp_path: Path) -> None:
    """The site's code may listen to purges: with configured plugins, flush builds the site."""
    data_dir = a_site(tmp_path)
    config = tmp_path / "plugins.toml"
    config.write_text(
        'password_hash_cost = 1024\nplugins = ["tests.test_cli_imports:no_op_plugin"]\n',
        encoding="utf-8",
    )
    code = (
        "import contextlib, io, sys\n"
        "from sitecache import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = cli.main(['--config', {str(config)!r}, '--data-dir', {str(data_dir)!r},"
        " 'cache', 'flush', '--all'])\n" + REPORT.format(heavy=("sitecache.app",))
    )
    assert loaded_after(code, tmp_path) == {"status": 0, "loaded": ["sitecache.app"]}


def no_op_plugin(app: object) -> None:
    """A site plugin that changes nothing (its presence is what the test above needs)."""


def test_the_grammar_shows_the_values_of_the_modules_it_does_not_import() -> None:
    from sitecache.auth import ROLES
    from sitecache.cache.api.static import DEFAULT_WEB_USER
    from sitecache.serving import DEFAULT_HEADER_TIMEOUT, DEFAULT_THREADS, DEFAULT_TIMEOUT

    assert cli_parser.ROLES == ROLES
    assert cli_parser.DEFAULT_WEB_USER == DEFAULT_WEB_USER
    assert (
        cli_parser.DEFAULT_THREADS,
        cli_parser.DEFAULT_TIMEOUT,
        cli_parser.DEFAULT_HEADER_TIMEOUT,
    ) == (DEFAULT_THREADS, DEFAULT_TIMEOUT, DEFAULT_HEADER_TIMEOUT)


@pytest.mark.parametrize("module", ["sitecache", "sitecache.cli"])
def test_python_dash_m_sitecache_is_the_command(tmp_path: Path, module: str) -> None:
    from sitecache import __version__

    done = subprocess.run(
        [sys.executable, "-m", module, "--version"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert __version__ in done.stdout


def test_every_command_of_the_grammar_names_a_function_of_a_command_module() -> None:
    """The parser builds without importing a command (`cli.COMMAND_MODULES`): a command whose
    module or function is misnamed would otherwise fail only when someone runs it."""
    from sitecache import cli

    assert set(cli.COMMAND_MODULES) == set(cli_parser.COMMANDS)
    for name, (module, function) in cli.COMMAND_MODULES.items():
        command = cli.load_command(name)
        assert callable(command)
        assert (command.__module__, command.__name__) == (f"sitecache.cli.{module}", function)
