"""The Hudi view served by a real `airflow api-server` through the `hudi` plugin: refused
without an Airflow login, served with one, and its timeline chart drawn in a real browser
(headless Chromium) after logging in on Airflow's login page."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from hudi_core import HudiTable
from tests import datagen
from tests.airflow.ui_server import ApiServer, running_api_server
from tests.tables import create_trips_table

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROME_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,1024",
)
WAIT_S = 30

TABLES_YAML = """\
tables:
  - name: trips
    base_path: {trips}
    table_type: MERGE_ON_READ
    record_key_field: uuid
    partition_path_field: city
    precombine_field: ts
    source_path: {landing}
    source_format: parquet
  - name: later
    base_path: {later}
    table_type: COPY_ON_WRITE
    record_key_field: uuid
    partition_path_field: city
    precombine_field: ts
    source_path: {landing}
    source_format: parquet
"""


@pytest.fixture(scope="module")
def trips_path(tmp_path_factory) -> str:
    """Three deltacommits and a compaction planned, not run: completed and pending instants."""
    options = {"hoodie.compact.inline.max.delta.commits": "2"}
    path, table = create_trips_table(tmp_path_factory.mktemp("lake"), "MERGE_ON_READ", options)
    for seed in range(1, 4):
        table.write(datagen.trips(list(range(8)), seed=seed, ts=seed), operation="upsert")
    assert table.compaction.schedule() is not None
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory, trips_path) -> Iterator[ApiServer]:
    home = tmp_path_factory.mktemp("airflow-home")
    tables_config = home / "tables.yaml"
    tables_config.write_text(
        TABLES_YAML.format(trips=trips_path, later=home / "later", landing=home / "landing")
    )
    with running_api_server(home, tables_config) as api_server:
        yield api_server


@pytest.fixture(scope="module")
def token(server) -> str:
    return server.token()


def _timestamps(path: str) -> list[str]:
    return [i.timestamp for i in HudiTable.open(path).timeline()]


# ---- without a login


@pytest.mark.parametrize("route", ["/hudi/api/tables", "/hudi/api/tables/trips"])
def test_json_needs_a_login(server, route):
    assert httpx.get(server.url + route).status_code == 401
    forged = {"Authorization": "Bearer not-a-jwt"}
    assert httpx.get(server.url + route, headers=forged).status_code == 403
    assert httpx.get(server.url + route, cookies={"_token": "not-a-jwt"}).status_code == 403


def test_page_sends_anonymous_browsers_to_the_login_page(server):
    for cookies in ({}, {"_token": "not-a-jwt"}):
        response = httpx.get(server.url + "/hudi/", cookies=cookies)
        assert response.status_code == 303
        assert response.headers["location"].startswith("/auth/login?next=")
        assert "trips" not in response.text


def test_assets_need_a_login(server):
    assert httpx.get(server.url + "/hudi/static/timeline.js").status_code == 401


# ---- with a login


def test_json_lists_the_tables_and_their_timelines(server, token, trips_path):
    headers = {"Authorization": f"Bearer {token}"}
    response = httpx.get(server.url + "/hudi/api/tables", headers=headers)

    assert response.status_code == 200, response.text
    tables = {t["name"]: t for t in response.json()["tables"]}
    assert tables.keys() == {"trips", "later"}
    trips = tables["trips"]
    assert trips["status"] == "ok"
    assert [i["timestamp"] for i in trips["instants"]] == _timestamps(trips_path)
    assert trips["counts_by_action"] == {"compaction": 1, "deltacommit": 3}
    assert trips["pending_compactions"] == [_timestamps(trips_path)[-1]]
    assert tables["later"]["status"] == "not_created"

    one = httpx.get(server.url + "/hudi/api/tables/trips", headers=headers)
    assert one.status_code == 200 and one.json() == trips
    assert httpx.get(server.url + "/hudi/api/tables/nope", headers=headers).status_code == 404


@pytest.mark.parametrize("credentials", ["header", "cookie"])
def test_page_shows_the_tables(server, token, trips_path, credentials):
    if credentials == "header":
        kwargs = {"headers": {"Authorization": f"Bearer {token}"}}
    else:
        kwargs = {"cookies": {"_token": token}}  # what the Airflow UI's login leaves
    response = httpx.get(server.url + "/hudi/", **kwargs)

    assert response.status_code == 200, response.text
    assert 'id="table-trips"' in response.text
    for timestamp in _timestamps(trips_path):
        assert timestamp in response.text
    assert "Not created yet" in response.text
    assert httpx.get(server.url + "/hudi/static/timeline.js", **kwargs).status_code == 200


# ---- in a browser


@pytest.fixture(scope="module")
def browser(server):
    """Headless Chromium, logged in through Airflow's own login page."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.fail(
            f"{' and '.join(missing)} missing: the browser test needs Debian's chromium and "
            "chromium-driver packages; `./run.sh test` installs them"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(
            service=Service(executable_path=str(CHROMEDRIVER)), options=options
        )
        try:
            _log_in(driver, server)
            yield driver
        finally:
            driver.quit()


def _log_in(driver, server: ApiServer) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(server.url + "/hudi/")
    WebDriverWait(driver, WAIT_S).until(ec.presence_of_element_located((By.NAME, "username")))
    assert "/auth/login" in driver.current_url, "the view must send a new browser to log in"
    driver.find_element(By.NAME, "username").send_keys(server.username)
    driver.find_element(By.NAME, "password").send_keys(server.password)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(driver, WAIT_S).until(ec.url_to_be(server.url + "/hudi/"))


def _marks(driver) -> list[dict[str, str]]:
    """The marks of the trips chart, once the page's script has drawn it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    chart = WebDriverWait(driver, WAIT_S).until(
        ec.presence_of_element_located((By.ID, "timeline-trips"))
    )
    assert chart.tag_name == "svg"
    return [
        {key: mark.get_attribute(f"data-{key}") for key in ("timestamp", "action", "state")}
        for mark in chart.find_elements(By.CSS_SELECTOR, ".instant-mark")
    ]


def test_chart_has_one_mark_per_active_instant(browser, server, trips_path):
    browser.get(server.url + "/hudi/")

    expected = [
        {"timestamp": i.timestamp, "action": i.action, "state": i.state.value}
        for i in HudiTable.open(trips_path).timeline()
    ]
    assert _marks(browser) == expected
    assert expected[-1]["state"] == "REQUESTED"  # the planned compaction


def test_view_is_in_the_airflow_ui_navigation(browser, server, trips_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server.url + "/plugin/hudi-tables")
    WebDriverWait(browser, WAIT_S).until(
        ec.frame_to_be_available_and_switch_to_it((By.CSS_SELECTOR, "iframe[title='Hudi tables']"))
    )
    try:
        assert len(_marks(browser)) == len(_timestamps(trips_path))
    finally:
        browser.switch_to.default_content()
