"""Hooks: the per-application actions and filters plugins use.

Callbacks run by ascending priority, then in the order they were added; each receives only as
many arguments as its signature accepts; filters pass a value through every callback; hooks
live on one application and are never shared with another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from werkzeug.test import Client

from sitecache.app import App
from sitecache.hooks import Hooks
from sitecache.rest import RestServer, return_true
from tests.conftest import AppFactory


def recorder(log: list[str], label: str) -> Callable[..., None]:
    """An action callback that appends ``label`` to ``log`` whatever it is given."""

    def record(*args: Any) -> None:
        log.append(label)

    return record


# ---------------------------------------------------------------------- order
def test_callbacks_run_by_ascending_priority_then_in_insertion_order() -> None:
    hooks = Hooks()
    log: list[str] = []
    hooks.add_action("init", recorder(log, "late"), 20)
    hooks.add_action("init", recorder(log, "default-1"))
    hooks.add_action("init", recorder(log, "early"), 5)
    hooks.add_action("init", recorder(log, "default-2"), 10)
    hooks.add_action("init", recorder(log, "negative"), -1)

    hooks.do_action("init")

    assert log == ["negative", "early", "default-1", "default-2", "late"]


def test_a_callback_added_later_at_a_lower_priority_still_runs_first() -> None:
    hooks = Hooks()
    hooks.add_filter("title", lambda value: value + "-ten", 10)
    hooks.add_filter("title", lambda value: value + "-one", 1)

    assert hooks.apply_filters("title", "t") == "t-one-ten"


def test_every_firing_runs_the_callbacks_again() -> None:
    hooks = Hooks()
    log: list[str] = []
    hooks.add_action("tick", recorder(log, "tick"))

    hooks.do_action("tick")
    hooks.do_action("tick")

    assert log == ["tick", "tick"]


# ---------------------------------------------------------------------- filters
def test_a_filter_passes_its_value_through_every_callback_in_turn() -> None:
    hooks = Hooks()
    hooks.add_filter("number", lambda value: value * 10)
    hooks.add_filter("number", lambda value: value + 1)

    assert hooks.apply_filters("number", 2) == 21


def test_a_filter_without_callbacks_returns_the_value_unchanged() -> None:
    value = {"untouched": True}

    assert Hooks().apply_filters("nothing-here", value, "extra") is value


def test_a_filter_callback_may_replace_the_value_with_one_of_another_type() -> None:
    hooks = Hooks()
    hooks.add_filter("value", lambda value: None)
    hooks.add_filter("value", lambda value: [value])

    assert hooks.apply_filters("value", "x") == [None]


def test_an_action_returns_nothing_whatever_its_callbacks_return() -> None:
    hooks = Hooks()
    hooks.add_action("act", lambda: "ignored")
    do_action: Callable[..., object] = hooks.do_action  # its result is checked, not used

    assert do_action("act") is None


# ---------------------------------------------------------------------- accepted arguments
def takes_nothing() -> str:
    return "nothing"


def takes_value(value: str) -> tuple[str, ...]:
    return (value,)


def takes_two(value: str, first: str) -> tuple[str, ...]:
    return (value, first)


def takes_a_default(value: str, first: str, second: str = "default") -> tuple[str, ...]:
    return (value, first, second)


def takes_any(*args: str) -> tuple[str, ...]:
    return args


def takes_value_then_any(value: str, *rest: str) -> tuple[str, ...]:
    return (value, *rest)


class Plugin:
    """A plugin whose filter callback is a bound method (``self`` is not an argument)."""

    def title(self, value: str, first: str) -> tuple[str, ...]:
        return (value, first)


@pytest.mark.parametrize(
    ("callback", "received"),
    [
        pytest.param(takes_nothing, "nothing", id="no-parameters"),
        pytest.param(takes_value, ("v",), id="value-only"),
        pytest.param(takes_two, ("v", "a"), id="value-and-one"),
        pytest.param(takes_a_default, ("v", "a", "b"), id="parameter-with-default-counts"),
        pytest.param(takes_any, ("v", "a", "b", "c"), id="star-args-take-all"),
        pytest.param(takes_value_then_any, ("v", "a", "b", "c"), id="value-then-star-args"),
        pytest.param(Plugin().title, ("v", "a"), id="bound-method"),
        pytest.param(lambda value, first: (value, first), ("v", "a"), id="lambda"),
    ],
)
def test_a_filter_callback_receives_only_as_many_arguments_as_its_signature_accepts(
    callback: Callable[..., Any], received: object
) -> None:
    hooks = Hooks()
    hooks.add_filter("f", callback)

    assert hooks.apply_filters("f", "v", "a", "b", "c") == received


def test_an_action_callback_receives_only_the_arguments_it_accepts() -> None:
    hooks = Hooks()
    seen: list[tuple[Any, ...]] = []
    hooks.add_action("save", lambda: seen.append(()))
    hooks.add_action("save", lambda post: seen.append((post,)))
    hooks.add_action("save", lambda post, update: seen.append((post, update)))
    hooks.add_action("save", lambda *args: seen.append(args))

    hooks.do_action("save", "post", True, "extra")

    assert seen == [(), ("post",), ("post", True), ("post", True, "extra")]


# ---------------------------------------------------------------------- removal
def test_a_removed_callback_no_longer_runs() -> None:
    hooks = Hooks()
    log: list[str] = []
    kept, removed = recorder(log, "kept"), recorder(log, "removed")
    hooks.add_action("init", kept)
    hooks.add_action("init", removed)

    assert hooks.remove_action("init", removed) is True
    hooks.do_action("init")

    assert log == ["kept"]


def test_removal_needs_the_priority_the_callback_was_added_with() -> None:
    hooks = Hooks()
    hooks.add_filter("title", str.upper, 20)

    assert hooks.remove_filter("title", str.upper) is False
    assert hooks.apply_filters("title", "still") == "STILL"
    assert hooks.remove_filter("title", str.upper, 20) is True
    assert hooks.apply_filters("title", "gone") == "gone"


def test_removing_a_callback_that_was_never_added_reports_false() -> None:
    hooks = Hooks()

    assert hooks.remove_filter("title", str.upper) is False
    assert hooks.remove_action("never", takes_value) is False


def test_removing_one_callback_leaves_the_others_of_the_same_priority() -> None:
    hooks = Hooks()
    hooks.add_filter("title", lambda value: value + "a")
    hooks.add_filter("title", str.upper)
    hooks.add_filter("title", lambda value: value + "c")

    hooks.remove_filter("title", str.upper)

    assert hooks.apply_filters("title", "x") == "xac"


# ---------------------------------------------------------------------- asking
def test_has_filter_and_has_action_tell_whether_a_hook_has_callbacks() -> None:
    hooks = Hooks()
    assert not hooks.has_filter("title")
    assert not hooks.has_action("init")

    hooks.add_filter("title", str.upper)
    hooks.add_action("init", takes_nothing)

    assert hooks.has_filter("title")
    assert hooks.has_action("init")
    assert not hooks.has_filter("other")


def test_has_filter_with_a_callback_tells_whether_that_callback_is_attached() -> None:
    hooks = Hooks()
    hooks.add_filter("title", str.upper, 15)

    assert hooks.has_filter("title", str.upper)
    assert not hooks.has_filter("title", str.lower)
    assert not hooks.has_filter("other", str.upper)

    hooks.remove_filter("title", str.upper, 15)

    assert not hooks.has_filter("title", str.upper)
    assert not hooks.has_filter("title")


def test_did_action_counts_how_often_an_action_fired() -> None:
    hooks = Hooks()
    assert hooks.did_action("init") == 0

    hooks.do_action("init")
    hooks.do_action("init", "with", "arguments")

    assert hooks.did_action("init") == 2
    assert hooks.did_action("other") == 0


def test_did_action_counts_firings_without_callbacks_too() -> None:
    hooks = Hooks()

    hooks.do_action("lonely")

    assert hooks.did_action("lonely") == 1


def test_did_action_is_already_counted_while_the_action_runs() -> None:
    hooks = Hooks()
    seen: list[int] = []
    hooks.add_action("init", lambda: seen.append(hooks.did_action("init")))

    hooks.do_action("init")

    assert seen == [1]


def test_applying_a_filter_does_not_count_as_an_action() -> None:
    hooks = Hooks()
    hooks.add_filter("title", str.upper)

    hooks.apply_filters("title", "x")

    assert hooks.did_action("title") == 0


# ---------------------------------------------------------------------- isolation
def test_two_applications_do_not_share_callbacks(app_factory: AppFactory) -> None:
    first, second = app_factory(), app_factory()
    log: list[str] = []
    first.hooks.add_action("custom", recorder(log, "first"))
    first.hooks.add_filter("title", str.upper)

    second.hooks.do_action("custom")

    assert log == []
    assert not second.hooks.has_action("custom")
    assert second.hooks.apply_filters("title", "x") == "x"
    assert first.hooks.apply_filters("title", "x") == "X"
    assert first.hooks is not second.hooks


def test_two_applications_count_their_actions_separately(app_factory: AppFactory) -> None:
    first, second = app_factory(), app_factory()

    first.hooks.do_action("custom")

    assert first.hooks.did_action("custom") == 1
    assert second.hooks.did_action("custom") == 0


def test_routes_registered_on_one_application_do_not_appear_on_another(
    app_factory: AppFactory,
) -> None:
    first, second = app_factory(), app_factory()

    def register(server: RestServer) -> None:
        server.register_rest_route(
            "test-ns",
            "/only-first",
            {"callback": lambda request: {"app": "first"}, "permission_callback": return_true},
        )

    first.hooks.add_action("rest_api_init", register)

    assert Client(first).get("/site-json/test-ns/only-first").status_code == 200
    missing = Client(second).get("/site-json/test-ns/only-first")
    assert missing.status_code == 404
    assert missing.get_json()["code"] == "rest_no_route"


def test_an_application_starts_with_its_own_fresh_hooks(app: App) -> None:
    assert isinstance(app.hooks, Hooks)
    assert app.hooks.did_action("custom") == 0
    assert not app.hooks.has_action("custom")


def test_the_version_counts_every_change_to_the_callbacks() -> None:
    hooks = Hooks()

    def one(value: int) -> int:
        return value + 1

    start = hooks.version
    hooks.add_filter("f", one)
    assert hooks.version == start + 1
    assert not hooks.remove_filter("f", one, priority=5)  # not there: nothing changed
    assert hooks.version == start + 1
    assert hooks.remove_filter("f", one)
    hooks.add_action("a", one)
    hooks.remove_all("a")
    hooks.remove_all("a")  # already empty: nothing changed
    assert hooks.version == start + 4


def test_callbacks_lists_a_hooks_callbacks_in_the_order_they_run() -> None:
    hooks = Hooks()

    def late(value: int) -> int:
        return value

    def early(value: int) -> int:
        return value

    hooks.add_filter("f", late, 20)
    hooks.add_filter("f", early, 5)
    assert hooks.callbacks("f") == (early, late)
    assert hooks.callbacks("missing") == ()


def test_added_since_lists_what_was_added_after_a_mark_and_is_still_there() -> None:
    hooks = Hooks()
    hooks.add_action("before", print)
    mark = hooks.mark
    first, second = (lambda: None), (lambda value: value)
    hooks.add_action("init", first, 5)
    hooks.add_filter("value", second)
    assert hooks.added_since(mark) == [("init", first, 5), ("value", second, 10)]
    hooks.remove_filter("init", first, 5)
    assert hooks.added_since(mark) == [("value", second, 10)]
