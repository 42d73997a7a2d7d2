"""A throwaway Hive metastore and Spark Thrift Server on 127.0.0.1, both started from the
installed pyspark's jars, so tests can sync tables to a real metastore over thrift and query
them over HiveServer2 as a BI tool would:

    with hive_metastore(tmp_path / "hms") as metastore:
        with metastore.client() as client:
            client.get_all_databases()
        with spark_thrift_server(tmp_path / "sts", metastore.uri) as sts:
            cursor = sts.connect().cursor()
            cursor.execute("SHOW DATABASES")

The metastore keeps its tables in an embedded Derby database under its work_dir. Each server
runs in its own process group, killed when its block exits, however it exits; logs stay in
files under the work_dir.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from hmsclient import hmsclient
from pyhive import hive
from thrift.Thrift import TException

from tests.spark.cluster import (
    LEAN_JVM_OPTIONS,
    SPARK_HOME,
    SPARK_SUBMIT,
    free_ports,
    signal_group,
)

HOST = "127.0.0.1"
METASTORE_MEMORY = "512m"
THRIFT_SERVER_MEMORY = "768m"  # the driver of local[1]: it also runs the queries
# What spark-submit gives every JVM on JDK 17 (org.apache.spark.launcher.JavaModuleOptions):
# Hive, DataNucleus and Spark reflect into these packages. The metastore's plain `java`
# command gets them here.
JAVA_MODULE_OPTIONS = [
    "-XX:+IgnoreUnrecognizedVMOptions",
    *(
        f"--add-opens=java.base/{package}=ALL-UNNAMED"
        for package in (
            "java.lang",
            "java.lang.invoke",
            "java.lang.reflect",
            "java.io",
            "java.net",
            "java.nio",
            "java.util",
            "java.util.concurrent",
            "java.util.concurrent.atomic",
            "jdk.internal.ref",
            "sun.nio.ch",
            "sun.nio.cs",
            "sun.security.action",
            "sun.util.calendar",
        )
    ),
    "--add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
]
_THRIFT_SERVER = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
_LAUNCHER = "HiveMetaStoreOnLoopback"
# Hive 2.3's HiveMetaStore always binds the wildcard address (it passes no host to
# HiveAuthUtils.getServerSocket; hive.metastore.thrift.bind.host came with Hive 3). This
# launcher serves the same handler, as HiveMetaStore.startMetaStore does with the default
# settings (no SASL, SSL, framed transport or compact protocol; set_ugi on), on the address
# it is given. `java` compiles it from source at start (a JDK's java: a JRE has no javac).
_LAUNCHER_SOURCE = """
import java.lang.reflect.Field;
import org.apache.hadoop.hive.common.LogUtils;
import org.apache.hadoop.hive.common.auth.HiveAuthUtils;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.conf.HiveConf.ConfVars;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.IHMSHandler;
import org.apache.hadoop.hive.metastore.TServerSocketKeepAlive;
import org.apache.hadoop.hive.metastore.TUGIBasedProcessor;
import org.apache.hadoop.hive.thrift.TUGIContainingTransport;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TThreadPoolServer;

