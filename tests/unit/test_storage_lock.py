"""The storage-based lock on S3 (moto's server on 127.0.0.1): Apache Hudi 1.1's lock file
(.hoodie/.locks/table_lock.json) created only if absent, so of two owners one wins; an expired
hold taken over by exactly one of several racing takers; renewal pushing the expiry, and
failing once the hold was taken over; release; an unreadable lock file, a missing bucket and an
unreachable endpoint failing clearly; the lock following the table's storage; and two writer
processes and a compaction process on one s3a:// merge-on-read table losing no update."""

from __future__ import annotations

import json
import multiprocessing
import os
import threading
import time
import uuid
from pathlib import Path

import pyarrow as pa
import pytest
from obstore.store import AzureStore, GCSStore

from hudi_core import HudiTable, UnsupportedStorageError
from hudi_core.config import lock_options as L
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, LockError, WriteConflictError
from hudi_core.filesystems import object_store_options
from hudi_core.lock import (
    StorageBasedLockProvider,
    lock_provider,
    lock_provider_for_storage,
    lock_timing,
    table_lock,
)
from hudi_core.lock.provider import now_ms
from hudi_core.storage import Storage
from tests import oracle
from tests.s3 import AWS_VARIABLES

LOCK_FILE = ".hoodie/.locks/table_lock.json"
FAST_POLL = {"hoodie.write.lock.wait_time_ms_between_retry": 20}
SCHEMA = pa.schema([("id", pa.int64()), ("ts", pa.int64()), ("v", pa.string())])


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch):
    """Settings come only from what each test gives (no stray AWS_* of the machine)."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def location() -> str:
    return f"s3a://bucket/locks/{uuid.uuid4().hex[:8]}/trips"


def lock_options(s3, **extra) -> dict:
    return {**s3.hadoop_options(), L.PROVIDER.key: "storage", **extra}


def provider(s3, path: str) -> StorageBasedLockProvider:
    """A handle on the lock of the table at `path`, as one process has it."""
    options = lock_options(s3)
    found = lock_provider(Storage(path, options=options), Options(options))
    assert isinstance(found, StorageBasedLockProvider)
    return found


def lock_file(s3, path: str) -> dict:
    key = f"{path.removeprefix('s3a://bucket/')}/{LOCK_FILE}"
    return json.loads(s3.client().get_object(Bucket="bucket", Key=key)["Body"].read())


def race(attempts) -> list[bool]:
    """Runs the attempts on threads released together; their answers in order."""
    start = threading.Barrier(len(attempts))
    answers: list[bool | None] = [None] * len(attempts)

    def run(i: int) -> None:
        start.wait()
        answers[i] = attempts[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(attempts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [bool(a) for a in answers]


# ---- the lock file and its conditional writes


def test_the_lock_file_is_apache_hudis(s3):
    path = location()
    lock = provider(s3, path)
    assert lock.key == f"storage:{path}/{LOCK_FILE}"
    expiry = now_ms() + 60_000
    assert lock.try_acquire("a", expiry)
    assert lock_file(s3, path) == {"expired": False, "validUntil": expiry, "owner": "a"}
    lock.release("a")
    # Released as Apache Hudi releases: the file stays, marked expired.
    assert lock_file(s3, path) == {"expired": True, "validUntil": expiry, "owner": "a"}
    assert lock.holder() is None


def test_of_two_owners_creating_the_lock_one_wins(s3):
    path = location()
    a, b = provider(s3, path), provider(s3, path)
    assert a.try_acquire("a", now_ms() + 60_000)
    assert not b.try_acquire("b", now_ms() + 60_000)
    assert b.holder().owner == "a"
    assert a.try_acquire("a", now_ms() + 60_000)  # asking again as the holder keeps it

    racing = location()
    handles = [provider(s3, racing) for _ in range(6)]
    owners = [f"owner-{i}" for i in range(6)]
    won = race(
        [
            lambda h=h, o=o: h.try_acquire(o, now_ms() + 60_000)
            for h, o in zip(handles, owners, strict=True)
        ]
    )
    assert won.count(True) == 1, won
    assert handles[0].holder().owner == owners[won.index(True)]


def test_an_expired_hold_is_taken_over_by_exactly_one_of_racing_takers(s3):
    path = location()
    dead = provider(s3, path)
    assert dead.try_acquire("dead", now_ms() - 2_000)  # a holder that stopped renewing
    takers = [provider(s3, path) for _ in range(6)]
    won = race(
        [
            lambda t=t, i=i: t.try_acquire(f"taker-{i}", now_ms() + 60_000)
            for i, t in enumerate(takers)
        ]
    )
    assert won.count(True) == 1, won
    assert dead.holder().owner == f"taker-{won.index(True)}"
    assert not dead.renew("dead", now_ms() + 60_000)  # the old holder learns it lost the lock
    assert not dead.try_acquire("dead", now_ms() + 60_000)  # the new hold is live


def test_a_hold_just_past_its_expiry_waits_for_clock_drift(s3):
    """As Apache Hudi's provider: another host's clock may run behind, so a hold counts as
    stale only half a second after its validUntil."""
    path = location()
    a, b = provider(s3, path), provider(s3, path)
    assert a.try_acquire("a", now_ms() - 100)
    assert not b.try_acquire("b", now_ms() + 60_000)
    time.sleep(0.5)
    assert b.try_acquire("b", now_ms() + 60_000)


def test_renewal_pushes_the_expiry_and_fails_after_a_takeover(s3):
    path = location()
    a, b = provider(s3, path), provider(s3, path)
    first = now_ms() + 300
    assert a.try_acquire("a", first)
    later = now_ms() + 60_000
    assert a.renew("a", later)
    assert lock_file(s3, path)["validUntil"] == later
    assert not b.renew("b", now_ms() + 60_000)  # only the holder renews
    time.sleep((first - now_ms() + 1_000) / 1000)  # past the first expiry, and the drift
    assert not b.try_acquire("b", now_ms() + 60_000)
    assert b.holder().owner == "a"

    assert a.renew("a", now_ms() - 2_000)  # as if it paused: stale...
    assert b.try_acquire("b", now_ms() + 60_000)  # ...taken over
    assert not a.renew("a", now_ms() + 60_000)
    assert lock_file(s3, path)["owner"] == "b"


def test_release_is_by_the_owner_only_and_frees_the_lock(s3):
    path = location()
    a, b = provider(s3, path), provider(s3, path)
    assert a.try_acquire("a", now_ms() + 60_000)
    b.release("b")
    assert b.holder().owner == "a"
    a.release("a")
    assert b.holder() is None
    assert not a.renew("a", now_ms() + 60_000)  # nothing left to renew
    assert b.try_acquire("b", now_ms() + 60_000)  # a released hold is taken at once
    assert lock_file(s3, path) == {
        "expired": False,
        "validUntil": b.holder().expires_at_ms,
        "owner": "b",
    }


def test_a_table_lock_takes_renews_and_releases_it(s3):
    path = location()
    options = lock_options(s3, **FAST_POLL)
    lock = table_lock(Storage(path, options=options), Options(options))
    assert lock.timing.expire_ms == 300_000 and lock.timing.heartbeat_interval_ms == 30_000
    with lock:
        hold = lock.provider.holder()
        assert f":{os.getpid()}:" in hold.owner
        assert 290_000 < hold.expires_at_ms - now_ms() <= 300_000
        with table_lock(Storage(path, options=options), Options(options)) as inner:
            assert inner.provider.holder() == hold  # re-entrant
    assert lock.provider.holder() is None
    assert lock_file(s3, path)["expired"] is True


def test_a_hold_apache_hudi_wrote_is_respected_and_its_release_honoured(s3):
    path = location()
    key = f"{path.removeprefix('s3a://bucket/')}/{LOCK_FILE}"
    theirs = {"expired": False, "validUntil": now_ms() + 60_000, "owner": str(uuid.uuid4())}
    s3.client().put_object(Bucket="bucket", Key=key, Body=json.dumps(theirs).encode())
    lock = provider(s3, path)
    assert not lock.try_acquire("ours", now_ms() + 60_000)
    assert lock.holder().owner == theirs["owner"]
    s3.client().put_object(
        Bucket="bucket", Key=key, Body=json.dumps({**theirs, "expired": True}).encode()
    )
    assert lock.holder() is None
    assert lock.try_acquire("ours", now_ms() + 60_000)


def test_a_renewal_the_store_does_not_answer_keeps_the_hold_until_it_lapses(s3):
    """As if the network failed while holding: the hold stands until its validUntil (nobody
    takes it over before), and counts as lost after."""
    path = location()
    lock = provider(s3, path)
    lapses = now_ms() + 2_000  # the client's own retries take most of a second
    assert lock.try_acquire("a", lapses)
    offline = {**lock_options(s3), "fs.s3a.endpoint": "http://127.0.0.1:9"}  # nothing there
    lock.store = StorageBasedLockProvider.for_table(path, offline, request_timeout_s=2).store
    assert lock.renew("a", now_ms() + 60_000)
    time.sleep(max(0, lapses - now_ms()) / 1000)
    assert not lock.renew("a", now_ms() + 60_000)


# ---- failures


def test_an_unreadable_lock_file_fails_naming_it(s3):
    path = location()
    key = f"{path.removeprefix('s3a://bucket/')}/{LOCK_FILE}"
    s3.client().put_object(Bucket="bucket", Key=key, Body=b"not json")
    lock = provider(s3, path)
    with pytest.raises(LockError, match=r"table_lock\.json is not a lock .*delete it"):
        lock.try_acquire("a", now_ms() + 60_000)
    assert lock.holder().owner.startswith("unknown (unreadable lock file")
    assert not lock.renew("a", now_ms() + 60_000)
    lock.release("a")  # leaves a file it does not understand alone
    assert s3.client().get_object(Bucket="bucket", Key=key)["Body"].read() == b"not json"


def test_a_missing_bucket_fails_naming_the_lock_and_the_settings(s3):
    path = f"s3a://no-such-bucket-{uuid.uuid4().hex[:6]}/t"
    options = lock_options(s3)
    started = time.monotonic()
    with pytest.raises(LockError) as caught:
        with table_lock(Storage(path, options=options), Options(options)):
            pytest.fail("took a lock in a bucket that does not exist")
    message = str(caught.value)
    assert f"{path}/{LOCK_FILE} cannot be reached" in message, message
    assert "NoSuchBucket" in message or "not found" in message, message
    assert "fs.s3a.endpoint" in message, message
    assert time.monotonic() - started < 10


def test_an_unreachable_endpoint_fails_naming_the_settings(s3):
    options = lock_options(s3, **{"fs.s3a.endpoint": "http://127.0.0.1:9"})  # nothing there
    path = location()
    started = time.monotonic()
    with pytest.raises(LockError, match=r"cannot be reached.*fs\.s3a\.endpoint"):
        with table_lock(Storage(path, options=options), Options(options)):
            pytest.fail("took a lock on a store that does not answer")
    assert time.monotonic() - started < 20


def test_a_local_table_is_refused_by_the_storage_lock(tmp_path):
    with pytest.raises(UnsupportedStorageError, match="file_system"):
        lock_provider(Storage(str(tmp_path)), Options({L.PROVIDER.key: "storage"}))


def test_the_file_system_lock_points_to_the_storage_lock_on_object_stores(s3):
    options = {**s3.hadoop_options(), L.PROVIDER.key: "file_system"}
    with pytest.raises(UnsupportedStorageError, match="no exclusive create.*=storage.*database"):
        lock_provider(Storage(location(), options=options), Options(options))


# ---- options


def test_the_lock_follows_the_storage():
    for path in ("/data/t", "file:/data/t", "file:///data/t", "hdfs://nn:8020/t", "viewfs://c/t"):
        assert lock_provider_for_storage(path, {}) == L.FILE_SYSTEM, path
    for path in ("s3a://b/t", "s3://b/t", "gs://b/t", "abfss://c@a.dfs.core.windows.net/t"):
        assert lock_provider_for_storage(path, {}) == L.STORAGE_BASED, path
    # A lock folder on a shared file system, for a table on S3: the file-system lock is safe.
    shared = {L.FILESYSTEM_PATH.key: "/mnt/shared/locks"}
    assert lock_provider_for_storage("s3a://b/t", shared) == L.FILE_SYSTEM


def test_provider_names_and_lease_options(s3):
    path = location()
    for name in ("storage", "StorageBasedLockProvider", L.STORAGE_BASED):
        options = {**s3.hadoop_options(), L.PROVIDER.key: name}
        assert type(lock_provider(Storage(path, options=options), Options(options))) is (
            StorageBasedLockProvider
        ), name
    storage = {L.PROVIDER.key: "storage"}
    timing = lock_timing(Options({**storage, L.STORAGE_VALIDITY_TIMEOUT_SECS.key: 600}))
    assert (timing.heartbeat_interval_ms, timing.expire_ms) == (30_000, 600_000)
    former = {**storage, "hoodie.write.lock.storage.heartbeat.poll.secs": 5}
    assert lock_timing(Options(former)).heartbeat_interval_ms == 5_000
    for bad in ({L.STORAGE_VALIDITY_TIMEOUT_SECS.key: 5}, {L.STORAGE_RENEW_INTERVAL_SECS.key: 31}):
        with pytest.raises(InvalidOptionError, match=L.STORAGE_VALIDITY_TIMEOUT_SECS.key):
            lock_timing(Options({**storage, **bad}))


def test_gcs_and_azure_stores_come_from_the_tables_settings():
    """No server: the clients are built from the same settings the file systems read."""
    gcs = StorageBasedLockProvider.for_table(
        "gs://lake/db/t",
        {"fs.gs.storage.root.url": "http://127.0.0.1:4443", "fs.gs.auth.type": "UNAUTHENTICATED"},
    )
    assert isinstance(gcs.store, GCSStore)
    assert gcs.path == f"db/t/{LOCK_FILE}"
    assert gcs.store.config["base_url"] == "http://127.0.0.1:4443"
    host = "account1.dfs.core.windows.net"
    azure = StorageBasedLockProvider.for_table(
        f"abfss://container@{host}/db/t", {f"fs.azure.account.key.{host}": "a2V5"}
    )
    assert isinstance(azure.store, AzureStore)
    assert azure.path == f"db/t/{LOCK_FILE}"
    assert azure.store.config["account_name"] == "account1"
    assert azure.store.config["account_key"] == "a2V5"


# ---- writers and a table service in separate processes


def _rows(keys: list[int], writer: int, round_: int) -> pa.Table:
    values = [f"{k}@{writer}.{round_}" for k in keys]
    return pa.table({"id": keys, "ts": [round_] * len(keys), "v": values}, schema=SCHEMA)


def _write_rounds(path: str, options: dict, writer: int, rounds: int) -> None:
    """Runs in a spawned process: `rounds` upserts of this writer's own keys, each written
    again until it commits."""
    table = HudiTable.open(path, options)
    keys = [writer * 100 + k for k in range(4)]
    for round_ in range(1, rounds + 1):
        for _attempt in range(30):
            try:
                table.write(_rows(keys, writer, round_))
                break
            except WriteConflictError:
                continue  # an instant since its start touched its file groups: write again
        else:
            raise AssertionError(f"writer {writer} never committed round {round_}")


def _run_services(path: str, options: dict, done: str) -> int:
    """Runs in a spawned process: compacts (and cleans) while the writers work, and once more
    after they are done. Returns how many compactions it ran."""
    table = HudiTable.open(path, options)
    compactions, last_round = 0, False
    while not last_round:
        last_round = Path(done).exists()
        instant = table.compaction.schedule()
        if instant is not None:
            table.compaction.run(instant)
            compactions += 1
        table.clean()
        time.sleep(0.05)
    return compactions


@pytest.mark.slow
def test_two_writers_and_a_compactor_on_s3_lose_no_update(s3, tmp_path):
    path = location()
    options = lock_options(
        s3,
        **FAST_POLL,
        **{
            L.CONCURRENCY_MODE.key: "OPTIMISTIC_CONCURRENCY_CONTROL",
            "hoodie.compact.inline.max.delta.commits": "2",
            "hoodie.cleaner.commits.retained": "1",
            "hoodie.parquet.small.file.limit": "0",
        },
    )
    HudiTable.create(
        path,
        name="trips",
        table_type="MERGE_ON_READ",
        record_key_fields=["id"],
        precombine_field="ts",
        options=options,
    ).write(_rows([999], 0, 0))
    done, rounds = tmp_path / "writers-done", 4
    spawn = multiprocessing.get_context("spawn")
    with spawn.Pool(3) as pool:
        services = pool.apply_async(_run_services, (path, options, str(done)))
        writers = [pool.apply_async(_write_rounds, (path, options, w, rounds)) for w in (1, 2)]
        for writer in writers:
            writer.get(timeout=120)
        done.touch()
        compactions = services.get(timeout=60)
    want = {999: "999@0.0"} | {
        w * 100 + k: f"{w * 100 + k}@{w}.{rounds}" for w in (1, 2) for k in range(4)
    }
    table = HudiTable.open(path, options)
    ours = table.read()
    assert dict(zip(ours["id"].to_pylist(), ours["v"].to_pylist(), strict=True)) == want
    theirs = oracle.snapshot(path, storage_options=object_store_options(path, options))
    oracle.assert_same_table(ours, theirs, "hudi-rs after concurrent writers on s3a")
    assert lock_file(s3, path)["expired"] is True  # the lock was used, and let go at the end
    assert compactions >= 1, "the compactor never ran"
