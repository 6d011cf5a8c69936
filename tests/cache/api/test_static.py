"""Static-file mode: index.html / .gz / .br under the static root, purges, expiry, nginx."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import brotli
import pytest

from sitecache.cache import CacheEngine, CacheEntry
from sitecache.cache.api.static import StaticFiles, nginx_config
from sitecache.cache.entry import encode_entry
from sitecache.cache.policy import CacheRules
from sitecache.cli import main
from tests.cache.api.conftest import Api, add_page
from tests.conftest import AppFactory


def static_files(api: Api) -> StaticFiles:
    static = api.site.app.cache_api.static
    assert static is not None  # the test site is configured with a static root
    return static


def root(api: Api) -> Path:
    return static_files(api).root


def test_nothing_is_written_while_the_mode_is_off(api: Api) -> None:
    add_page(api.site, "/post/")
    api.page("/post/")
    assert not (root(api) / "example.org" / "post" / "index.html").exists()


def test_a_stored_page_is_written_as_index_html_and_its_gzip_and_brotli_copies(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True})
    add_page(api.site, "/post/")
    body = api.page("/post/").get_data()
    directory = root(api) / "example.org" / "post"
    assert (directory / "index.html").read_bytes() == body
    assert gzip.decompress((directory / "index.html.gz").read_bytes()) == body
    assert brotli.decompress((directory / "index.html.br").read_bytes()) == body
    home = api.page("/").get_data()
    assert (root(api) / "example.org" / "index.html").read_bytes() == home
    assert not [name for name in os.listdir(directory) if name.startswith(".tmp")]


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/query?a=1", {}),
        ("/json", {"Content-Type": "application/json"}),
        ("/varies", {"Vary": "Accept-Language"}),
        ("/.hidden", {}),
        # A page stating its own lifetime: the web server would keep it for max_age.
        ("/short", {"Cache-Control": "max-age=30"}),
        ("/revalidated", {"Cache-Control": "no-cache", "ETag": '"v1"'}),
    ],
)
def test_pages_a_web_server_must_not_serve_alone_get_no_static_copy(
    api: Api, path: str, headers: dict[str, str]
) -> None:
    api.json("POST", "/settings", {"static_files": True, "cache_query_strings": True})
    add_page(api.site, path.split("?")[0], headers=headers)
    response = api.page(path)
    assert "stored" in response.headers["Cache-Status"]
    assert not list(root(api).rglob("index.html"))


def test_a_purge_removes_the_static_copies(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True})
    for path in ("/a/", "/b/"):
        add_page(api.site, path)
        api.page(path)
    api.json("POST", "/cache", {"url": "/a/", "soft": True})
    assert not (root(api) / "example.org" / "a" / "index.html").exists()
    assert (root(api) / "example.org" / "b" / "index.html").exists()
    api.json("POST", "/cache", {})
    assert not list(root(api).rglob("index.html*"))


def test_the_gc_sweep_removes_expired_static_copies(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True, "max_age": 60})
    add_page(api.site, "/old/")
    api.page("/old/")
    page = root(api) / "example.org" / "old" / "index.html"
    past = time.time() - 120
    os.utime(page, (past, past))
    assert static_files(api).sweep() == 1
    assert not page.exists()
    assert (page.parent / "index.html.gz").exists()  # written just now: still fresh


def test_every_process_sweeps_its_machines_expired_copies_once_per_gc_interval(api: Api) -> None:
    # GC runs on the timers' holder only, and each node has its own copies.
    api.json("POST", "/settings", {"static_files": True, "max_age": 60, "gc_interval": 600})
    static = static_files(api)
    now = time.time()
    static.follow(now)  # due at once: swept nothing
    add_page(api.site, "/old/")
    api.page("/old/")
    page = root(api) / "example.org" / "old" / "index.html"
    past = time.time() - 120
    os.utime(page, (past, past))
    static.follow(now + 599)
    assert page.exists()  # not due yet
    static.follow(now + 601)
    assert not page.exists()


def test_the_nginx_config_serves_static_copies_to_anonymous_gets_only(tmp_path: Path) -> None:
    text = nginx_config(server_name="example.org", static_root=tmp_path)
    assert f"root {tmp_path.resolve()};" in text
    assert "gzip_static on;" in text
    assert "try_files /$host$sitecache_static/index.html @sitecache;" in text
    assert "sitecache_session" in text
    assert "wordpress_logged_in" in text
    assert "comment_author" in text
    assert "$query_string" in text
    assert "$http_authorization" in text
    assert "proxy_pass http://sitecache;" in text
    assert "brotli_static" not in text  # nginx refuses the directive of a module not loaded


def test_brotli_static_is_turned_on_when_nginx_has_the_module(tmp_path: Path) -> None:
    from sitecache.cache.api.static_nginx import wants_brotli_static

    module = tmp_path / "ngx_http_brotli_static_module.so"
    assert not wants_brotli_static("auto", [module])
    module.write_bytes(b"")
    assert wants_brotli_static("auto", [module])
    assert not wants_brotli_static("off", [module])
    assert wants_brotli_static("on", [tmp_path / "absent.so"])
    text = nginx_config(server_name="example.org", static_root=tmp_path, brotli=True)
    assert "    gzip_static on;\n    brotli_static on;\n" in text


def test_the_command_turns_brotli_static_on_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    config = tmp_path / "sitecache.toml"
    config.write_text('site_url = "https://example.org"\n', encoding="utf-8")
    base = ["--config", str(config), "--data-dir", str(tmp_path / "var"), "nginx-config",
            "--no-check"]  # fmt: skip
    assert main([*base, "--brotli", "on"]) == 0
    assert "brotli_static on;" in capsys.readouterr().out
    assert main([*base, "--brotli", "off"]) == 0
    assert "brotli_static" not in capsys.readouterr().out


def test_the_command_prints_the_server_block_for_the_configured_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    config = tmp_path / "sitecache.toml"
    config.write_text('site_url = "https://example.org"\n', encoding="utf-8")
    code = main(
        ["--config", str(config), "--data-dir", str(tmp_path / "var"), "nginx-config",
         "--upstream", "127.0.0.1:9000", "--no-check"]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    assert "server_name example.org;" in text
    assert "server 127.0.0.1:9000;" in text
    assert f"root {(tmp_path / 'var' / 'static').resolve()};" in text


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed")
@pytest.mark.parametrize("brotli", [False, True])
def test_nginx_accepts_the_config(tmp_path: Path, brotli: bool) -> None:
    nginx = shutil.which("nginx")
    assert nginx is not None
    from sitecache.cache.api.static_nginx import BROTLI_STATIC_MODULES
    from sitecache.config import load_config
    from sitecache.page_headers import page_headers

    module = BROTLI_STATIC_MODULES[-1]
    if brotli and not module.exists():
        pytest.skip("nginx's brotli_static module is not installed")
    server = nginx_config(
        server_name="example.org",
        static_root=tmp_path / "static",
        listen="127.0.0.1:18080",
        headers=page_headers(load_config({"site_url": "https://example.org"})),
        brotli=brotli,
    )
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        (f"load_module {module};\n" if brotli else "")
        + f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\n"
        "events {}\n"
        f"http {{\n access_log off;\n client_body_temp_path {tmp_path};\n{server}\n}}\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [nginx, "-t", "-c", str(conf), "-p", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert "syntax is ok" in result.stderr


# ---------------------------------------------------------------------- a stock nginx (#16)
def web_user_or_skip() -> str:
    import pwd

    try:
        pwd.getpwnam("www-data")
    except KeyError:
        pytest.skip("needs the www-data user (Debian's nginx workers)")
    return "www-data"


def test_copies_are_readable_by_the_web_server_whatever_the_umask(api: Api) -> None:
    # #16: under a umask of 077 the directories were 0700 and nginx's workers got 403s.
    api.json("POST", "/settings", {"static_files": True})
    add_page(api.site, "/deep/page/")
    previous = os.umask(0o077)
    try:
        api.page("/deep/page/")
    finally:
        os.umask(previous)
    static = root(api)
    for directory in (static, static / "example.org", static / "example.org" / "deep",
                      static / "example.org" / "deep" / "page"):  # fmt: skip
        assert stat.S_IMODE(directory.stat().st_mode) == 0o755, directory
    for name in ("index.html", "index.html.gz", "index.html.br"):
        page = static / "example.org" / "deep" / "page" / name
        assert stat.S_IMODE(page.stat().st_mode) == 0o644, page


def test_static_root_is_configurable_outside_the_private_data_directory(
    app_factory: AppFactory, tmp_path: Path
) -> None:
    from tests.auth.conftest import FakeClock, build_site

    public = tmp_path / "public" / "static"
    api = Api(build_site(app_factory(static_root=str(public)), FakeClock()))
    api.json("POST", "/settings", {"static_files": True})
    add_page(api.site, "/post/")
    body = api.page("/post/").get_data()
    assert (public / "example.org" / "post" / "index.html").read_bytes() == body
    assert not (api.site.app.data_dir / "static").exists()
    assert stat.S_IMODE(api.site.app.data_dir.stat().st_mode) == 0o700


def nginx_config_command(tmp_path: Path, *lines: str, arguments: tuple[str, ...] = ()) -> int:
    config = tmp_path / "sitecache.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return main(["--config", str(config), "--data-dir", str(tmp_path / "var"), "nginx-config",
                 *arguments])  # fmt: skip


def test_nginx_config_refuses_a_static_root_the_web_server_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # #16: the default static root sits in the 0700 data directory: www-data cannot enter it,
    # and nginx silently proxied every request.
    user = web_user_or_skip()
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    (tmp_path / "var").mkdir(mode=0o700)
    assert nginx_config_command(tmp_path, 'site_url = "https://example.org"') == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"{user} cannot enter" in captured.err
    assert "static_root" in captured.err
    assert captured.err.count("\n") == 1


def test_nginx_config_says_which_user_must_read_the_static_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    user = web_user_or_skip()
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    public = Path(tempfile.mkdtemp(prefix="sitecache-static-"))
    try:
        public.chmod(0o755)
        code = nginx_config_command(
            tmp_path, 'site_url = "https://example.org"', f'static_root = "{public / "static"}"'
        )
        assert code == 0, capsys.readouterr().err
    finally:
        shutil.rmtree(public)
    text = capsys.readouterr().out
    assert f"nginx's workers (user {user}) must be able to read {public / 'static'}" in text
    assert f"root {public / 'static'};" in text


def test_nginx_config_names_an_unknown_user_and_a_missing_site_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    assert nginx_config_command(tmp_path, 'site_url = "https://example.org"',
                                arguments=("--user", "no-such-user-here")) == 1  # fmt: skip
    assert "there is no user 'no-such-user-here'" in capsys.readouterr().err
    monkeypatch.delenv("SITECACHE_SITE_URL", raising=False)
    assert nginx_config_command(tmp_path, "debug = false") == 1
    error = capsys.readouterr().err
    assert "set site_url first" in error
    assert error.count("\n") == 1


def test_copies_carry_the_headers_sitecache_sends_with_its_pages(api: Api, tmp_path: Path) -> None:
    from sitecache.page_headers import page_headers

    page = api.page("/")
    expected = page_headers(api.site.app.config)
    for name in ("X-Content-Type-Options", "Content-Security-Policy", "X-Frame-Options",
                 "Referrer-Policy"):  # fmt: skip
        assert page.headers[name] == expected[name]
    assert expected["Link"] in page.headers["Link"]
    text = nginx_config(server_name="example.org", static_root=tmp_path, headers=expected)
    for name, value in expected.items():
        quoted = value.replace('"', '\\"')
        assert f'add_header {name} "{quoted}" always;' in text
    # Vary said by add_header, not by gzip_vary (it opens index.html.gz for every request)
    assert "gzip_vary off;" in text
    assert "add_header Vary Accept-Encoding always;" in text


def test_the_uploads_location_lists_the_upload_types_and_nginx_accepts_it(tmp_path: Path) -> None:
    from sitecache.cache.api.static import uploads_location

    block = uploads_location(
        tmp_path / "uploads", {"png": "image/png", "svg": "image/svg+xml", "x;y": "bad type"}
    )
    assert f"alias {(tmp_path / 'uploads').resolve()}/;" in block
    assert "image/png png;" in block
    assert "x;y" not in block  # never written into the configuration
    assert "add_header X-Content-Type-Options nosniff always;" in block
    assert "Content-Disposition attachment" in block  # svg and html: sandboxed downloads
    assert uploads_location(None) == ""
    comment = uploads_location(tmp_path, {}, "www-data cannot enter /x")
    assert comment.strip().startswith("#")
    assert "location" not in comment
    nginx = shutil.which("nginx")
    assert nginx is not None
    server = nginx_config(
        server_name="example.org", static_root=tmp_path, listen="127.0.0.1:18081", uploads=block
    )
    conf = tmp_path / "nginx.conf"
    conf.write_text(
        f"pid {tmp_path}/nginx.pid;\nerror_log {tmp_path}/error.log;\nevents {{}}\n"
        f"http {{\n access_log off;\n client_body_temp_path {tmp_path};\n{server}\n}}\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [nginx, "-t", "-c", str(conf), "-p", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr


def test_nginx_config_passes_uploads_to_sitecache_when_the_web_server_cannot_read_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    user = web_user_or_skip()
    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    (tmp_path / "var").mkdir(mode=0o700)
    public = Path(tempfile.mkdtemp(prefix="sitecache-static-"))
    try:
        public.chmod(0o755)
        code = nginx_config_command(
            tmp_path, 'site_url = "https://example.org"', f'static_root = "{public / "static"}"'
        )
        assert code == 0, capsys.readouterr().err
        text = capsys.readouterr().out
        # The default uploads directory is in the private data directory.
        assert "location /uploads/" not in text
        assert f"# /uploads/ is passed to sitecache (uploads_root unreadable): {user}" in text
        code = nginx_config_command(
            tmp_path,
            'site_url = "https://example.org"',
            f'static_root = "{public / "static"}"',
            f'uploads_root = "{public / "uploads"}"',
        )
        assert code == 0
        text = capsys.readouterr().out
        assert f"alias {public / 'uploads'}/;" in text
        assert "image/jpeg jpg;" in text
    finally:
        shutil.rmtree(public)


def test_the_server_block_carries_the_settings_that_exclude_visitors(tmp_path: Path) -> None:
    plain = nginx_config(server_name="example.org", static_root=tmp_path)
    assert "$http_user_agent" not in plain
    assert 'if ($http_cookie != "")' not in plain
    text = nginx_config(
        server_name="example.org",
        static_root=tmp_path,
        settings={
            "rejected_cookies": ["cart_", "a.b"],
            "rejected_user_agents": ["Lynx/", "Bot$"],
            "known_users": "bypass_any_cookie",
        },
    )
    cookie_rule = next(line for line in text.splitlines() if "$http_cookie ~*" in line)
    assert "cart_|" in cookie_rule
    assert "a\\.b" in cookie_rule
    assert "sitecache_session" in cookie_rule
    assert 'if ($http_cookie != "") { set $sitecache_static "/.sitecache-bypass"; }' in text
    assert (
        'if ($http_user_agent ~* "(bot\\$|lynx\\/)") '
        '{ set $sitecache_static "/.sitecache-bypass"; }' in text
    )
    assert '# Made for the cache settings known_users="bypass_any_cookie"' in text


def test_a_setting_nginx_cannot_carry_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot be written in an nginx configuration"):
        nginx_config(server_name="example.org", static_root=tmp_path,
                     settings={"rejected_user_agents": ["a\nb"]})  # fmt: skip


def test_status_warns_when_the_printed_rules_no_longer_fit_the_settings(api: Api) -> None:
    from sitecache.cache.api.static import NGINX_RULES_NAME, nginx_rules_fingerprint

    def codes() -> list[str]:
        return [warning["code"] for warning in api.json("GET", "/status")["warnings"]]

    engine = api.site.app.cache.engine
    api.json("POST", "/settings", {"static_files": True})
    assert "nginx_rules_outdated" not in codes()  # no rules printed for this storage
    engine.write_value(NGINX_RULES_NAME, nginx_rules_fingerprint(engine.settings_values()).encode())
    api.json("POST", "/settings", {"max_age": 60})
    assert "nginx_rules_outdated" not in codes()  # not one the rules carry
    api.json("POST", "/settings", {"rejected_cookies": ["cart_"]})
    assert "nginx_rules_outdated" in codes()
    api.json("POST", "/settings", {"static_files": False})
    assert "nginx_rules_outdated" not in codes()


def test_the_command_prints_the_sites_settings_and_records_them(
    app_factory: AppFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from sitecache.cache.api.static import NGINX_RULES_NAME, nginx_rules_fingerprint

    monkeypatch.delenv("SITECACHE_CONFIG", raising=False)
    app = app_factory(site_url="https://example.org")
    engine = app.cache.engine
    engine.update_settings({"rejected_user_agents": ["Lynx/"], "static_files": True})
    config = tmp_path / "sitecache.toml"
    config.write_text('site_url = "https://example.org"\n', encoding="utf-8")
    code = main(["--config", str(config), "--data-dir", str(app.data_dir), "nginx-config",
                 "--no-check"])  # fmt: skip
    assert code == 0
    assert '$http_user_agent ~* "(lynx\\/)"' in capsys.readouterr().out
    recorded = engine.read_value(NGINX_RULES_NAME)
    assert recorded == nginx_rules_fingerprint(engine.settings_values()).encode()


# ---------------------------------------------------------------------- several machines
Machine = tuple[CacheEngine, StaticFiles]


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[list[Machine]]:
    """Two machines sharing one Redis namespace, each with its own static root."""
    from sitecache.cache.storage.redis import RedisStorage
    from tests.cache.conftest import REDIS_URL, redis_or_skip

    redis_or_skip()
    namespace = f"test-{uuid.uuid4().hex}"
    rules = CacheRules(hosts=frozenset({"example.org"}))
    found = [
        (CacheEngine(RedisStorage(REDIS_URL, namespace), rules), tmp_path / name / "static")
        for name in ("a", "b")
    ]
    built = [(engine, StaticFiles(engine, root)) for engine, root in found]
    for engine, static in built:  # as the cache API wires them
        engine.purge_listeners.append(static.on_purge)
    built[0][0].update_settings({"static_files": True})
    for engine, _ in built:
        engine.reload_value("settings")
    try:
        yield built
    finally:
        storage = built[0][0].storage
        assert isinstance(storage, RedisStorage)
        storage.clear_namespace()
        for engine, _ in built:
            engine.close()


def copy_on(machine: Machine, url: str) -> Path:
    """Store a static copy of ``url`` on ``machine``; its file."""
    engine, static = machine
    entry = CacheEntry.from_response(
        200, [("Content-Type", "text/html")], f"<p>{url}</p>".encode(), url=url,
        host="example.org", path=url.split("example.org", 1)[1], variant="", vary=(),
        now=time.time(), max_age=3600, compress=True,
    )  # fmt: skip
    key = hashlib.sha256(url.encode()).hexdigest()[:32]
    # Stored as the cache stores a page, then copied as its stored listener does.
    engine.storage.put(key, encode_entry(entry), entry.info(key), None)
    static.on_stored(entry, ())
    directory = static.directory(url)
    assert directory is not None
    assert (directory / "index.html").exists()
    return directory / "index.html"


def test_a_purge_on_one_machine_reaches_the_copies_of_the_others(
    machines: list[Machine],
) -> None:
    # Trial 2: static-file mode on several nodes left the other nodes' copies on show.
    (one, one_static), (_, two_static) = machines
    for static in (one_static, two_static):  # no copies yet: each learns where the feed is
        assert static.follow() == 0
    one_copy, two_copy = (copy_on(machine, "http://example.org/a/") for machine in machines)
    kept = copy_on(machines[1], "http://example.org/kept/")
    one.purge_urls(["http://example.org/a/"])
    assert not one_copy.exists()
    assert two_copy.exists()  # until the other machine's next tick
    assert two_static.follow() == 3  # index.html, index.html.gz, index.html.br
    assert not two_copy.exists()
    assert kept.exists()
    assert one_static.follow() == 0  # its own purge: applied already
    one.purge_site()
    two_static.follow()
    assert not kept.exists()
    assert two_static.cursor_file.read_text(encoding="ascii").isdigit()


def test_a_machine_that_missed_announcements_removes_every_copy(
    machines: list[Machine],
) -> None:
    from sitecache.cache.storage.redis import RedisStorage

    (one, _), (_, two_static) = machines
    two_static.follow()
    copy = copy_on(machines[1], "http://example.org/b/")
    for number in range(3):
        one.purge_urls([f"http://example.org/other-{number}/"])
    storage = one.storage
    assert isinstance(storage, RedisStorage)
    storage.client.xtrim(storage._key("an"), maxlen=1, approximate=False)  # fell behind
    two_static.follow()
    assert not copy.exists()


def test_a_machine_with_copies_and_no_cursor_starts_clean(machines: list[Machine]) -> None:
    (_, _), (two, two_static) = machines
    copy = copy_on(machines[1], "http://example.org/c/")
    # A new process of a machine whose copies were written before it followed any purge
    # (an upgrade, a cursor file lost): they may be stale.
    restarted = StaticFiles(two, two_static.root)
    restarted.cursor_file.unlink(missing_ok=True)
    restarted.follow()
    assert not copy.exists()
    copy = copy_on(machines[1], "http://example.org/c/")
    again = StaticFiles(two, two_static.root)  # the cursor file says where the machine is
    again.follow()
    assert copy.exists()


def test_a_storage_one_machine_holds_announces_nothing(api: Api) -> None:
    api.json("POST", "/settings", {"static_files": True})
    add_page(api.site, "/post/")
    api.page("/post/")
    static = api.site.app.cache_api.static
    assert static is not None
    assert api.site.app.cache.engine.announcements(None) is None
    static.follow()
    assert (root(api) / "example.org" / "post" / "index.html").exists()
    assert not static.cursor_file.exists()
