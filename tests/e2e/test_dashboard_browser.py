"""The cache dashboard, the account and login pages and a password-protected post in Debian's
headless Chromium (Selenium driving /usr/bin/chromium through /usr/bin/chromedriver; never a
downloaded browser build), against gunicorn on a free port with a temporary data directory.

Every admin and auth page is checked with axe-core (`tests.e2e.accessibility`: no violation
of impact serious or critical) at 1280 px and at a 390 x 844 phone screen, where it must not
scroll sideways (``document.documentElement.scrollWidth <= 390``). Each screen is saved as a
screenshot in the test's temporary directory. Without Chromium (or npm for axe-core) the tests
skip with a message, except in CI, which installs them (.ci/run).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.accessibility import axe_violations, refused
from tests.e2e.server import LiveServer
from tests.e2e.test_auth import cli

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    reason = (
        f"Chromium or chromedriver not found ({CHROMIUM}, {CHROMEDRIVER}): "
        "apt-get install chromium chromium-driver"
    )
    if os.environ.get("CI"):
        raise RuntimeError(f"{reason} (CI installs them: see .ci/run)")
    pytest.skip(reason, allow_module_level=True)

from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

LOGIN, PASSWORD = "dash", "dash-password-1"
POST_PASSWORD = "open sesame"
#: The phone screen of the acceptance (CSS pixels).
PHONE = (390, 844)
#: The narrowest screen the pages must fit without a sideways scroll.
NARROWEST = 360
#: Every tab and section of the dashboard.
DASHBOARD_PAGES = (
    "/site-admin/cache",
    "/site-admin/cache/contents",
    "/site-admin/cache/preload",
    *(
        f"/site-admin/cache/settings?group={group}"
        for group in ("basics", "cached", "exclusions", "purging", "preloading", "advanced")
    ),
    "/site-admin/cache/diagnostics",
    "/site-admin/cache/glossary",
)


def new_driver() -> Any:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(30)
    return driver


def log_in(driver: Any, base_url: str, path: str = "/site-admin/cache") -> None:
    driver.get(f"{base_url}{path}")  # sent to the login form
    assert "/login" in driver.current_url
    driver.find_element(By.ID, "log").send_keys(LOGIN)
    driver.find_element(By.ID, "pwd").send_keys(PASSWORD)
    submit(driver, driver.find_element(By.CSS_SELECTOR, "form [type=submit]"))
    assert driver.current_url.endswith(path), driver.current_url


@pytest.fixture(scope="module")
def protected_post(live_server: LiveServer) -> str:
    """The address of a published post with a password (created over REST)."""
    cli(live_server, "user", "create", LOGIN, "--role", "administrator", "--password", PASSWORD)
    created = cli(live_server, "app-password", "create", LOGIN, "--name", "browser")
    found = re.search(r"password: (.+?)  \(shown only once\)", created)
    assert found is not None, created
    live_server.credentials = f"{LOGIN}:{found.group(1)}"
    answer = live_server.request(
        "POST",
        "/site-json/site/v2/posts",
        {"title": "Members only", "content": "Hidden", "status": "publish",
         "password": POST_PASSWORD},
        admin=True,
    )  # fmt: skip
    assert answer.status == 201, answer.body[:300]
    link = answer.json()
    assert isinstance(link, dict)
    return str(link["link"])


@pytest.fixture(scope="module")
def browser(live_server: LiveServer, protected_post: str) -> Iterator[Any]:
    """A logged-in administrator's headless Chromium."""
    driver = new_driver()
    try:
        log_in(driver, live_server.base_url)
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def visitor(live_server: LiveServer, protected_post: str) -> Iterator[Any]:
    """A headless Chromium with nobody logged in."""
    driver = new_driver()
    try:
        yield driver
    finally:
        driver.quit()


