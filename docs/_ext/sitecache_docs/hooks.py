"""The hooks reference: every action and filter the package fires, from
`sitecache.hook_names.HOOKS` (the table a test checks against the package's source)."""

from __future__ import annotations

from sitecache_docs.generated import Generated, code, table

__all__ = ["hooks_reference"]

#: The sections of the page, in order, and the beginnings of their hooks' names (the first
#: that matches wins; the content site's take the rest).
_CONTENT = "The content site"
_GROUPS = (
    ("Users", ("user_", "profile_", "delete_user", "deleted_user", "get_avatar", "published_")),
    ("Users", ("rest_avatar_sizes",)),
    ("The page cache", ("cache_",)),
    ("The REST framework", ("rest_", "doing_it_wrong", "deprecated_")),
)
_ORDER = ("The REST framework", _CONTENT, "Users", "The page cache")


def _group(name: str) -> str:
    for title, prefixes in _GROUPS:
        if name.startswith(prefixes):
            return title
    return _CONTENT


def _signature(arguments: tuple[tuple[str, str], ...]) -> str:
    return ", ".join(f"{name}: {kind}" for name, kind in arguments)


def _short(annotation: str) -> str:
    """An annotation with the package's and typing's module paths left out."""
    words = []
    for word in annotation.split(" "):
        head, _, rest = word.partition("[")
        if head.startswith(("sitecache.", "typing.")):
            head = head.rsplit(".", 1)[1]
        words.append(head + ("[" + rest if rest else ""))
    return " ".join(words).replace("typing.Any", "Any")


def hooks_reference() -> Generated:
    """One table per part of the package: each hook's kind, the arguments its callbacks
    receive (the value filtered first), what a filter's callbacks return, and what it is for.
    A hook or an argument without a description is a problem."""
    from sitecache.hook_names import HOOKS

    problems: list[str] = []
    rows: dict[str, list[tuple[str, str, str, str, str]]] = {}
    for name in sorted(HOOKS):
        spec = HOOKS[name]
        if not spec.description.strip():
            problems.append(f"the hook {name!r} has no description")
        for arg in spec.args:
            if not arg.description.strip():
                problems.append(
                    f"the argument {arg.name!r} of the hook {name!r} has no description"
                )
        arguments = tuple((arg.name, _short(arg.type)) for arg in spec.args)
        described = "; ".join(f"`{arg.name}`: {arg.description}" for arg in spec.args)
        rows.setdefault(_group(name), []).append(
            (
                code(name),
                spec.kind,
                code(f"({_signature(arguments)})"),
                code(_short(spec.returns)) if spec.kind == "filter" else "",
                f"{spec.description} {described}".strip(),
            )
        )
    sections = []
    for title in _ORDER:
        if title in rows:
            header = ("hook", "kind", "callback arguments", "returns", "meaning")
            sections.append(f"### {title}\n\n" + table(header, rows[title]))
    return Generated("\n".join(sections), problems)
