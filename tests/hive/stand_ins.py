"""Stand-ins for the two Apache Hudi input format classes, for the Spark Thrift Server only.

A HiveQL server loads a table's input format class when the table is created or altered, so
defining a Hudi table over HiveServer2 needs Apache Hudi's hudi-hadoop-mr-bundle on the
server's classpath (Apache Hudi documents the same for its jdbc mode). That jar cannot be had
here (no Maven Central), so the jdbc-mode tests give the server two classes of the same names
that only satisfy that class check: they are plain parquet input formats, and no test reads a
table through them. The metastore itself never loads them (hms and spark mode need nothing).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.spark.cluster import SPARK_HOME

_CLASSES = (
    "org.apache.hudi.hadoop.HoodieParquetInputFormat",
    "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat",
)


def hudi_input_format_stand_ins(work_dir: Path) -> Path:
    """A jar holding the stand-ins, compiled against pyspark's Hive jars."""
    sources = work_dir / "src"
    classes = work_dir / "classes"
    classes.mkdir(parents=True, exist_ok=True)
    files = []
    for name in _CLASSES:
        package, _, simple = name.rpartition(".")
        source = sources / Path(*package.split(".")) / f"{simple}.java"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text(
            f"package {package};\n"
            "/** Test stand-in: only satisfies the server's class check. */\n"
            f"public class {simple} extends "
            "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat {}\n"
        )
        files.append(str(source))
    classpath = str(SPARK_HOME / "jars" / "*")
    subprocess.run(["javac", "-cp", classpath, "-d", str(classes), *files], check=True)
    jar = work_dir / "hudi-input-format-stand-ins.jar"
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "."], check=True)
    return jar
