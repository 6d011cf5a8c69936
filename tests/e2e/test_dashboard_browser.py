"""The cache dashboard and the account page in Debian's headless Chromium (Selenium driving
/usr/bin/chromium through /usr/bin/chromedriver; never a downloaded browser build), against
gunicorn on a free port with a temporary data directory. Each screen is saved as a screenshot
in the test's temporary directory."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.server import LiveServer
from tests.e2e.test_auth import cli

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    pytest.skip(
        f"Chromium or chromedriver not found ({CHROMIUM}, {CHROMEDRIVER}): "
        "apt-get install chromium chromium-driver",
        allow_module_level=True,
    )

from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

LOGIN, PASSWORD = "dash", "dash-password-1"


@pytest.fixture(scope="module")
def browser(live_server: LiveServer) -> Iterator[Any]:
    """A logged-in administrator's headless Chromium."""
    cli(live_server, "user", "create", LOGIN, "--role", "administrator", "--password", PASSWORD)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,900"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(20)
    try:
        driver.get(f"{live_server.base_url}/site-admin/cache")  # sent to the login form
        assert "/login" in driver.current_url
        driver.find_element(By.ID, "log").send_keys(LOGIN)
        driver.find_element(By.ID, "pwd").send_keys(PASSWORD)
        submit(driver, driver.find_element(By.CSS_SELECTOR, "form [type=submit]"))
        assert driver.current_url.endswith("/site-admin/cache"), driver.current_url
        yield driver
    finally:
        driver.quit()


def shoot(driver: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
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


def dashboard(driver: Any, live_server: LiveServer) -> None:
    driver.get(f"{live_server.base_url}/site-admin/cache")


def value_of(driver: Any, element_id: str) -> str:
    return str(driver.find_element(By.ID, element_id).get_attribute("value"))


def test_a_setting_is_saved_and_a_bad_one_is_refused_inline(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    dashboard(browser, live_server)
    shoot(browser, tmp_path, "dashboard")
    field = browser.find_element(By.ID, "f_max_age")
    field.clear()
    field.send_keys("777")
    submit(browser, browser.find_element(By.ID, "settings-save"))
    assert "Settings saved." in browser.find_element(By.ID, "notice").text
    dashboard(browser, live_server)  # a reload shows the stored value
    assert value_of(browser, "f_max_age") == "777"
    interval = browser.find_element(By.ID, "f_gc_interval")
    interval.clear()
    interval.send_keys("5")
    field = browser.find_element(By.ID, "f_max_age")
    field.clear()
    field.send_keys("888")
    submit(browser, browser.find_element(By.ID, "settings-save"))
    assert browser.find_element(By.ID, "error-gc_interval").text
    shoot(browser, tmp_path, "settings-error")
    dashboard(browser, live_server)
    assert value_of(browser, "f_max_age") == "777"  # nothing was saved


def test_purging_one_page_removes_it_from_the_list(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    assert live_server.request("GET", "/").status == 200  # an anonymous visit stores the home page
    dashboard(browser, live_server)
    urls = [cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#entries .entry-url")]
    home = f"{live_server.base_url}/"
    assert home in urls
    row = browser.find_elements(By.CSS_SELECTOR, "#entries tbody tr")[urls.index(home)]
    submit(browser, row.find_element(By.CSS_SELECTOR, ".purge-entry"))
    assert "Purged: 1 entries deleted" in browser.find_element(By.ID, "notice").text
    remaining = [
        cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#entries .entry-url")
    ]
    assert home not in remaining
    shoot(browser, tmp_path, "purged")


def test_preload_starts_and_cancels_and_the_cache_test_runs(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    dashboard(browser, live_server)
    submit(browser, browser.find_element(By.ID, "preload-start"))
    assert "Preload started." in browser.find_element(By.ID, "notice").text
    assert browser.find_element(By.ID, "preload-progress").is_displayed()
    shoot(browser, tmp_path, "preload")
    dashboard(browser, live_server)
    submit(browser, browser.find_element(By.ID, "preload-cancel"))
    assert "Preload cancelled." in browser.find_element(By.ID, "notice").text
    submit(browser, browser.find_element(By.ID, "test-run"))
    refused = browser.find_elements(By.ID, "error")
    assert not refused, refused[0].text
    assert browser.find_element(By.ID, "test-result").text.startswith("Passed")
    shoot(browser, tmp_path, "cache-test")


def test_an_application_password_is_created_and_revoked(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    browser.get(f"{live_server.base_url}/site-admin/")
    browser.find_element(By.ID, "app-password-name").send_keys("browser test")
    submit(browser, browser.find_element(By.ID, "create-app-password"))
    password = value_of(browser, "new-password-value")
    assert len(password.replace(" ", "")) == 24
    copy = browser.find_element(By.ID, "copy-password")  # shown by the page's own script
    assert copy.is_displayed()
    copy.click()
    assert copy.text == "Copied"
    shoot(browser, tmp_path, "app-password")
    browser.get(f"{live_server.base_url}/site-admin/")
    assert password not in browser.page_source  # shown once
    submit(browser, browser.find_element(By.CSS_SELECTOR, "button.revoke"))
    assert "revoked" in browser.find_element(By.ID, "notice").text
    assert browser.find_elements(By.ID, "no-passwords")


def test_a_360_pixel_wide_screen_has_no_horizontal_scroll(
    browser: Any, live_server: LiveServer, tmp_path: Path
) -> None:
    browser.set_window_size(360, 800)
    try:
        for path, name in (("/site-admin/cache", "dashboard-360"), ("/site-admin/", "account-360")):
            browser.get(live_server.base_url + path)
            inner = browser.execute_script("return window.innerWidth")
            scroll = browser.execute_script("return document.documentElement.scrollWidth")
            assert scroll <= inner, f"{path}: {scroll} px wide content in a {inner} px window"
            shoot(browser, tmp_path, name)
    finally:
        browser.set_window_size(1200, 900)
