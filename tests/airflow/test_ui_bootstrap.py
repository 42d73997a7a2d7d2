"""The Hudi view on a bootstrapped table: its instants 00000000000001 and 00000000000002, which
are no dates, are labelled "bootstrap (metadata only)" and "bootstrap (full record)" in the
summary, its JSON and the page, in place of a time; other instants keep their times."""

from __future__ import annotations

from hudi_airflow.tables_config import TableEntry
from hudi_airflow.ui.app import templates
from hudi_airflow.ui.instants import instant_label
from hudi_airflow.ui.summary import OK, summarize
from hudi_core import HudiTable
from tests import bootstrap_source

METADATA_ONLY, FULL_RECORD = "bootstrap (metadata only)", "bootstrap (full record)"


def _entry(base_path: str) -> TableEntry:
    return TableEntry(
        name="trips",
        base_path=base_path,
        table_type="COPY_ON_WRITE",
        record_key_field="uuid",
        partition_path_field="city",
        precombine_field="ts",
        source_path="/nowhere",
        source_format="parquet",
        bootstrap_source_path="/warehouse/trips",
    )


def test_bootstrap_instants_are_labelled_and_dates_are_not():
    assert instant_label("00000000000001") == METADATA_ONLY
    assert instant_label("00000000000002") == FULL_RECORD
    assert instant_label("20260105103000123") is None


def test_the_summary_and_page_label_the_instants_of_a_bootstrap(tmp_path):
    source = tmp_path / "source"
    expected = bootstrap_source.write_source(source)
    path = str(tmp_path / "trips")
    table = HudiTable.bootstrap(
        path,
        str(source),
        "trips",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options=bootstrap_source.MIXED_MODES,
    )
    later = table.write(expected.slice(0, 1), operation="upsert")

    summary = summarize(_entry(path))

    assert summary.status == OK
    rows = {row.timestamp: row for row in summary.instants}
    assert list(rows) == ["00000000000001", "00000000000002", later]
    assert rows["00000000000001"].label == METADATA_ONLY
    assert rows["00000000000002"].label == FULL_RECORD
    assert rows["00000000000001"].time_utc is None  # no date: the label stands in for it
    assert rows[later].label is None and rows[later].time_utc is not None
    assert rows["00000000000001"].stats.operation == "BOOTSTRAP"
    as_json = {row["timestamp"]: row["label"] for row in summary.to_dict()["instants"]}
    assert as_json["00000000000002"] == FULL_RECORD
    page = templates.env.get_template("index.html").render(
        tables=[summary], config_error=None, config_path="tables.yaml", user_name="admin"
    )
    for timestamp, label in (("00000000000001", METADATA_ONLY), ("00000000000002", FULL_RECORD)):
        row = page.split(f'data-instant="{timestamp}"')[1].split("</tr>")[0]
        assert f'<span class="instant-label">{label}</span>' in row
    later_row = page.split(f'data-instant="{later}"')[1].split("</tr>")[0]
    assert "instant-label" not in later_row and " UTC</td>" in later_row
