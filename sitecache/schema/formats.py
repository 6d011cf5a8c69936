"""String formats: their checks (``hex-color``, ``email``, ``ip``, ``uuid``) and sanitizers.

Mirrors ``rest_parse_hex_color``, ``rest_is_ip_address`` (with the Requests library's IPv6 check),
``wp_is_uuid``, ``is_email``, ``sanitize_hex_color``, ``sanitize_text_field``,
``sanitize_textarea_field`` and ``sanitize_url``. Date-time lives in
`sitecache.schema.dates`.
"""

from __future__ import annotations

import html
import re
from typing import Final

from sitecache.schema import php
from sitecache.schema.notices import doing_it_wrong

__all__ = [
    "ALLOWED_PROTOCOLS",
    "is_email",
    "is_ip_address",
    "is_uuid",
    "parse_hex_color",
    "sanitize_hex_color",
    "sanitize_text_field",
    "sanitize_textarea_field",
    "sanitize_url",
]

# ``$`` in these patterns also matches before a final newline, exactly as PCRE's ``$`` does.
_HEX_COLOR = re.compile(r"^#([A-Fa-f0-9]{3}){1,2}$")
_IPV4 = re.compile(
    r"^(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)$"
)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_UUID_V4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
_EMAIL_LOCAL = re.compile(r"^[a-zA-Z0-9!#$%&'*+/=?^_`{|}~.-]+$")
_EMAIL_LABEL = re.compile(r"^[a-z0-9-]+$", re.IGNORECASE)
_HEX_DIGITS = re.compile(r"[0-9a-fA-F]+\Z")

ALLOWED_PROTOCOLS: Final = (
    "http", "https", "ftp", "ftps", "mailto", "news", "irc", "irc6", "ircs", "gopher", "nntp",
    "feed", "telnet", "mms", "rtsp", "sms", "svn", "tel", "fax", "xmpp", "webcal", "urn",
)  # fmt: skip


def _as_text(value: object) -> str | None:
    """The string a PCRE function would see, or ``None`` for arrays and objects."""
    if value is None or php.is_scalar(value):
        return php.to_php_string(value)
    return None


# ---------------------------------------------------------------------- hex colours
def parse_hex_color(color: object) -> str | bool:
    """The color when it is ``#`` plus 3 or 6 hex digits, else ``False``."""
    text = _as_text(color)
    if text is None or not _HEX_COLOR.search(text):
        return False
    return text


def sanitize_hex_color(color: object) -> str | None:
    """The color when valid, ``""`` for ``""``, else ``None`` (WordPress's ``sanitize_hex_color``).

    Schema sanitizing of a ``hex-color`` string casts the result to a string, giving ``""``.
    """
    if color == "":
        return ""
    result = parse_hex_color(color)
    return result if isinstance(result, str) else None


# ---------------------------------------------------------------------- IP addresses
def _uncompress_ipv6(address: str) -> str | None:
    """Expand a single ``::``; ``None`` when the expansion is impossible."""
    if address.count("::") != 1:
        return address
    head, tail = address.split("::", 1)
    head_colons = -1 if head == "" else head.count(":")
    tail_colons = -1 if tail == "" else tail.count(":")
    if "." in tail:
        tail_colons += 1
    if head_colons == -1 and tail_colons == -1:
        return "0:0:0:0:0:0:0:0"
    if head_colons == -1:
        fill_count = 7 - tail_colons
        fill = "0:" * fill_count
    elif tail_colons == -1:
        fill_count = 7 - head_colons
        fill = ":0" * fill_count
    else:
        fill_count = 6 - tail_colons - head_colons
        fill = ":" + "0:" * fill_count
    if fill_count < 0:
        return None
    return address.replace("::", fill)


def _is_ipv6(address: str) -> bool:
    expanded = _uncompress_ipv6(address)
    if expanded is None:
        return False
    if "." in expanded:
        cut = expanded.rfind(":")
        v6_text, v4_text = expanded[: max(cut, 0)], expanded[cut + 1 :]
    else:
        v6_text, v4_text = expanded, ""
    v6_parts = v6_text.split(":")
    v4_parts = v4_text.split(".")
    if not (
        (len(v6_parts) == 8 and len(v4_parts) == 1) or (len(v6_parts) == 6 and len(v4_parts) == 4)
    ):
        return False
    for part in v6_parts:
        if part == "" or len(part) > 4:
            return False
        if not _HEX_DIGITS.match(part):
            return False
    if len(v4_parts) == 4:
        for part in v4_parts:
            if (
                not part.isascii()
                or not part.isdigit()
                or str(int(part)) != part
                or int(part) > 255
            ):
                return False
    return True


def is_ip_address(ip: object) -> str | bool:
    """The address when it is a dotted IPv4 quad or a valid IPv6 address, else ``False``."""
    text = _as_text(ip)
    if text is None:
        return False
    if _IPV4.search(text) or _is_ipv6(text):
        return text
    return False


