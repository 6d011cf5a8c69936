"""``sitecache app-password create|list|revoke``: a user's application passwords (HTTP Basic
credentials for the REST API), created with the REST route's own checks and printed once."""

from __future__ import annotations

import argparse
import json
import sys

from sitecache.auth.rest_routes import check_application_password_fields
from sitecache.cli.configuration import configure
from sitecache.cli.output import date_text, fail, print_table, say, terminal_text
from sitecache.cli.users import find_user, open_auth
from sitecache.domain_errors import InvalidValueError

__all__ = [
    "command_app_password_create",
    "command_app_password_list",
    "command_app_password_revoke",
]


def command_app_password_list(args: argparse.Namespace) -> int:
    """Print a user's application passwords (never the passwords themselves)."""
    auth = open_auth(configure(args))
    user = find_user(auth, args.login)
    rows: list[dict[str, object]] = [
        {
            "uuid": record.uuid,
            "name": record.name,
            "app_id": record.app_id,
            "created": date_text(record.created),
            "last_used": date_text(record.last_used) or None,
            "last_ip": record.last_ip,
        }
        for record in auth.app_passwords.list(user)
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
    elif rows:
        print_table(rows, ["uuid", "name", "created", "last_used", "last_ip"])
    else:
        say(f"{user.login} has no application passwords.")
    return 0


def command_app_password_revoke(args: argparse.Namespace) -> int:
    """Delete one application password of a user."""
    auth = open_auth(configure(args))
    user = find_user(auth, args.login)
    if not auth.app_passwords.delete(user, args.uuid):
        return fail(f"{user.login} has no application password {args.uuid!r}")
    say(f"Application password {args.uuid} of {user.login} revoked.")
    return 0


def command_app_password_create(args: argparse.Namespace) -> int:
    """Create an application password for a user and print it once."""
    auth = open_auth(configure(args))
    user = auth.users.find(args.login)
    if user is None:
        print(f"sitecache: no user with login or email {args.login!r}", file=sys.stderr)
        return 1
    # The same checks (one schema) as site/v2/users/<id>/application-passwords.
    try:
        name, app_id = check_application_password_fields(args.name, args.app_id or "")
    except InvalidValueError as refused:
        problems = refused.details.get("params") or {}
        reason = "; ".join(problems.values()) or refused.message
        print(f"sitecache: {terminal_text(reason)}", file=sys.stderr)
        return 2
    password, record = auth.app_passwords.create(user, name, app_id)
    say(f"Application password {record.name!r} ({record.uuid}) created for {user.login}.")
    print(f"  password: {password}  (shown only once)")
    return 0
