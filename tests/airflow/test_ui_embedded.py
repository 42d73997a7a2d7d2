"""An instant's link to the Airflow task instance that made it, clicked in a real browser: in
the view opened the way a user does (Browse > Hudi tables, Airflow's page that shows it in a
sandboxed iframe) and at /hudi/ directly. Either way Airflow's UI then shows that task
instance, one the API server knows: its DAG is serialized and the run triggered."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import datagen
from tests.airflow.ui_server import (
    HUDI_VIEW_FRAME,
    ApiServer,
    in_the_hudi_view_frame,
    logged_in_browser,
    open_the_hudi_view_from_the_browse_menu,
    path_of,
    running_api_server,
    wait,
)
from tests.tables import create_trips_table

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

DAG_ID = "trips_ingest"
TASK_ID = "ingest"
RUN_ID = "manual__2026-11-24T10:00:00+00:00"
DAG_FILE = f"""
from datetime import datetime

from airflow.sdk import DAG, task

with DAG("{DAG_ID}", schedule=None, start_date=datetime(2024, 1, 1), catchup=False):

    @task
    def {TASK_ID}():
        pass

    {TASK_ID}()
"""
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
"""
# What the ingest operator records in its commits (hudi_airflow.ui.airflow_links).
MADE_BY = {
    "_hoodie.airflow.dag_id": DAG_ID,
    "_hoodie.airflow.run_id": RUN_ID,
    "_hoodie.airflow.task_id": TASK_ID,
}
TASK_PATH = f"/dags/{DAG_ID}/runs/manual__2026-11-24T10%3A00%3A00%2B00%3A00/tasks/{TASK_ID}"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[ApiServer]:
    """The view of one table with a commit made by the task instance, which the server knows."""
    path, table = create_trips_table(tmp_path_factory.mktemp("lake"), "MERGE_ON_READ", {})
    table.write(datagen.trips(list(range(8)), seed=1, ts=1), operation="upsert", options=MADE_BY)
    home = tmp_path_factory.mktemp("airflow-home")
    tables_config = home / "tables.yaml"
    tables_config.write_text(TABLES_YAML.format(trips=path, landing=home / "landing"))
    with running_api_server(home, tables_config, {f"{DAG_ID}.py": DAG_FILE}) as api_server:
        api_server.trigger_dag_run(DAG_ID, RUN_ID, logical_date="2026-11-24T10:00:00+00:00")
        yield api_server


@pytest.fixture(scope="module")
def browser(server):
    with logged_in_browser(server) as driver:
        yield driver


def _click_the_task_link(driver) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    link = (By.CSS_SELECTOR, "#instants-trips tr.instant a.airflow-task")
    wait(driver).until(ec.element_to_be_clickable(link)).click()


def _assert_shows_the_task_instance(driver) -> None:
    """The task instance's route, and its page: its header, the breadcrumb of its DAG and run,
    and no Hudi view any more."""
    from selenium.webdriver.common.by import By

    wait(driver).until(lambda d: path_of(d) == TASK_PATH, f"no page at {TASK_PATH}")
    header = wait(driver).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "[data-testid='header-card']")
    )
    wait(driver).until(lambda _: header.text.splitlines()[:1] == [TASK_ID])
    main = driver.find_element(By.CSS_SELECTOR, "[data-testid='main-content']")
    assert main.find_element(By.LINK_TEXT, DAG_ID).is_displayed()
    assert main.find_element(By.LINK_TEXT, RUN_ID).is_displayed()
    assert main.find_element(By.CSS_SELECTOR, "[aria-current='page']").text == TASK_ID
    assert driver.find_elements(By.CSS_SELECTOR, HUDI_VIEW_FRAME) == []


def test_task_link_in_the_airflow_ui_opens_the_task_instance(browser, server):
    open_the_hudi_view_from_the_browse_menu(browser, server)
    browser.execute_script("window.hudiViewShown = true")  # a reload would forget it
    with in_the_hudi_view_frame(browser):
        _click_the_task_link(browser)

    _assert_shows_the_task_instance(browser)
    assert browser.execute_script("return window.hudiViewShown") is True, "the UI reloaded"
    browser.back()  # the link was a navigation of the UI: Back shows the view again
    wait(browser).until(lambda d: path_of(d).startswith("/plugin/hudi-tables"))
    with in_the_hudi_view_frame(browser):
        _click_the_task_link(browser)  # and its link still works
    _assert_shows_the_task_instance(browser)


def test_task_link_of_the_view_opened_directly_opens_the_task_instance(browser, server):
    browser.get(server.url + "/hudi/")
    _click_the_task_link(browser)

    _assert_shows_the_task_instance(browser)
