"""Every command of the documentation and the README is checked against the code.

The ``sitecache`` commands (in shell blocks and in the running text) must name existing
subcommands and options; the ``make`` targets must exist; the TOML blocks must be valid
configurations. What needs a live server (the curl recipes, ``sitecache serve`` with the
greetings example, the administrator's recovery) runs in tests/e2e/test_docs_commands.py.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest

from sitecache.cli import build_parser
from sitecache.config import load_config
from tests.doc_pages import REPOSITORY, blocks, inline_commands, page, pages, shell_commands

#: placeholder words of the pages' commands, and a value each
PLACEHOLDERS = {
    "LOGIN": "bob",
    "ROLE": "editor",
    "PW": "a-long-password",
    "UUID": "6f1d2c1e-8a7b-4c3d-9e0f-1a2b3c4d5e6f",
    "NAME": "script",
    "COMMAND": "init",
}


def sitecache_argv(command: str) -> list[str] | None:
    """The arguments after ``sitecache`` of a shell command, or ``None`` for other commands."""
    words = shlex.split(command)
    while words and re.match(r"^[A-Z_]+=", words[0]):
        words.pop(0)  # VARIABLE=value prefixes
    if not words or Path(words[0]).name != "sitecache":
        return None
    return [PLACEHOLDERS.get(word, word) for word in words[1:]]


def all_shell_commands() -> list[str]:
    commands = [c for block in blocks() if block.language == "sh" for c in shell_commands(block)]
    return commands + inline_commands()


def test_the_pages_have_the_commands_this_test_reads() -> None:
    commands = all_shell_commands()
    assert any(command.startswith("curl") for command in commands)
    assert len([c for c in commands if sitecache_argv(c) is not None]) >= 20
    assert len(pages()) >= 30


@pytest.mark.parametrize(
    "command", sorted({c for c in all_shell_commands() if sitecache_argv(c) is not None})
)
def test_every_sitecache_command_of_the_docs_parses(command: str) -> None:
    argv = sitecache_argv(command)
    assert argv is not None
    if not argv and command in inline_commands():
        return  # the program named in the text
    if command in inline_commands() and (
        argv[-1] in ("…", "...") or (argv[-1] in subparsers_of(argv[:-1]) and subparsers_of(argv))
    ):
        # The running text names a command group (`sitecache cache …`): it must exist.
        path = [word for word in argv if word not in ("…", "...")]
        assert path, command
        assert subparsers_of(path[:-1]).get(path[-1]) is not None, command
        return
    try:
        build_parser().parse_args(argv)
    except SystemExit as exc:
        if argv[-1:] in (["--help"], ["--version"]) and exc.code == 0:
            return
        if command in inline_commands() and exc.code == 2 and parser_of(argv) is not None:
            return  # a command named in the text, without its required arguments
        raise AssertionError(f"the docs' `{command}` is refused: exit {exc.code}") from exc


def parser_of(path: list[str]) -> argparse.ArgumentParser | None:
    """The parser of the subcommand ``path`` (``["cache", "flush"]``), or ``None``."""
    parser = build_parser()
    for word in path:
        found = subparsers(parser).get(word)
        if found is None:
            return None
        parser = found
    return parser


def subparsers_of(path: list[str]) -> dict[str, argparse.ArgumentParser]:
    parser = parser_of(path)
    return subparsers(parser) if parser is not None else {}


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_make_target_of_the_docs_exists() -> None:
    targets: set[str] = set()
    for path in pages():
        text = path.read_text(encoding="utf-8")
        targets |= set(re.findall(r"`(?:[A-Z_]+=\S+ )*make ([\w-]+)", text))
    targets |= {c.split()[1] for c in all_shell_commands() if c.startswith("make ")}
    assert {"run", "test", "bench", "lint", "docs"} <= targets
    makefile = (REPOSITORY / "Makefile").read_text(encoding="utf-8")
    defined = set(re.findall(r"^([\w.-]+):", makefile, flags=re.MULTILINE))
    assert targets - defined == set()


def test_every_toml_block_of_the_docs_is_a_valid_configuration() -> None:
    configs = {
        block.where: load_config(tomllib.loads(block.text))
        for block in blocks()
        if block.language == "toml"
    }
    assert len(configs) >= 3
    [several] = [c for where, c in configs.items() if "several-nodes" in where]
    assert several.cache_backend == "redis"
    assert several.cache_namespace
    assert several.database_url.startswith("postgresql://")
    [static] = [c for where, c in configs.items() if "static-files" in where]
    assert static.static_root == Path("/var/cache/sitecache/static")


def test_make_run_is_what_the_docs_say() -> None:
    dry = subprocess.run(
        ["make", "-n", "-o", ".venv/.installed-run", "run", "PORT=8001"],
        cwd=REPOSITORY, capture_output=True, text=True, check=True, timeout=30,
        env={**os.environ},
    ).stdout  # fmt: skip
    assert "sitecache serve --demo --bind '127.0.0.1:8001'" in dry


def test_make_run_installs_only_what_serving_needs() -> None:
    """The first run installs the package and its runtime dependencies, not the test extra
    nor uWSGI; every other target installs them."""
    makefile = (REPOSITORY / "Makefile").read_text(encoding="utf-8")
    run_rule = re.search(r"^\$\(RUN_STAMP\):.*?\n\n", makefile, re.MULTILINE | re.DOTALL)
    assert run_rule is not None
    assert "pip install" in run_rule.group(0)
    assert "[test]" not in run_rule.group(0)
    assert "uwsgi" not in run_rule.group(0)
    assert re.search(r"^run: \$\(RUN_STAMP\)$", makefile, re.MULTILINE)
    assert re.search(r"^\$\(STAMP\): \$\(RUN_STAMP\)$", makefile, re.MULTILINE)
    for target in ("lint", "typecheck", "imports", "unit", "docs"):
        assert re.search(rf"^{target}: \$\(STAMP\)$", makefile, re.MULTILINE), target


def test_the_readme_is_short_and_links_into_the_docs() -> None:
    readme = REPOSITORY / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    linked = set(re.findall(r"\]\((docs/[\w/.-]+\.md)\)", text))
    assert len(linked) >= 20
    for target in linked:
        assert (REPOSITORY / target).is_file(), target


def test_the_changelog_has_a_versioned_release_section() -> None:
    import sitecache

    text = (REPOSITORY / "CHANGES.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in text
    release = re.search(rf"^## \[{re.escape(sitecache.__version__)}\] - \d{{4}}-\d\d-\d\d$",
                        text, re.MULTILINE)  # fmt: skip
    assert release is not None
    section = text[release.end() :].split("\n## [", 1)[0]
    assert len(section.splitlines()) <= 150


def test_no_page_cites_a_file_outside_the_repository_or_an_issue_number() -> None:
    for path in pages():
        text = path.read_text(encoding="utf-8")
        outside = ("SPEC", "CACHE_API", "API", "wp-v2-routes", "wp-server")
        for name in (f"{stem}.md" for stem in outside):
            assert name not in text, (path, name)
        prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
        assert not re.findall(r"(?<![\w&/])#\d+\b", prose), path


def test_the_several_nodes_nginx_block_sends_the_host_with_its_port() -> None:
    [block] = [b for b in blocks(page("howto/several-nodes.md")) if b.language == "nginx"]
    assert "proxy_set_header Host $http_host;" in block.text
    assert "$host;" not in block.text


def test_the_waitress_recipe_binds_loopback() -> None:
    commands = [c for c in all_shell_commands() if c.split()[0:1] and "waitress-serve" in c]
    assert commands
    for command in commands:
        assert "--listen=127.0.0.1:" in command, command
