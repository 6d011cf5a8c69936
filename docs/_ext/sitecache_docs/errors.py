"""The error codes the package answers, found in its source (no list to keep by hand).

Every call that makes an error with a literal code is read from the source: `RestError`
(``RestError("code", "message", {"status": N})``) and the domain exceptions
(``NotFoundError("code", "message")``, whose class gives the status through the REST
boundary's table). A code is shown with its statuses, one message and the modules that raise
it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path
from typing import Any

from sitecache_docs.generated import NONE, Generated, code, table

__all__ = ["error_codes_reference", "find_error_codes"]


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


def _status_of(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Dict):
        for key, value in zip(node.keys, node.values, strict=True):
            if _literal(key) == "status" and isinstance(value, ast.Constant):
                return value.value if isinstance(value.value, int) else None
    return None


def find_error_codes(package: Path) -> dict[str, dict[str, Any]]:
    """``code -> {"statuses", "messages", "modules"}`` for every error made in ``package``."""
    statuses = _statuses()
    found: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"statuses": set(), "messages": [], "modules": set()}
    )
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            error_code = message = None
            status: int | None = None
            if isinstance(node, ast.Call) and node.args:
                name = (
                    node.func.attr
                    if isinstance(node.func, ast.Attribute)
                    else getattr(node.func, "id", "")
                )
                if name == "RestError" or name in statuses:
                    error_code = _literal(node.args[0])
                    message = _literal(node.args[1]) if len(node.args) > 1 else None
                    status = _status_of(node.args[2]) if len(node.args) > 2 else statuses.get(name)
            if not error_code or not error_code.replace("_", "").isalnum():
                continue
            entry = found[error_code]
            entry["modules"].add(module)
            if status is not None:
                entry["statuses"].add(status)
            if message and message not in entry["messages"]:
                entry["messages"].append(message)
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