def shoot(driver: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{re.sub(r'[^A-Za-z0-9_.-]+', '-', name).strip('-')}.png"
    assert driver.save_screenshot(str(path))
    assert path.stat().st_size > 1000


def submit(driver: Any, button: Any, timeout: float = 30.0) -> None:
    """Click a form's submit ``button`` and return once the answer page has replaced the
    current one: a click can return before the browser has left the old page, and a
    lookup right after it would then search the old page. The old page's window carries a
    mark the new page's does not; while the browser is between the two, a script or an
    element lookup may fail (Chromium: "Node ... does not belong to the document"), which
    the wait takes as "not yet"."""
    driver.execute_script("window.__sitecacheOldPage = true;")
    button.click()

    def answered(driver: Any) -> bool:
        return bool(
            driver.execute_script(
                "return window.__sitecacheOldPage === undefined"
                " && document.readyState === 'complete';"
            )
        )

    WebDriverWait(driver, timeout, ignored_exceptions=(WebDriverException,)).until(answered)


def open_page(driver: Any, live_server: LiveServer, path: str) -> None:
    driver.get(path if path.startswith("http") else f"{live_server.base_url}{path}")


def value_of(driver: Any, element_id: str) -> str:
    return str(driver.find_element(By.ID, element_id).get_attribute("value"))


def notice(driver: Any) -> str:
    return str(driver.find_element(By.ID, "notice").text)


class Screens:
    """Switches a driver between the desktop and the phone screen (the phone's through
    Chromium's device metrics: a headless window cannot be made narrower than 500 px)."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    def phone(self, width: int = PHONE[0], height: int = PHONE[1]) -> None:
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True},
        )

    def desktop(self) -> None:
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def check_page(driver: Any, live_server: LiveServer, path: str, tmp_path: Path) -> list[str]:
    """At 1280 px, then on the phone: axe-core's refused violations and any sideways scroll
    (one line each), with a screenshot of both."""
    problems: list[str] = []
    screens = Screens(driver)
    for name, switch in (("1280", screens.desktop), ("390", screens.phone)):
        switch()
        try:
            open_page(driver, live_server, path)
            problems += [f"{path} at {name} px: {line}" for line in refused(axe_violations(driver))]
            if name == "390":
                scroll = driver.execute_script("return document.documentElement.scrollWidth")
                if scroll > PHONE[0]:
                    problems.append(f"{path}: {scroll} px wide on a {PHONE[0]} px screen")
            shoot(driver, tmp_path, f"{path}-{name}")
        finally:
            screens.desktop()
    # The narrowest phones in use: still no sideways scroll at 360 px.
    screens.phone(NARROWEST, PHONE[1])
    try:
        open_page(driver, live_server, path)
        scroll = driver.execute_script("return document.documentElement.scrollWidth")
        if scroll > NARROWEST:
            problems.append(f"{path}: {scroll} px wide on a {NARROWEST} px screen")
    finally:
        screens.desktop()
    return problems


def test_every_admin_page_is_accessible_and_fits_a_phone(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    assert live_server.request("GET", "/").status == 200  # something in the contents table
    problems: list[str] = []
    for path in ("/site-admin/", *DASHBOARD_PAGES):
        problems += check_page(browser, live_server, path, tmp_path)
    assert not problems, "\n".join(problems)


def test_the_confirmation_and_a_refused_form_are_accessible(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    open_page(browser, live_server, "/site-admin/cache/settings?group=advanced")
    field = browser.find_element(By.ID, "f_gc_interval")
    field.clear()
    field.send_keys("5")
    submit(browser, browser.find_element(By.ID, "settings-save"))
    summary = browser.find_element(By.ID, "error")
    assert "Clean-up interval" in summary.text
    assert browser.find_element(By.ID, "f_gc_interval").get_attribute("aria-invalid") == "true"
    problems = refused(axe_violations(browser))
    shoot(browser, tmp_path, "settings-refused")
    open_page(browser, live_server, "/site-admin/cache/contents")
    submit(browser, browser.find_element(By.ID, "purge-all"))
    assert browser.find_element(By.ID, "confirm-yes").is_displayed()
    problems += refused(axe_violations(browser))
    shoot(browser, tmp_path, "confirm")
    assert not problems, "\n".join(problems)


def test_the_login_form_and_a_protected_post_are_accessible(
    visitor: Any, live_server: LiveServer, protected_post: str, tmp_path: Path
) -> None:
    problems = check_page(visitor, live_server, "/login", tmp_path)
    problems += check_page(visitor, live_server, protected_post, tmp_path)
    open_page(visitor, live_server, protected_post)
    assert visitor.find_element(By.CSS_SELECTOR, "form.post-password-form")
    assert not problems, "\n".join(problems)


def test_purge_everything_takes_a_second_explicit_step(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    assert live_server.request("GET", "/").status == 200  # the home page is cached
    open_page(browser, live_server, "/site-admin/cache/contents")
    assert browser.find_elements(By.CSS_SELECTOR, "#entries tbody tr")
    submit(browser, browser.find_element(By.ID, "purge-all"))
    # One click asked; nothing was purged yet.
    assert "Delete every cached page?" in browser.page_source
    shoot(browser, tmp_path, "purge-all-confirm")
    submit(browser, browser.find_element(By.ID, "confirm-no"))  # "No, go back"
    assert "/site-admin/cache/contents" in browser.current_url
    assert browser.find_elements(By.CSS_SELECTOR, "#entries tbody tr")
    submit(browser, browser.find_element(By.ID, "purge-all"))
    submit(browser, browser.find_element(By.ID, "confirm-yes"))
    assert re.match(r"Deleted \d[\d,]* pages? \([^)]+\) of every host\.", notice(browser))
    assert browser.find_elements(By.ID, "no-entries")
    shoot(browser, tmp_path, "purged-all")


def test_restore_defaults_takes_a_second_explicit_step(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    open_page(browser, live_server, "/site-admin/cache/settings")
    field = browser.find_element(By.ID, "f_max_age")
    field.clear()
    field.send_keys("777")
    submit(browser, browser.find_element(By.ID, "settings-save"))
    assert notice(browser) == "Saved Basics: Page lifetime (seconds)."
    submit(browser, browser.find_element(By.ID, "settings-reset"))
    assert "Restore every setting to its default?" in browser.page_source
    open_page(browser, live_server, "/site-admin/cache/settings")
    assert value_of(browser, "f_max_age") == "777"  # the first click changed nothing
    submit(browser, browser.find_element(By.ID, "settings-reset"))
    submit(browser, browser.find_element(By.ID, "confirm-yes"))
    assert notice(browser).startswith("Restored the defaults: 1 setting changed")
    assert value_of(browser, "f_max_age") == "3600"
    shoot(browser, tmp_path, "defaults-restored")


def test_purging_one_page_removes_it_from_the_list(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    assert live_server.request("GET", "/").status == 200  # an anonymous visit stores the home page
    open_page(browser, live_server, "/site-admin/cache/contents")
    home = f"{live_server.base_url}/"
    button = browser.find_element(By.CSS_SELECTOR, f'button[aria-label="Purge {home}"]')
    submit(browser, button)
    assert re.match(rf"Deleted 1 page \([^)]+\) of {re.escape(home)}\.", notice(browser))
    remaining = [
        cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#entries .entry-url")
    ]
    assert home not in remaining
    browser.refresh()  # a reload repeats nothing and says nothing again
    assert not browser.find_elements(By.ID, "notice")
    shoot(browser, tmp_path, "purged")


def test_preload_starts_and_cancels_and_the_cache_test_runs(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    open_page(browser, live_server, "/site-admin/cache/preload")
    submit(browser, browser.find_element(By.ID, "preload-start"))
    assert notice(browser).startswith("Preload started:")
    assert browser.find_element(By.ID, "preload-progress").is_displayed()
    shoot(browser, tmp_path, "preload")
    open_page(browser, live_server, "/site-admin/cache/preload")
    submit(browser, browser.find_element(By.ID, "preload-cancel"))
    if browser.find_elements(By.ID, "confirm-yes"):  # still running: asked first
        submit(browser, browser.find_element(By.ID, "confirm-yes"))
    assert "cancel" in notice(browser).lower()
    open_page(browser, live_server, "/site-admin/cache/diagnostics")
    submit(browser, browser.find_element(By.ID, "test-run"))
    refusal = browser.find_elements(By.ID, "error")
    assert not refusal, refusal[0].text
    assert browser.find_element(By.ID, "test-result").text.startswith("Passed")
    shoot(browser, tmp_path, "cache-test")


def test_an_application_password_is_created_once_and_revoked(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    open_page(browser, live_server, "/site-admin/")
    browser.find_element(By.ID, "app-password-name").send_keys("browser test")
    submit(browser, browser.find_element(By.ID, "create-app-password"))
    password = value_of(browser, "new-password-value")
    assert len(password.replace(" ", "")) == 24
    copy = browser.find_element(By.ID, "copy-password")  # shown by the page's own script
    assert copy.is_displayed()
    copy.click()
    assert copy.text == "Copied"
    shoot(browser, tmp_path, "app-password")
    browser.refresh()  # F5: POST-redirect-GET, so nothing is created again
    assert password not in browser.page_source  # shown once
    (button,) = browser.find_elements(By.CSS_SELECTOR, 'button[aria-label="Revoke browser test"]')
    submit(browser, button)
    assert "revoked" in notice(browser)
