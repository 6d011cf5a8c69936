"""The table of hook names (`sitecache.hook_names.HOOKS`) against the package's source, and the
debug message a callback added to an unknown name gets."""

from __future__ import annotations

import ast
import builtins
import importlib
import logging
from dataclasses import dataclass
from pathlib import Path

import pytest

import sitecache
from sitecache.hook_names import HOOKS, HookArg, HookSpec, action_hook, filter_hook
from sitecache.hooks import Hooks

PACKAGE = Path(sitecache.__file__).parent

#: The methods that fire a hook (their first argument is its name) and the kind they fire.
FIRING = {
    "do_action": "action",
    "do_action_reporting": "action",
    "apply_filters": "filter",
    # the content service's: fired now, or when the surrounding transaction commits
    "_fire": "action",
    "queue_action": "action",
}
#: The methods that name a hook without firing it.
NAMING = ("add_action", "add_filter", "has_filter", "has_action", "remove_filter", "callbacks")

#: Functions that pass on a name they were given (the content service's queue of actions):
#: what they fire is what their callers name, and those are checked.
FORWARDERS = {
    ("site/content_base.py", "_fire"),
    ("site/content_base.py", "queue_action"),
    ("site/content_base.py", "batch"),
}


@dataclass(frozen=True)
class Site:
    """One call that fires or names a hook."""

    module: str
    line: int
    method: str
    name: str | None  # None: not a string the source spells out
    arguments: int | None  # after the name; None when some are unpacked (*args)
    function: str


def _names_assigned(function: ast.AST, variable: str) -> list[str] | None:
    """The strings ``variable`` is given in ``function`` (``x = "a" if c else "b"``)."""
    found: list[str] = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign):
            continue
        if not any(isinstance(t, ast.Name) and t.id == variable for t in node.targets):
            continue
        values = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else []
        values = values or [node.value]
        if not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
            return None
        found += [str(v.value) for v in values if isinstance(v, ast.Constant)]
    return found or None


class _HookCalls(ast.NodeVisitor):
    """Collects the calls of one module that fire or name a hook, with their function."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.sites: list[Site] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.functions.append(node)
        self.generic_visit(node)
        self.functions.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        if not isinstance(node.func, ast.Attribute) or not node.args or not self.functions:
            return
        method = node.func.attr
        if method not in FIRING and method not in NAMING:
            return
        function = self.functions[-1]
        first = node.args[0]
        starred = any(isinstance(a, ast.Starred) for a in node.args[1:])
        count = None if starred else len(node.args) - 1
        names: list[str | None]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            names = [first.value]
        elif isinstance(first, ast.Name):
            assigned = _names_assigned(function, first.id)
            names = list(assigned) if assigned else [None]
        else:
            names = [None]
        self.sites += [
            Site(self.module, node.lineno, method, name, count, function.name) for name in names
        ]


def hook_sites() -> list[Site]:
    """Every call in the package that fires or names a hook, with the name it uses (the hooks
    module itself aside: the names there are its callers')."""
    sites: list[Site] = []
    words = (*FIRING, *NAMING)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        text = path.read_text(encoding="utf-8")
        if module == "hooks.py" or not any(word + "(" in text for word in words):
            continue
        visitor = _HookCalls(module)
        visitor.visit(ast.parse(text))
        sites += visitor.sites
    return sites


SITES = hook_sites()
FIRED = [site for site in SITES if site.method in FIRING]


def test_the_scan_finds_the_hooks_of_every_layer() -> None:
    fired = {site.name for site in FIRED}
    # the REST framework, users, the content site and the cache
    assert {"rest_api_init", "user_register", "save_post", "cache_post_tags"} <= fired
    assert {"activated_plugin", "deactivated_plugin"} <= fired  # through a variable
    assert len(fired) >= 50


def test_every_hook_the_package_fires_is_in_the_table() -> None:
    missing = sorted(
        f"{s.module}:{s.line} {s.method}({s.name!r})" for s in FIRED if s.name not in HOOKS
    )
    unresolved = {(s.module, s.function) for s in FIRED if s.name is None}
    # A name the source does not spell out is only passed on, never made up.
    assert unresolved == FORWARDERS
    assert [m for m in missing if "(None)" not in m] == []


def test_every_name_the_package_adds_a_callback_to_is_fired() -> None:
    named = {s.name for s in SITES if s.method in NAMING and s.name is not None}
    assert named - set(HOOKS) == set()


def test_every_hook_in_the_table_is_fired_somewhere() -> None:
    assert set(HOOKS) - {site.name for site in FIRED} == set()


@pytest.mark.parametrize("site", [s for s in FIRED if s.name in HOOKS], ids=str)
def test_each_hook_is_fired_as_its_kind_with_its_arguments(site: Site) -> None:
    assert site.name is not None
    spec = HOOKS[site.name]
    assert spec.kind == FIRING[site.method], site
    if site.arguments is not None:
        assert site.arguments == len(spec.args), (site, [a.name for a in spec.args])


def _outer_attributes(annotation: str) -> list[str]:
    """The dotted names ``annotation`` uses (``sitecache.site.models.Post``, ``typing.Any``)."""
    tree = ast.parse(annotation, mode="eval")
    inner = {
        id(child.value) for child in ast.walk(tree) if isinstance(child, ast.Attribute)
    }  # an attribute's base is part of a longer dotted name
    return [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and id(node) not in inner
    ]


@pytest.mark.parametrize("spec", HOOKS.values(), ids=lambda spec: spec.name)
def test_each_hook_argument_type_names_a_real_type(spec: HookSpec) -> None:
    for annotation in [spec.returns, *(arg.type for arg in spec.args)]:
        for dotted in _outer_attributes(annotation):
            module, _, name = dotted.rpartition(".")
            assert hasattr(importlib.import_module(module), name), (spec.name, dotted)
        tree = ast.parse(annotation, mode="eval")
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id not in ("typing", "sitecache"):
                assert hasattr(builtins, node.id), (spec.name, annotation)
    assert spec.description.strip()
    assert all(arg.description.strip() for arg in spec.args), spec.name


def test_a_filter_passes_a_value_and_an_action_returns_nothing() -> None:
    with pytest.raises(ValueError, match="passes no value"):
        HookSpec("my_filter", "filter", (), "x", "int")
    with pytest.raises(ValueError, match="returns nothing"):
        HookSpec("my_action", "action", (), "x", "int")


# ---------------------------------------------------------------------- names in use
def debug_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "sitecache.hooks"]