# ---------------------------------------------------------------------- UUIDs and e-mail
def is_uuid(uuid: object, version: object = None) -> bool:
    """True for a lowercase hyphenated UUID string (``wp_is_uuid``).

    With a numeric ``version`` only version 4 is supported (the variant bits are checked too);
    any other version is reported as misuse and gives ``False``.
    """
    if not isinstance(uuid, str):
        return False
    if php.is_numeric(version):
        if php.to_int(version) != 4:
            doing_it_wrong("wp_is_uuid", "Only UUID V4 is supported at this time.")
            return False
        return _UUID_V4.search(uuid) is not None
    return _UUID.search(uuid) is not None


def is_email(email: object) -> str | bool:
    """The address when it passes WordPress's ``is_email`` steps, else ``False``.

    At least 6 bytes; an ``@`` after the first character; a local part of the allowed
    characters; a domain without ``..``, not starting or ending with a dot or whitespace, with
    at least two labels of letters, digits and inner hyphens.
    """
    text = _as_text(email)
    if text is None or len(text.encode("utf-8", "surrogatepass")) < 6:
        return False
    if text.find("@", 1) == -1:
        return False
    local, domain = text.split("@", 1)
    if not _EMAIL_LOCAL.search(local):
        return False
    if ".." in domain:
        return False
    if php.php_trim(domain, " \t\n\r\0\x0b.") != domain:
        return False
    labels = domain.split(".")
    if len(labels) < 2:
        return False
    for label in labels:
        if php.php_trim(label, " \t\n\r\0\x0b-") != label:
            return False
        if not _EMAIL_LABEL.search(label):
            return False
    return text


# ---------------------------------------------------------------------- text fields
_LESS_THAN_CHUNK = re.compile(r"<[^>]*?((?=<)|>|$)", re.DOTALL)
_HEX_CHARACTERS: Final = frozenset("0123456789abcdefABCDEF")
_COLLAPSIBLE = re.compile(r"[\r\n\t ]+")
_SPACES = re.compile(r" +")
_ENTITY = re.compile(r"&(?:#[0-9]+|#x[0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")


def _escape_html(text: str) -> str:
    """``esc_html``: escape ``& < > " '`` without double-encoding existing entities."""
    pieces: list[str] = []
    position = 0
    for match in _ENTITY.finditer(text):
        pieces.append(
            html.escape(text[position : match.start()], quote=True).replace("&#x27;", "&#039;")
        )
        pieces.append(match.group(0))
        position = match.end()
    pieces.append(html.escape(text[position:], quote=True).replace("&#x27;", "&#039;"))
    return "".join(pieces)


def _escape_lone_less_than(text: str) -> str:
    """``wp_pre_kses_less_than``: a ``<`` that never closes is escaped with what follows it."""

    def replace(match: re.Match[str]) -> str:
        chunk = match.group(0)
        return chunk if ">" in chunk else _escape_html(chunk)

    return _LESS_THAN_CHUNK.sub(replace, text)


def _strip_tags(text: str) -> str:
    """PHP ``strip_tags``: drop tags (quote-aware) and comments; ``<`` + whitespace is text."""
    out: list[str] = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char != "<" or index + 1 >= length or text[index + 1].isspace():
            out.append(char)
            index += 1
            continue
        if text.startswith("<!--", index):
            end = text.find("-->", index + 4)
            index = length if end == -1 else end + 3
            continue
        quote = ""
        index += 1
        while index < length:
            char = text[index]
            if quote:
                if char == quote:
                    quote = ""
            elif char in "\"'":
                quote = char
            elif char == ">":
                break
            index += 1
        index += 1
    return "".join(out)


def _remove_script_and_style(text: str) -> str:
    """Drop ``<script…>…</script>`` and ``<style…>…</style>`` with their content, in one pass.

    The same as WordPress's ``@<(script|style)[^>]*?>.*?</\\1>@si`` replacement, without its
    quadratic behaviour on text with many unclosed opening tags.
    """
    lowered = text.lower()
    pieces: list[str] = []
    kept_from = searched_from = 0
    unclosed: set[str] = set()  # names with no closing tag after the current position
    while True:
        openings = [
            (position, name)
            for name in ("script", "style")
            if name not in unclosed and (position := lowered.find("<" + name, searched_from)) != -1
        ]
        if not openings:
            break
        start, name = min(openings)
        end_of_tag = lowered.find(">", start + len(name) + 1)
        if end_of_tag == -1:
            break  # no later opening tag can be complete either
        closing = lowered.find(f"</{name}>", end_of_tag + 1)
        if closing == -1:
            unclosed.add(name)
            searched_from = start + 1
            continue
        pieces.append(text[kept_from:start])
        kept_from = searched_from = closing + len(name) + 3
    pieces.append(text[kept_from:])
    return "".join(pieces)


