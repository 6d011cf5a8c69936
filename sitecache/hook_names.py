"""Every action and filter the package fires, with the arguments its callbacks receive.

`HOOKS` is the one table of hook names: the hooks reference of the documentation is written
from it, a test reads the package's source and fails on a name fired that it does not hold,
and `sitecache.hooks.Hooks` looks a name up in it when a callback is added (a name nobody
fires is most likely a typo: ``rest_api_inti``). A plugin that fires hooks of its own
declares them the same way (`Hooks.register_hook` with a `HookSpec`).

Argument types are written as Python annotations; the package's classes by their full dotted
path (``sitecache.rest.server.RestServer``), so this module imports nothing above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["HOOKS", "HookArg", "HookSpec", "action_hook", "filter_hook"]

HookKind = Literal["action", "filter"]


@dataclass(frozen=True, slots=True)
class HookArg:
    """One argument a hook's callbacks receive, in the order they receive them."""

    name: str
    type: str
    description: str


@dataclass(frozen=True, slots=True)
class HookSpec:
    """An action or a filter: its name, the arguments of its callbacks and what it is for.

    For a filter, the first argument is the value filtered: each callback returns the value
    the next one receives, of the type ``returns`` names (``None`` for an action).
    """

    name: str
    kind: HookKind
    args: tuple[HookArg, ...]
    description: str
    returns: str = "None"

    def __post_init__(self) -> None:
        if self.kind == "filter" and not self.args:
            raise ValueError(f"the filter {self.name!r} passes no value")
        if self.kind == "action" and self.returns != "None":
            raise ValueError(f"the action {self.name!r} returns nothing")


SERVER: Final = "sitecache.rest.server.RestServer"
REQUEST: Final = "sitecache.rest.request.RestRequest"
RESPONSE: Final = "sitecache.rest.response.RestResponse"
ERROR: Final = "sitecache.errors.RestError"
POST: Final = "sitecache.site.models.Post"
COMMENT: Final = "sitecache.site.models.Comment"
TERM: Final = "sitecache.site.models.Term"
USER: Final = "sitecache.auth.roles.SiteUser"


def _arg(name: str, type_: str, description: str) -> HookArg:
    return HookArg(name, type_, description)


def action_hook(name: str, description: str, *args: HookArg) -> HookSpec:
    """The specification of an action."""
    return HookSpec(name, "action", args, description)


def filter_hook(name: str, description: str, returns: str, *args: HookArg) -> HookSpec:
    """The specification of a filter whose callbacks return ``returns``."""
    return HookSpec(name, "filter", args, description, returns)


_REQUEST_ARG = _arg("request", REQUEST, "the request being answered")
_SERVER_ARG = _arg("server", SERVER, "the REST server")
_HANDLER_ARG = _arg("handler", "dict[str, typing.Any]", "the matched handler of the route")
_POST_ID = _arg("post_id", "int", "the post's id")
_COMMENT_ID = _arg("comment_id", "int", "the comment's id")
_USER_ID = _arg("user_id", "int", "the user's id")
_REASSIGN = _arg(
    "reassign", "int | None", "the user who receives the posts, or None to delete them"
)
_DEBUG_ARGS = (
    _arg("function", "str", "the function misused"),
    _arg("message", "str", "what is wrong"),
    _arg("version", "str", "the version that changed it ('' when none)"),
)

