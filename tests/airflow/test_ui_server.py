"""The Hudi view served by a real `airflow api-server` through the `hudi` plugin: refused
without an Airflow login, served with one, and in a real browser (headless Chromium, logged in
on Airflow's login page) its timeline chart, per-instant stats, the compaction backlog, the
files drill-down and a bad entry of the tables file beside a working table."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from hudi_core import HudiTable
from tests import datagen
from tests.airflow.ui_server import WAIT_S, ApiServer, logged_in_browser, running_api_server
from tests.tables import create_trips_table

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

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
    options:
      hoodie.compact.inline.max.delta.commits: 2
  - name: later
    base_path: {later}
    table_type: COPY_ON_WRITE
    record_key_field: uuid
    partition_path_field: city
    precombine_field: ts
    source_path: {landing}
    source_format: parquet
  - name: broken
    base_path: {later}
    table_type: MERGE_ON_WRITE
    record_key_field: uuid
    precombine_field: ts
    source_path: {landing}
    source_format: parquet
"""
# What the ingest operator records in the commits it makes (hudi_airflow.ui.airflow_links).
RUN = {
    "_hoodie.airflow.dag_id": "trips_ingest",
    "_hoodie.airflow.run_id": "manual__2026-11-24T10:00:00+00:00",
    "_hoodie.airflow.task_id": "ingest",
}


@pytest.fixture(scope="module")
def trips_path(tmp_path_factory) -> str:
    """Three deltacommits (made by an Airflow task) and a compaction planned, not run:
    completed and pending instants."""
    options = {"hoodie.compact.inline.max.delta.commits": "2"}
    path, table = create_trips_table(tmp_path_factory.mktemp("lake"), "MERGE_ON_READ", options)
    for seed in range(1, 4):
        batch = datagen.trips(list(range(8)), seed=seed, ts=seed)
        table.write(batch, operation="upsert", options=RUN)
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


def _without_ages(summary: dict) -> dict:
    for pending in summary["compaction_backlog"]["pending"]:
        pending.pop("age_s")
    return summary


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
    assert tables.keys() == {"trips", "later", "broken"}
    trips = tables["trips"]
    assert trips["status"] == "ok"
    assert [i["timestamp"] for i in trips["instants"]] == _timestamps(trips_path)
    assert trips["counts_by_action"] == {"compaction": 1, "deltacommit": 3}
    assert trips["pending_compactions"] == [_timestamps(trips_path)[-1]]
    assert tables["later"]["status"] == "not_created"
    assert tables["broken"]["status"] == "invalid"
    assert "table entry #3 ('broken'): key 'table_type'" in tables["broken"]["error"]

    one = httpx.get(server.url + "/hudi/api/tables/trips", headers=headers)
    assert one.status_code == 200
    assert _without_ages(one.json()) == _without_ages(trips)  # ages grow between requests
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
    for asset in ("timeline.js", "task_links.js", "timeline.css"):
        assert httpx.get(f"{server.url}/hudi/static/{asset}", **kwargs).status_code == 200


# ---- in a browser


@pytest.fixture(scope="module")
def browser(server):
    """Headless Chromium, logged in through Airflow's own login page."""
    with logged_in_browser(server) as driver:
        yield driver


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


def test_the_view_answers_an_operators_questions(browser, server, trips_path):
    """Per-instant stats and the task that made each write, the pending compaction with its
    age and log count, the drill-down to file groups, and the bad entry beside the table."""
    from selenium.webdriver.common.by import By

    browser.get(server.url + "/hudi/")
    _marks(browser)  # the page is drawn
    trips = browser.find_element(By.ID, "table-trips")
    timeline = HudiTable.open(trips_path).timeline()
    planned = timeline[-1].timestamp

    rows = trips.find_elements(By.CSS_SELECTOR, "#instants-trips tr.instant")
    assert [r.get_attribute("data-instant") for r in rows] == [i.timestamp for i in timeline]
    first = rows[0]
    assert first.find_element(By.CSS_SELECTOR, ".operation").text == "upsert"
    assert first.find_element(By.CSS_SELECTOR, ".rows-inserted").text == "8"
    assert rows[1].find_element(By.CSS_SELECTOR, ".rows-updated").text == "8"
    assert re.fullmatch(r"[0-9.]+ s", first.find_element(By.CSS_SELECTOR, ".ran").text)
    link = first.find_element(By.CSS_SELECTOR, "a.airflow-task")
    assert link.get_attribute("href") == (
        f"{server.url}/dags/trips_ingest/runs/manual__2026-11-24T10%3A00%3A00%2B00%3A00"
        "/tasks/ingest"
    )
    assert "compaction" in rows[-1].get_attribute("class").split()
    assert rows[-1].find_element(By.CSS_SELECTOR, ".kind.compaction").is_displayed()

    pending = trips.find_element(By.CSS_SELECTOR, "#backlog-trips tr.pending-compaction")
    assert pending.get_attribute("data-instant") == planned
    assert re.fullmatch(r"[0-9.]+ s|\d+ min \d+ s", pending.find_element(By.CLASS_NAME, "age").text)
    assert pending.find_element(By.CLASS_NAME, "log-files").text == "8"  # 2 in each of 4 groups
    assert trips.find_element(By.CSS_SELECTOR, "#backlog-trips .delta-commits").text == "3"
    assert trips.find_element(By.CSS_SELECTOR, "#backlog-trips .max-delta-commits").text == "2"

    group_row = trips.find_element(By.CSS_SELECTOR, "#files-trips tr.file-group")
    assert not group_row.is_displayed()  # folded until asked for
    trips.find_element(By.CSS_SELECTOR, "#files-trips > summary").click()
    trips.find_element(By.CSS_SELECTOR, "#files-trips details.partition > summary").click()
    assert group_row.is_displayed()
    assert group_row.find_element(By.CLASS_NAME, "log-files").text == "2"
    assert "2 log files" in group_row.find_element(By.CSS_SELECTOR, "li.slice.latest").text

    broken = browser.find_element(By.ID, "table-broken")
    assert broken.get_attribute("data-status") == "invalid"
    message = broken.find_element(By.CLASS_NAME, "entry-error").text
    assert "table entry #3 ('broken'): key 'table_type'" in message
    assert trips.get_attribute("data-status") == "ok"