def test_a_callback_added_to_a_misspelt_hook_is_logged_with_the_closest_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="sitecache.hooks")
    hooks = Hooks()
    hooks.add_action("rest_api_inti", lambda server: None)
    [line] = debug_lines(caplog)
    assert "'rest_api_inti'" in line
    assert "did you mean 'rest_api_init'" in line
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]


def test_known_fired_and_declared_hooks_are_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="sitecache.hooks")
    hooks = Hooks()
    hooks.add_action("rest_api_init", lambda server: None)
    hooks.add_filter("rest_url", lambda url: url)
    # A plugin's own action, fired before others listen to it.
    hooks.do_action("greetings_sent", 3)
    hooks.add_action("greetings_sent", lambda count: None)
    # A plugin's own filter, declared.
    spec = filter_hook("greeting_text", "The greeting.", "str", HookArg("text", "str", "it"))
    hooks.register_hook(spec)
    hooks.add_filter("greeting_text", str.upper)
    assert debug_lines(caplog) == []
    assert hooks.hook_spec("greeting_text") is spec
    assert hooks.hook_spec("rest_url") is HOOKS["rest_url"]
    assert hooks.hook_spec("nothing_of_the_kind") is None
    assert hooks.declared == {"greeting_text": spec}
    # The callback still runs: the check only speaks.
    assert hooks.apply_filters("greeting_text", "hi") == "HI"


def test_an_undeclared_hook_still_works_after_the_message(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="sitecache.hooks")
    hooks = Hooks()
    seen: list[int] = []
    hooks.add_action("my_plugin_ready", seen.append)
    assert "did you mean" not in debug_lines(caplog)[0]  # nothing close: no suggestion
    hooks.do_action("my_plugin_ready", 7)
    assert seen == [7]


def test_declaring_refuses_the_package_hooks_and_a_conflicting_declaration() -> None:
    hooks = Hooks()
    with pytest.raises(ValueError, match="package's own"):
        hooks.register_hook(action_hook("save_post", "mine", HookArg("x", "int", "x")))
    first = action_hook("my_event", "Mine.", HookArg("count", "int", "how many"))
    hooks.register_hook(first)
    hooks.register_hook(first)  # the same declaration again (a plugin loaded twice) is fine
    with pytest.raises(ValueError, match="declared differently"):
        hooks.register_hook(action_hook("my_event", "Mine.", HookArg("count", "str", "text")))


def test_two_applications_keep_their_declarations_apart() -> None:
    one, two = Hooks(), Hooks()
    one.register_hook(action_hook("my_event", "Mine.", HookArg("count", "int", "how many")))
    assert two.hook_spec("my_event") is None