_SPECS: Final = (
    # ------------------------------------------------------------------ the REST framework
    action_hook(
        "rest_api_init",
        "Fired once per REST server before its first request: register routes here.",
        _SERVER_ARG,
    ),
    action_hook("doing_it_wrong_run", "A function was called wrongly (a notice).", *_DEBUG_ARGS),
    action_hook(
        "deprecated_function_run",
        "A deprecated function was called.",
        _arg("function", "str", "the function called"),
        _arg("replacement", "str", "what to call instead ('' when nothing)"),
        _arg("version", "str", "the version that deprecated it"),
    ),
    action_hook("deprecated_argument_run", "A deprecated argument was passed.", *_DEBUG_ARGS),
    filter_hook(
        "rest_url",
        "The URL of a REST path (the API root's links, the answers' links).",
        "str",
        _arg("url", "str", "the URL"),
        _arg("path", "str", "the REST path it points to"),
    ),
    filter_hook(
        "rest_authentication_errors",
        "The authentication outcome of a request: a RestError refuses it.",
        f"{ERROR} | None",
        _arg("error", f"{ERROR} | None", "the error found so far, or None"),
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_pre_dispatch",
        "Answer a request before its route runs: anything but None is the answer.",
        "typing.Any",
        _arg("result", "typing.Any", "None, or an earlier callback's answer"),
        _SERVER_ARG,
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_request_before_callbacks",
        "Before the permission and route callbacks: a RestError is the answer.",
        "typing.Any",
        _arg("error", f"{ERROR} | None", "the arguments' error, or None"),
        _HANDLER_ARG,
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_dispatch_request",
        "Answer instead of the route's callback: anything but None is the answer.",
        "typing.Any",
        _arg("result", "typing.Any", "None, or an earlier callback's answer"),
        _REQUEST_ARG,
        _arg("route", "str", "the route's pattern"),
        _HANDLER_ARG,
    ),
    filter_hook(
        "rest_request_after_callbacks",
        "The route callback's answer (data, a RestResponse or a RestError).",
        "typing.Any",
        _arg("response", "typing.Any", "the answer"),
        _HANDLER_ARG,
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_post_dispatch",
        "The response of a request, before its headers are sent.",
        RESPONSE,
        _arg("response", RESPONSE, "the response"),
        _SERVER_ARG,
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_pre_serve_request",
        "Serve the response yourself: true means it was served (the CORS headers are added"
        " by the server's own callback).",
        "bool",
        _arg("served", "bool", "whether a callback served it"),
        _arg("response", RESPONSE, "the response"),
        _REQUEST_ARG,
        _SERVER_ARG,
    ),
    filter_hook(
        "rest_pre_echo_response",
        "The data about to be encoded as the response's JSON body.",
        "typing.Any",
        _arg("data", "typing.Any", "the body's data"),
        _SERVER_ARG,
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_envelope_response",
        "The body of an enveloped answer (``_envelope``).",
        "dict[str, typing.Any]",
        _arg("envelope", "dict[str, typing.Any]", "body, status and headers"),
        _arg("response", RESPONSE, "the response enveloped"),
    ),
    filter_hook(
        "rest_jsonp_enabled",
        "Whether ``_jsonp`` answers are allowed.",
        "bool",
        _arg("enabled", "bool", "the jsonp_enabled setting"),
    ),
    filter_hook(
        "rest_send_nocache_headers",
        "Whether the answer carries no-cache headers.",
        "bool",
        _arg("send", "bool", "whether the user is logged in"),
    ),
    filter_hook(
        "rest_exposed_cors_headers",
        "The headers a cross-origin caller may read (Access-Control-Expose-Headers).",
        "list[str]",
        _arg("headers", "list[str]", "the header names"),
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_allowed_cors_headers",
        "The headers a cross-origin caller may send (Access-Control-Allow-Headers).",
        "list[str]",
        _arg("headers", "list[str]", "the header names"),
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_index",
        "The API index's response (the API root).",
        RESPONSE,
        _arg("response", RESPONSE, "the index"),
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_namespace_index",
        "A namespace's index response.",
        RESPONSE,
        _arg("response", RESPONSE, "the namespace's index"),
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_authentication_index",
        "The ``authentication`` member of the API index.",
        "dict[str, typing.Any]",
        _arg("authentication", "dict[str, typing.Any]", "the methods by name"),
        _REQUEST_ARG,
    ),
    filter_hook(
        "rest_route_data",
        "A route's entry in an index.",
        "dict[str, typing.Any]",
        _arg("data", "dict[str, typing.Any]", "namespace, methods, endpoints, schema, links"),
        _arg("route", "sitecache.rest.routes.Route", "the route"),
        _arg("context", "str", "'view' or 'help'"),
    ),
    filter_hook(
        "rest_response_link_curies",
        "The CURIEs of the answers' links.",
        "list[dict[str, typing.Any]]",
        _arg("curies", "list[dict[str, typing.Any]]", "name, href and templated of each"),
    ),
    filter_hook(
        "rest_request_from_url",
        "The internal request built from a REST URL (embedding): anything but a RestRequest"
        " drops it.",
        f"{REQUEST} | None",
        _arg("request", REQUEST, "the request built"),
        _arg("url", "str", "the URL"),
    ),
    # ------------------------------------------------------------------ users
    filter_hook(
        "rest_avatar_sizes",
        "The avatar sizes of a user's answer, in pixels.",
        "list[int]",
        _arg("sizes", "list[int]", "24, 48 and 96 by default"),
    ),
    filter_hook(
        "get_avatar_url",
        "The avatar URL of a user at one size.",
        "str",
        _arg("url", "str", "the Gravatar URL"),
        _arg("user", USER, "the user"),
        _arg("size", "int", "the size in pixels"),
    ),
    filter_hook(
        "published_author_ids",
        "The ids of the users with published posts (who an anonymous caller may list).",
        "set[int]",
        _arg("ids", "set[int]", "the ids found so far"),
    ),
    action_hook("user_register", "A user was created.", _USER_ID),
    action_hook(
        "profile_update",
        "A user was changed.",
        _USER_ID,
        _arg("old_user", USER, "the user before the change"),
    ),
    action_hook(
        "delete_user",
        "A user is about to be deleted.",
        _USER_ID,
        _REASSIGN,
        _arg("user", USER, "the user"),
    ),
    action_hook(
        "deleted_user",
        "A user was deleted.",
        _USER_ID,
        _REASSIGN,
        _arg("user", USER, "the user deleted"),
    ),
    # ------------------------------------------------------------------ content
    action_hook(
        "save_post",
        "A post was created or changed (after the commit).",
        _POST_ID,
        _arg("post", POST, "the post"),
        _arg("update", "bool", "False for a new post"),
    ),
    action_hook(
        "post_updated",
        "A post was changed.",
        _POST_ID,
        _arg("post_after", POST, "the post now"),
        _arg("post_before", POST, "the post before"),
    ),
    action_hook(
        "transition_post_status",
        "A post was saved ('new' as the old status of a post just created).",
        _arg("new_status", "str", "its status now"),
        _arg("old_status", "str", "its status before"),
        _arg("post", POST, "the post"),
    ),
    action_hook(
        "delete_post",
        "A post is about to be deleted for good.",
        _POST_ID,
        _arg("post", POST, "the post"),
    ),
    action_hook("deleted_post", "A post was deleted for good.", _POST_ID, _arg("post", POST, "it")),
    action_hook(
        "deleted_upload_file",
        "A media file was deleted with its attachment.",
        _POST_ID,
        _arg("url_path", "str", "the file's URL path"),
    ),
    action_hook(
        "updated_option",
        "A site option changed.",
        _arg("option", "str", "its name"),
        _arg("old_value", "typing.Any", "its value before"),
        _arg("value", "typing.Any", "its value now"),
    ),
    action_hook(
        "comment_post",
        "A comment was posted.",
        _COMMENT_ID,
        _arg("approved", "int | str", "1 approved, 0 held, 'spam'"),
    ),
    action_hook(
        "edit_comment",
        "A comment was changed.",
        _COMMENT_ID,
        _arg("comment", COMMENT, "the comment"),
    ),
    action_hook(
        "transition_comment_status",
        "A comment's status changed.",
        _arg("new_status", "str", "its status now"),
        _arg("old_status", "str", "its status before"),
        _arg("comment", COMMENT, "the comment"),
    ),
    action_hook(
        "deleted_comment",
        "A comment was deleted for good.",
        _COMMENT_ID,
        _arg("comment", COMMENT, "the comment"),
    ),
    filter_hook(
        "comment_flood_filter",
        "Whether a new comment comes too soon after its author's last one.",
        "bool",
        _arg("flood", "bool", "whether it came within the flood interval"),
        _arg("last", "int", "when the author's last comment came (Unix time)"),
        _arg("now", "int", "now (Unix time)"),
    ),
    action_hook(
        "comment_flood_trigger",
        "A comment was refused as a flood.",
        _arg("last", "int", "when the author's last comment came (Unix time)"),
        _arg("now", "int", "now (Unix time)"),
    ),
    action_hook(
        "created_term",
        "A term was created.",
        _arg("term_id", "int", "the term's id"),
        _arg("taxonomy", "str", "its taxonomy"),
    ),
    action_hook(
        "edited_term",
        "A term was changed.",
        _arg("term_id", "int", "the term's id"),
        _arg("taxonomy", "str", "its taxonomy"),
        _arg("term", TERM, "the term now"),
    ),
    action_hook(
        "delete_term",
        "A term was deleted.",
        _arg("term_id", "int", "the term's id"),
        _arg("taxonomy", "str", "its taxonomy"),
        _arg("term", TERM, "the term deleted"),
        _arg("object_ids", "list[int]", "the posts it was on"),
    ),
    action_hook(
        "activated_plugin",
        "A plugin was activated (after the commit).",
        _arg("plugin_id", "str", "the plugin's id"),
    ),
    action_hook(
        "deactivated_plugin",
        "A plugin was deactivated (after the commit).",
        _arg("plugin_id", "str", "the plugin's id"),
    ),
    # ------------------------------------------------------------------ the page cache
    filter_hook(
        "cache_preload_urls",
        "The URLs one preload visits.",
        "list[str]",
        _arg("urls", "list[str]", "the home page's path by default"),
        _arg("settings", "dict[str, typing.Any]", "the cache settings"),
    ),
    filter_hook(
        "cache_post_tags",
        "The purge tags of a post and of the pages that show it.",
        "list[str]",
        _arg("tags", "list[str]", "post-<id> by default"),
        _POST_ID,
    ),
    filter_hook(
        "cache_post_exists",
        "Whether the site has the post (None: unknown).",
        "bool | None",
        _arg("exists", "bool | None", "None by default"),
        _POST_ID,
    ),
)

#: Every hook the package fires, by name.
HOOKS: Final[Mapping[str, HookSpec]] = {spec.name: spec for spec in _SPECS}