def _remove_percent_octets(text: str) -> tuple[str, bool]:
    """Remove every ``%XX`` hex octet, including those formed by removing others.

    WordPress repeats search-and-replace until none is left; these removals never overlap, so
    removing them left to right with a stack gives the same text in linear time. Returns the
    text and whether anything was removed.
    """
    if "%" not in text:
        return text, False
    kept: list[str] = []
    removed = False
    for character in text:
        kept.append(character)
        if (
            len(kept) >= 3
            and kept[-3] == "%"
            and kept[-2] in _HEX_CHARACTERS
            and kept[-1] in _HEX_CHARACTERS
        ):
            del kept[-3:]
            removed = True
    return "".join(kept), removed


def _sanitize_text(value: object, keep_newlines: bool) -> str:
    if php.is_php_array(value) or not (value is None or php.is_scalar(value)):
        return ""
    text = php.to_php_string(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return ""
    if "<" in text:
        text = _escape_lone_less_than(text)
        text = php.php_trim(_strip_tags(_remove_script_and_style(text)))
        text = text.replace("<\n", "&lt;\n")
    if not keep_newlines:
        text = _COLLAPSIBLE.sub(" ", text)
    text = php.php_trim(text)
    text, found = _remove_percent_octets(text)
    if found:
        text = php.php_trim(_SPACES.sub(" ", text))
    return text


def sanitize_text_field(value: object) -> str:
    """``sanitize_text_field``: strip tags, collapse whitespace, trim, drop ``%XX`` octets."""
    return _sanitize_text(value, keep_newlines=False)


def sanitize_textarea_field(value: object) -> str:
    """``sanitize_textarea_field``: like `sanitize_text_field` but newlines and tabs are kept."""
    return _sanitize_text(value, keep_newlines=True)


# ---------------------------------------------------------------------- URLs
_URL_DISALLOWED = re.compile(r"[^a-z0-9\-~+_.?#=!&;,/:%@$|*'()\[\]\x80-\U0010ffff]", re.IGNORECASE)
_PHP_FILE = re.compile(r"^[a-z0-9-]+?\.php", re.IGNORECASE)
_PROTOCOL_SPLIT = re.compile(r":|&#0*58;|&#x0*3a;|&colon;", re.IGNORECASE)
_CR_LF_ESCAPES: Final = ("%0d", "%0a", "%0D", "%0A")


def _deep_replace(search: tuple[str, ...], subject: str) -> str:
    changed = True
    while changed:
        changed = False
        for needle in search:
            if needle in subject:
                subject = subject.replace(needle, "")
                changed = True
    return subject


def _strip_bad_protocol(url: str) -> str:
    """``wp_kses_bad_protocol``: remove leading protocols that are not allowed, repeatedly."""
    previous = None
    iterations = 0
    while previous != url and iterations < 6:
        previous = url
        iterations += 1
        pieces = _PROTOCOL_SPLIT.split(url, maxsplit=1)
        if len(pieces) == 2 and not re.search(r"/\?", pieces[0]):
            protocol = re.sub(r"[^a-z0-9+.\-]", "", html.unescape(pieces[0]).lower())
            url = f"{protocol}:{pieces[1]}" if protocol in ALLOWED_PROTOCOLS else pieces[1]
    return url


def sanitize_url(url: object) -> str:
    """``sanitize_url``: a URL safe to store, or ``""`` when its protocol is not allowed.

    Spaces become ``%20``, characters outside the URL set are dropped, CR/LF escapes are
    removed, ``http://`` is added when there is no scheme (except for ``/``, ``#``, ``?`` and PHP
    file paths) and brackets after the host are percent-encoded.
    """
    text = _as_text(url)
    if not text:
        return ""
    text = _URL_DISALLOWED.sub("", text.lstrip(" \t\n\r\0\x0b").replace(" ", "%20"))
    if text == "":
        return ""
    if not text.lower().startswith("mailto:"):
        text = _deep_replace(_CR_LF_ESCAPES, text)
    text = text.replace(";//", "://")
    # After the CR/LF escapes are gone the text may be empty: it then gets a scheme, as in PHP.
    if ":" not in text and text[:1] not in ("/", "#", "?") and not _PHP_FILE.search(text):
        text = "http://" + text
    if "[" in text or "]" in text:
        scheme_end = text.find("://")
        front_end = 0
        if scheme_end != -1:
            authority_start = scheme_end + 3
            slash = text.find("/", authority_start)
            front_end = len(text) if slash == -1 else slash
            bracket_host = text.find("[", authority_start)
            if bracket_host != -1 and bracket_host < front_end:
                close = text.find("]", bracket_host)
                front_end = max(front_end, close + 1) if close != -1 else front_end
        text = text[:front_end] + text[front_end:].replace("[", "%5B").replace("]", "%5D")
    if text[0] == "/":
        return text
    cleaned = _strip_bad_protocol(text)
    if cleaned.lower() != text.lower():
        return ""
    return cleaned