public class HiveMetaStoreOnLoopback {
  public static void main(String[] args) throws Throwable {
    LogUtils.initHiveLog4j();
    HiveConf conf = new HiveConf(HiveMetaStore.HMSHandler.class);
    // What HiveMetaStore.main sets: the handler then audits callers' addresses.
    Field remote = HiveMetaStore.class.getDeclaredField("isMetaStoreRemote");
    remote.setAccessible(true);
    remote.setBoolean(null, true);
    IHMSHandler handler = HiveMetaStore.newRetryingHMSHandler(
        new HiveMetaStore.HMSHandler("new db based metaserver", conf, false), conf);
    long maxMessage = conf.getLongVar(ConfVars.METASTORESERVERMAXMESSAGESIZE);
    TThreadPoolServer.Args server = new TThreadPoolServer.Args(new TServerSocketKeepAlive(
            HiveAuthUtils.getServerSocket(args[0], Integer.parseInt(args[1]))))
        .processor(new TUGIBasedProcessor<IHMSHandler>(handler))
        .transportFactory(new TUGIContainingTransport.Factory())
        .protocolFactory(new TBinaryProtocol.Factory())
        .inputProtocolFactory(new TBinaryProtocol.Factory(true, true, maxMessage, maxMessage))
        .minWorkerThreads(conf.getIntVar(ConfVars.METASTORESERVERMINTHREADS))
        .maxWorkerThreads(conf.getIntVar(ConfVars.METASTORESERVERMAXTHREADS));
    new TThreadPoolServer(server).serve();
  }
}
"""


@dataclass
class _Server:
    kind: ClassVar[str]
    host: str
    port: int
    log: Path  # the server's stdout and stderr
    process: subprocess.Popen

    def ping(self) -> None:
        """One real request; raises (OSError, TException) while the server cannot serve."""
        raise NotImplementedError

    def stop(self) -> None:
        """Kills the server's process group (spark-submit's JVM and anything it started)."""
        signal_group(self.process, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        signal_group(self.process, signal.SIGKILL)  # leftovers in the group, if any
        self.process.wait(timeout=10)

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError as exc:
            return f"(unreadable: {exc})"


@dataclass
class MetastoreServer(_Server):
    kind = "metastore"

    @property
    def uri(self) -> str:
        """thrift://127.0.0.1:PORT, for hive.metastore.uris."""
        return f"thrift://{self.host}:{self.port}"

    def client(self) -> hmsclient.HMSClient:
        """A thrift client of this metastore; it connects when its block is entered."""
        return hmsclient.HMSClient(host=self.host, port=self.port)

    def ping(self) -> None:
        with self.client() as client:
            client.get_all_databases()


@dataclass
class ThriftServer(_Server):
    kind = "Spark Thrift Server"

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:hive2://{self.host}:{self.port}"

    def connect(self, username: str = "hudi") -> hive.Connection:
        """A HiveServer2 session. The server's authentication is NONE: pyhive's auth 'NONE'
        is SASL PLAIN with any user name (and 'NOSASL' is refused)."""
        return hive.connect(host=self.host, port=self.port, username=username, auth="NONE")

    def ping(self) -> None:
        self.connect().close()


@contextmanager
def hive_metastore(work_dir: Path, timeout: float = 120.0) -> Iterator[MetastoreServer]:
    """A Hive 2.3 metastore (Derby under work_dir, schema created on first use) serving thrift
    on 127.0.0.1 only, ready when a thrift call answers; stopped on exit."""
    work_dir = Path(work_dir).resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    launcher = work_dir / f"{_LAUNCHER}.java"
    launcher.write_text(_LAUNCHER_SOURCE)
    (port,) = free_ports(1)
    settings = {
        "javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={work_dir / 'metastore_db'};create=true"
        ),
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        # Hive's default pool, BoneCP, is not among pyspark's jars (dropping a database
        # cascading to its tables failed on it); Spark's Hive client makes the same switch.
        "datanucleus.connectionPoolingType": "DBCP",
        "hive.metastore.warehouse.dir": str(work_dir / "warehouse"),
        "hive.async.log.enabled": "false",  # a log that is flushed when the process is killed
        "hive.root.logger": "console",  # Hive's log to stderr: one log file, metastore.log
        "hive.log.dir": str(work_dir),  # where Hive's unused file appender still creates hive.log
        "derby.system.home": str(work_dir),  # derby.log
    }
    command = [
        "java",
        f"-Xmx{METASTORE_MEMORY}",
        *LEAN_JVM_OPTIONS.split(),
        *JAVA_MODULE_OPTIONS,
        *(f"-D{key}={value}" for key, value in settings.items()),
        "-cp",
        str(SPARK_HOME / "jars" / "*"),  # java expands the wildcard itself
        str(launcher),
        HOST,
        str(port),
    ]
    log = work_dir / "metastore.log"
    server = MetastoreServer(HOST, port, log, _spawn(command, work_dir, log))
    try:
        _wait_until_ready(server, timeout)
        yield server
    finally:
        server.stop()


