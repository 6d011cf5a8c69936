"""The error codes the package answers, found in its source (no list to keep by hand).

Every place that makes an error with a code written in the source is read:

- `RestError` (``RestError("code", "message", {"status": N})``) and the domain exceptions
  (``NotFoundError("code", "message")``, whose class gives the status through the REST
  boundary's table);
- the helpers that make one from a code they are given (any function of the package with a
  parameter named ``code``: ``denied(request, "rest_cannot_edit", ...)``,
  ``_error("rest_no_route", ...)``), with the statuses their own error gives;
- a ``code=`` keyword, and a JSON body or detail written as a dict (``{"code": ...}``);
- a code held by a module constant (``INVALID_TYPE: Final = "rest_invalid_type"``).

The cache's warnings (``{"code": "gc_overdue", ...}``) are not errors: their codes are left out
(they have a reference of their own). A code is shown with its statuses, one message and the
modules that make it.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from sitecache_docs.generated import NONE, Generated, code, table

__all__ = ["error_codes_reference", "find_error_codes"]

#: What an error code looks like (``rest_no_route``, ``site_unavailable``).
CODE: Final = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
#: The status of an error whose data says ``authorization_required_status(user)``.
_AUTHORIZATION: Final = frozenset({401, 403})


#: One error a node makes: its code, a message, its statuses, the rank of its message.
_Made = tuple[str, str | None, frozenset[int], int]


def _statuses() -> dict[str, int]:
    from sitecache.rest.error_handlers import DOMAIN_ERROR_STATUSES

    found = {kind.__name__: status for kind, status in DOMAIN_ERROR_STATUSES.items()}
    import sitecache.domain_errors as domain

    for name in domain.__all__:
        kind = getattr(domain, name)
        for base in kind.__mro__:
            if base.__name__ in found:
                found.setdefault(name, found[base.__name__])
                break
    return found


def _literal(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return ast.unparse(node)[1:].strip("'\"")
    return None


def _status_of(node: ast.AST | None) -> frozenset[int]:
    """The statuses a RestError's data dict gives (``{"status": 404}``, or 401/403 for
    ``authorization_required_status(...)``)."""
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if _literal(key) != "status":
                continue
            if isinstance(value, ast.Constant) and isinstance(value.value, int):
                return frozenset({value.value})
            if isinstance(value, ast.Call) and _name(value.func) == "authorization_required_status":
                return _AUTHORIZATION
    return frozenset()


def _name(node: ast.AST) -> str:
    return node.attr if isinstance(node, ast.Attribute) else str(getattr(node, "id", ""))


@dataclass
class _Helper:
    """A function of the package that makes an error from a code it is given: where the code
    (and a ``status``, when it takes one) sit among a caller's arguments, and the statuses of
    the error it makes."""

    position: int
    status_position: int = -1
    statuses: set[int] = field(default_factory=set)


def _parse(package: Path) -> dict[str, ast.Module]:
    return {
        ".".join(path.relative_to(package.parent).with_suffix("").parts): ast.parse(
            path.read_text(encoding="utf-8")
        )
        for path in sorted(package.rglob("*.py"))
    }


def _subclasses(modules: dict[str, ast.Module], statuses: dict[str, int]) -> dict[str, int]:
    """``statuses`` with every class of the package that derives from one of them (a
    command's ``CommandError(DomainError)``), which answers its base's status."""
    found = dict(statuses)
    classes = [node for tree in modules.values() for node in ast.walk(tree)
               if isinstance(node, ast.ClassDef)]  # fmt: skip
    changed = True
    while changed:
        changed = False
        for node in classes:
            bases = [found[_name(base)] for base in node.bases if _name(base) in found]
            if bases and node.name not in found:
                found[node.name] = bases[0]
                changed = True
    return found


def _constants(modules: dict[str, ast.Module]) -> dict[str, str]:
    """Module-level names bound to a code-like string (``INVALID_TYPE``)."""
    found: dict[str, str] = {}
    for tree in modules.values():
        for node in tree.body:
            target: ast.expr | None = None
            if isinstance(node, ast.AnnAssign):
                target = node.target
            elif isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
            value = _literal(getattr(node, "value", None))
            if isinstance(target, ast.Name) and value and CODE.match(value):
                found[target.id] = value
    return found


def _helpers(
    modules: dict[str, ast.Module], statuses: dict[str, int]
) -> dict[tuple[str, str], _Helper]:
    """``(module, name) -> _Helper`` for every function with a ``code`` parameter."""
    found: dict[tuple[str, str], _Helper] = {}
    for module, tree in modules.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            names = [argument.arg for argument in node.args.posonlyargs + node.args.args]
            if "code" not in names:
                continue
            bound = 1 if names[0] in ("self", "cls") else 0
            helper = found.setdefault(
                (module, node.name),
                _Helper(
                    names.index("code") - bound,
                    names.index("status") - bound if "status" in names else -1,
                ),
            )
            for call in ast.walk(node):
                if isinstance(call, ast.Call) and call.args and _name(call.func) == "RestError":
                    if isinstance(call.args[0], ast.Name) and call.args[0].id == "code":
                        data = call.args[2] if len(call.args) > 2 else None
                        helper.statuses |= _status_of(data)
                elif isinstance(call, ast.Call) and _name(call.func) in statuses:
                    helper.statuses.add(statuses[_name(call.func)])
    return found


def _resolve(helpers: dict[tuple[str, str], _Helper], module: str, name: str) -> _Helper | None:
    """The helper a call to ``name`` in ``module`` reaches: the module's own, else the one
    function of that name in the package (``None`` when there is none, or several)."""
    own = helpers.get((module, name))
    if own is not None:
        return own
    others = [helper for (_, each), helper in helpers.items() if each == name]
    return others[0] if len(others) == 1 else None


def _made(
    node: ast.AST,
    constants: dict[str, str],
    helper_of: Callable[[str], _Helper | None],
    statuses: dict[str, int],
) -> list[_Made]:
    """The errors ``node`` makes: (code, message, statuses, rank) each; the rank orders the
    messages shown (a RestError's or a domain exception's first, then a helper's, then a
    dict's)."""

    def value(argument: ast.AST | None) -> str | None:
        if isinstance(argument, ast.Name):
            return constants.get(argument.id)
        return _literal(argument)

    found: list[_Made] = []
    if isinstance(node, ast.Dict):
        pairs = dict(zip((_literal(k) for k in node.keys), node.values, strict=True))
        if "code" in pairs:
            message = _literal(pairs.get("message"))
            found.append((value(pairs["code"]) or "", message, _status_of(node), 2))
        return found
    if not isinstance(node, ast.Call):
        return found
    name = _name(node.func)
    arguments = node.args
    if name == "__init__" and isinstance(node.func, ast.Attribute):
        # ``StorageFullError.__init__(self, "code", ...)`` in a subclass
        name, arguments = _name(node.func.value), arguments[1:]
    if (name == "RestError" or name in statuses) and arguments:
        message = _literal(arguments[1]) if len(arguments) > 1 else None
        if name == "RestError":
            status = _status_of(arguments[2]) if len(arguments) > 2 else frozenset()
        else:  # a domain exception: its class gives the status
            status = frozenset({statuses[name]})
        found.append((value(arguments[0]) or "", message, status, 0))
    elif (helper := helper_of(name)) is not None and 0 <= helper.position < len(arguments):
        rest = arguments[helper.position + 1 :]
        message = _literal(rest[0]) if rest else None
        given = set(helper.statuses)
        if 0 <= helper.status_position < len(arguments):
            status_argument = arguments[helper.status_position]
            if isinstance(status_argument, ast.Constant) and isinstance(status_argument.value, int):
                given.add(status_argument.value)
        found.append((value(arguments[helper.position]) or "", message, frozenset(given), 1))
    for keyword in node.keywords:
        if keyword.arg == "code":
            found.append((value(keyword.value) or "", None, frozenset(), 2))
    return found


def find_error_codes(package: Path) -> dict[str, dict[str, Any]]:
    """``code -> {"statuses", "messages", "modules"}`` for every error made in ``package``."""
    from sitecache.cache.api.schemas import STATUS_WARNINGS

    modules = _parse(package)
    statuses = _subclasses(modules, _statuses())
    constants = _constants(modules)
    helpers = _helpers(modules, statuses)
    found: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"statuses": set(), "messages": [], "ranks": [], "modules": set()}
    )
    for module, tree in modules.items():

        def helper_of(name: str, module: str = module) -> _Helper | None:
            return _resolve(helpers, module, name)

        for node in ast.walk(tree):
            for error_code, message, status, rank in _made(node, constants, helper_of, statuses):
                if not CODE.match(error_code) or error_code in STATUS_WARNINGS:
                    continue
                entry = found[error_code]
                entry["modules"].add(module)
                entry["statuses"] |= status
                if message and message not in entry["messages"]:
                    entry["messages"].append(message)
                    entry["ranks"].append(rank)
    for entry in found.values():
        pairs = zip(entry.pop("ranks"), entry["messages"], strict=True)
        ranked = sorted(pairs, key=lambda pair: pair[0])
        entry["messages"] = [message for _, message in ranked]
    return dict(found)


def error_codes_reference() -> Generated:
    """The table of every error code, sorted."""
    import sitecache

    codes = find_error_codes(Path(sitecache.__file__).resolve().parent)
    rows = []
    for name in sorted(codes):
        entry = codes[name]
        statuses = ", ".join(str(s) for s in sorted(entry["statuses"])) or NONE
        message = entry["messages"][0] if entry["messages"] else NONE
        where = ", ".join(code(module) for module in sorted(entry["modules"])[:3])
        rows.append((code(name), statuses, message, where))
    return Generated(table(("code", "status", "message (one of)", "raised in"), rows))
