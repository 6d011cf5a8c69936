"""``sitecache init``: create a site (its data directory, database, secret key and
administrator, and with ``--demo`` its demo content), or give a site without an administrator
its missing one."""

from __future__ import annotations

import argparse
import sys

from sitecache.auth import AuthService
from sitecache.cli.configuration import configure
from sitecache.cli.identity import persist_identity
from sitecache.cli.output import fail, say
from sitecache.cli.users import checked_user_input, create_administrator, open_auth
from sitecache.config import check_writable_data_dir
from sitecache.hooks import Hooks
from sitecache.site import ContentService
from sitecache.site.demo import fill_demo
from sitecache.site.migrations import migrate_content

__all__ = ["command_init", "fill_demo_content"]


def command_init(args: argparse.Namespace) -> int:
    """Create the data directory, database, secret key and an administrator.

    On a site that already has users but no administrator (made before this rule, or by hand),
    ``init`` creates the missing administrator; on a site with one it changes nothing.
    """
    config = configure(args, site=False)
    check_writable_data_dir(config)  # one line naming the directory and the user
    # The administrator's login and address are checked (as `user create` checks them) before
    # anything is created: a refused one leaves no site without an administrator behind.
    values = checked_user_input({"username": args.login, "email": args.email})
    login = str(values["username"])
    email = str(values["email"]) if values.get("email") else None
    auth = open_auth(config, migrate=True)
    migrate_content(auth.store, apply=True)  # the content tables too: init migrates everything
    existing = auth.users.count()
    if auth.users.count_role("administrator"):
        print(
            f"sitecache: {config.data_dir} is already initialized ({existing} user"
            f"{'s' if existing != 1 else ''}); add users with `sitecache user create`.",
            file=sys.stderr,
        )
        return 1
    if existing:
        if auth.users.find(login) is not None:
            return fail(
                f"{config.data_dir} has users but no administrator, and the login "
                f"{login!r} is taken: choose the administrator's login with --login."
            )
        say(f"{config.data_dir.resolve()} has no administrator: creating one.")
    else:
        say(f"Initialized {config.data_dir.resolve()} (database and secret key).")
    persist_identity(config)
    create_administrator(auth, login, email)
    if args.demo:
        fill_demo_content(auth)
    return 0


def fill_demo_content(auth: AuthService) -> None:
    """Write the demo content (authors, terms, posts, pages, comments) and say what it is."""
    summary = fill_demo(ContentService(auth.store, Hooks()), auth.users)
    print(
        f"Demo content: {summary.posts} posts, {summary.pages} pages, {summary.comments} comments"
        f" ({summary.held_comments} held), {summary.categories} categories, {summary.tags} tags,"
        f" {summary.authors} authors."
    )