@contextmanager
def spark_thrift_server(
    work_dir: Path, metastore_uri: str, extra_jars: Sequence[Path] = (), timeout: float = 180.0
) -> Iterator[ThriftServer]:
    """The Spark Thrift Server (local[1], no UI) on 127.0.0.1, its catalog the metastore at
    metastore_uri, extra_jars on its classpath; ready when a HiveServer2 session opens;
    stopped on exit."""
    work_dir = Path(work_dir).resolve()
    work_dir.mkdir(parents=True, exist_ok=True)
    (port,) = free_ports(1)
    spark_conf = {
        "spark.ui.enabled": "false",
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.hive.metastore.uris": metastore_uri,
        "spark.sql.warehouse.dir": str(work_dir / "warehouse"),
        "spark.local.dir": str(work_dir / "local"),  # block manager's files, not under /tmp
        # Spark's and Hive's other temporary files: with the rest, even after a SIGKILL.
        "spark.driver.extraJavaOptions": f"{LEAN_JVM_OPTIONS} -Djava.io.tmpdir={work_dir / 'tmp'}",
    }
    for folder in ("local-scratch", "tmp"):  # each session expects to find them
        (work_dir / folder).mkdir(exist_ok=True)
    # HiveServer2's scratch and operation-log folders default to /tmp: kept here instead.
    hive_conf = {
        "hive.server2.thrift.bind.host": HOST,
        "hive.server2.thrift.port": str(port),
        "hive.exec.scratchdir": str(work_dir / "scratch"),
        "hive.exec.local.scratchdir": str(work_dir / "local-scratch"),
        "hive.downloaded.resources.dir": str(work_dir / "resources"),
        "hive.server2.logging.operation.log.location": str(work_dir / "operation-logs"),
    }
    # No application jar: spark-submit knows this class and adds "spark-internal" itself.
    command = [str(SPARK_SUBMIT), "--class", _THRIFT_SERVER, "--master", "local[1]"]
    command += ["--name", "thrift-server", "--driver-memory", THRIFT_SERVER_MEMORY]
    for key, value in spark_conf.items():
        command += ["--conf", f"{key}={value}"]
    if extra_jars:
        # On the driver's own classpath: Spark's Hive client loads table classes from there.
        classpath = ":".join(str(Path(jar).resolve()) for jar in extra_jars)
        command += ["--driver-class-path", classpath]
    for key, value in hive_conf.items():
        command += ["--hiveconf", f"{key}={value}"]
    log = work_dir / "thrift-server.log"
    server = ThriftServer(HOST, port, log, _spawn(command, work_dir, log))
    try:
        _wait_until_ready(server, timeout)
        yield server
    finally:
        server.stop()


def _spawn(command: list[str], work_dir: Path, log: Path) -> subprocess.Popen:
    env = dict(os.environ)
    # Spark's driver, block manager and RPC endpoints bind to this address too.
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP=HOST)
    with open(log, "wb") as out:
        return subprocess.Popen(
            command,
            cwd=work_dir,  # strays (derby.log, metastore_db, spark-warehouse) land here
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, killed as one
        )


def _wait_until_ready(server: _Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(
                f"the {server.kind} exited ({server.process.returncode}) while starting; "
                f"{server.log}:\n{server.log_tail()}"
            )
        try:
            # A bare connect first: thrift logs every refused connection as an error.
            socket.create_connection((server.host, server.port), timeout=5).close()
            server.ping()
            return
        except (OSError, TException):  # not listening yet, or listening but not serving
            pass
        time.sleep(0.5)
    raise TimeoutError(
        f"the {server.kind} did not answer in {timeout}s; {server.log}:\n{server.log_tail()}"
    )
