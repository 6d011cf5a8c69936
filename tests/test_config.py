"""Configuration: defaults, TOML files, the environment, explicit values and overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitecache.app import create_app
from sitecache.config import Config, ConfigError, load_config


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in (
        "SITECACHE_CONFIG",
        "SITECACHE_DATA_DIR",
        "SITECACHE_SITE_URL",
        "SITECACHE_DEBUG",
    ):
        monkeypatch.delenv(variable, raising=False)


def test_the_defaults_keep_data_under_var_with_the_site_json_prefix() -> None:
    config = load_config()
    assert config.data_dir == Path("var")
    assert config.rest_prefix == "site-json"
    assert config.api_root_rel == "https://api.w.org/"
    assert config.debug is False
    assert config.application_passwords == "auto"


def test_the_environment_is_read_when_no_config_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = tmp_path / "site.toml"
    toml.write_text('[sitecache]\nsite_name = "From TOML"\ndebug = false\n', encoding="utf-8")
    monkeypatch.setenv("SITECACHE_CONFIG", str(toml))
    monkeypatch.setenv("SITECACHE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SITECACHE_DEBUG", "1")
    monkeypatch.setenv("SITECACHE_SITE_URL", "https://example.org/")
    config = load_config()
    assert config.site_name == "From TOML"
    assert config.data_dir == tmp_path / "data"
    assert config.debug is True  # the environment wins over the file
    assert config.site_url == "https://example.org"


def test_an_explicit_mapping_ignores_the_environment_and_overrides_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SITECACHE_DATA_DIR", "/should/not/be/used")
    config = load_config({"data_dir": str(tmp_path), "debug": True}, debug=False)
    assert config.data_dir == tmp_path
    assert config.debug is False


def test_a_config_object_round_trips() -> None:
    original = Config(site_name="Round", plugins=("a.b:c",))
    assert load_config(original) == original


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"colour": "blue"}, "colour is not a valid property of Object."),
        ({"debug": "maybe"}, "config[debug] is not of type boolean."),
        ({"rest_prefix": "a b"}, "config[rest_prefix] does not match pattern"),
        ({"site_url": "ftp://example.org"}, "config[site_url] does not match pattern"),
        ({"application_passwords": "always"}, "config[application_passwords] is not one of"),
        ({"password_hash_cost": 10}, "config[password_hash_cost] must be between"),
        ({"plugins": ["no-colon"]}, "plugins entries are module:function or path/to/file.py"),
        ({"plugins": [3]}, "config[plugins][0] is not of type string."),
    ],
)
def test_bad_values_raise_a_config_error_naming_the_problem(
    values: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_config(values)


@pytest.mark.parametrize("spec", ["notes_plugin.py", "notes:", ":activate", "a b:c"])
def test_a_plugin_spec_without_its_function_is_refused_in_words(tmp_path: Path, spec: str) -> None:
    # Not the schema's raw regular expression: what a plugins entry is, and the entry.
    toml = tmp_path / "site.toml"
    toml.write_text(f"plugins = [{spec!r}]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(toml)
    assert str(refused.value) == (
        "invalid configuration: plugins entries are module:function or "
        f"path/to/file.py:function (got {spec!r})"
    )


def test_a_missing_or_broken_toml_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("debug = = true\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load_config(broken)


def test_a_plugin_that_cannot_be_imported_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot be loaded"):
        create_app({"data_dir": str(tmp_path), "plugins": ["no_such_module:activate"]})


def test_two_apps_in_one_process_share_nothing(tmp_path: Path) -> None:
    first = create_app({"data_dir": str(tmp_path / "one"), "password_hash_cost": 1024})
    second = create_app({"data_dir": str(tmp_path / "two"), "password_hash_cost": 1024})
    first.hooks.add_action("rest_api_init", lambda server: None)
    assert first.hooks.has_action("rest_api_init")
    assert second.hooks is not first.hooks
    assert second.auth.key != first.auth.key
    first.auth.users.create("only-in-first", "long-enough")
    assert second.auth.users.find("only-in-first") is None


def test_an_unknown_timezone_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="'Mars/Olympus_Mons' is not a known timezone"):
        load_config({"timezone_string": "Mars/Olympus_Mons"})


@pytest.mark.parametrize(
    ("settings", "gmt_of_local_noon", "local_of_gmt_noon"),
    [
        ({}, "2024-07-01 12:00:00", "2024-07-01 12:00:00"),
        ({"gmt_offset": 5.5}, "2024-07-01 06:30:00", "2024-07-01 17:30:00"),
        ({"timezone_string": "America/New_York"}, "2024-07-01 16:00:00", "2024-07-01 08:00:00"),
        (
            {"timezone_string": "America/New_York", "gmt_offset": 5.5},
            "2024-07-01 16:00:00",
            "2024-07-01 08:00:00",
        ),
    ],
)
def test_dates_are_read_in_the_site_timezone(
    tmp_path: Path, settings: dict[str, object], gmt_of_local_noon: str, local_of_gmt_noon: str
) -> None:
    app = create_app({"data_dir": str(tmp_path), "password_hash_cost": 1024, **settings})
    noon = "2024-07-01 12:00:00"
    # Without an offset the wall time is local; with one it is an instant.
    assert app.server.get_date_with_gmt("2024-07-01T12:00:00") == (noon, gmt_of_local_noon)
    assert app.server.get_date_with_gmt("2024-07-01T12:00:00Z") == (local_of_gmt_noon, noon)


# ---------------------------------------------------------------------- #16
def test_static_root_defaults_to_the_data_directory_and_can_move(tmp_path: Path) -> None:
    assert load_config({"data_dir": str(tmp_path)}).static_directory == tmp_path / "static"
    config = load_config({"data_dir": str(tmp_path), "static_root": "/srv/static"})
    assert config.static_directory == Path("/srv/static")
    assert load_config(config) == config  # round-trips


def test_cache_timers_and_the_namespace_are_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_config().cache_timers is True
    assert load_config({"cache_timers": False}).cache_timers is False
    monkeypatch.setenv("SITECACHE_CACHE_NAMESPACE", "shop-1")
    assert load_config().cache_namespace == "shop-1"


def test_a_plugin_file_is_found_beside_its_toml_file_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The docs' greetings example: before #16, "No module named 'examples'".
    site = tmp_path / "site"
    site.mkdir()
    (site / "hello_plugin.py").write_text(
        "def activate(app):\n    app.hooks.add_filter('hello', lambda value: value + 1)\n",
        encoding="utf-8",
    )
    toml = site / "site.toml"
    toml.write_text('plugins = ["hello_plugin.py:activate"]\n', encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_config(toml)
    assert config.plugins == (f"{site / 'hello_plugin.py'}:activate",)
    app = create_app(config, data_dir=str(tmp_path / "var"), password_hash_cost=1024)
    assert app.hooks.apply_filters("hello", 1) == 2


def test_a_plugin_file_that_is_missing_or_broken_is_a_config_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    plain = tmp_path / "plain.py"
    plain.write_text("value = 1\n", encoding="utf-8")
    for spec, message in (
        (f"{tmp_path / 'missing.py'}:activate", "does not exist"),
        (f"{broken}:activate", "boom"),
        (f"{plain}:activate", "cannot be loaded"),
        (f"{plain}:value", "is not callable"),
    ):
        with pytest.raises(ConfigError, match=message):
            create_app({"data_dir": str(tmp_path / "var"), "plugins": [spec]})
