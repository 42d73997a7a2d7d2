"""What a metastore holds, read without our sync code: through the metastore's thrift API
(hmsclient), or through Spark SQL on Spark's Hive catalog. Both give the same shape:

    {"databases": [...], "tables": {name: {"columns": [[name, type]], "partition_keys": ...,
     "location", "input_format", "output_format", "serde", "serde_properties",
     "table_properties", "table_type", "partitions": {"v1/v2": location}}}}
"""

from __future__ import annotations

from typing import Any


def thrift_view(client: Any, database: str) -> dict:
    databases = sorted(client.get_all_databases())
    tables = {}
    if database in databases:
        for name in sorted(client.get_all_tables(database)):
            table = client.get_table(database, name)
            sd = table.sd
            tables[name] = {
                "columns": [[c.name, c.type] for c in sd.cols],
                "partition_keys": [[c.name, c.type] for c in table.partitionKeys],
                "location": sd.location,
                "input_format": sd.inputFormat,
                "output_format": sd.outputFormat,
                "serde": sd.serdeInfo.serializationLib,
                "serde_properties": dict(sd.serdeInfo.parameters or {}),
                "table_properties": dict(table.parameters or {}),
                "table_type": table.tableType,
                "partitions": {
                    "/".join(p.values): p.sd.location
                    for p in client.get_partitions(database, name, -1)
                },
            }
    return {"databases": databases, "tables": tables}


def spark_view(spark: Any, database: str) -> dict:
    """The same, from Spark SQL (DESCRIBE FORMATTED, SHOW PARTITIONS, SHOW TBLPROPERTIES)."""
    databases = sorted(row[0] for row in spark.sql("SHOW DATABASES").collect())
    tables = {}
    if database in databases:
        for row in spark.sql(f"SHOW TABLES IN {database}").collect():
            name = row["tableName"]
            tables[name] = _spark_table(spark, f"{database}.{name}")
    return {"databases": databases, "tables": tables}


def _spark_table(spark: Any, full_name: str) -> dict:
    described = [tuple(r) for r in spark.sql(f"DESCRIBE FORMATTED {full_name}").collect()]
    columns, keys, details, section = [], [], {}, "columns"
    for name, data_type, _ in described:
        if name.startswith("# Partition"):
            section = "keys"
        elif name.startswith("# Detailed"):
            section = "details"
        elif not name or name.startswith("#"):
            continue
        elif section == "details":
            details[name] = data_type
        else:
            (keys if section == "keys" else columns).append([name, data_type])
    key_names = {k[0] for k in keys}
    properties = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {full_name}").collect()}
    partitions = {}
    if keys:
        for (spec,) in spark.sql(f"SHOW PARTITIONS {full_name}").collect():
            clause = ", ".join(f"{k}='{v}'" for k, v in (p.split("=", 1) for p in spec.split("/")))
            rows = spark.sql(f"DESCRIBE FORMATTED {full_name} PARTITION ({clause})").collect()
            location = next(r[1] for r in rows if r[0] == "Location")
            partitions["/".join(p.split("=", 1)[1] for p in spec.split("/"))] = location
    return {
        "columns": [c for c in columns if c[0] not in key_names],
        "partition_keys": keys,
        "location": details.get("Location"),
        "input_format": details.get("InputFormat"),
        "output_format": details.get("OutputFormat"),
        "serde": details.get("Serde Library"),
        "serde_properties": _bracketed(details.get("Storage Properties", "")),
        "table_properties": properties,
        "table_type": details.get("Type"),
        "partitions": partitions,
    }


def _bracketed(text: str) -> dict[str, str]:
    """'[k=v, k2=v2]' as DESCRIBE FORMATTED prints properties."""
    inner = text.strip().removeprefix("[").removesuffix("]")
    pairs = [p.split("=", 1) for p in inner.split(", ") if "=" in p]
    return {k: v for k, v in pairs}
