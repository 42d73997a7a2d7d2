"""The table lock: each provider (in-process, file system, database on SQLite and PostgreSQL)
excludes other owners, lets only its owner release, renews, and hands a dead holder's lock
over once it expires; TableLock waits, re-enters and fails as its options say, across threads
and across processes."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from hudi_core.config import lock_options as L
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, LockError
from hudi_core.lock import (
    DatabaseLockProvider,
    FileSystemLockProvider,
    InProcessLockProvider,
    lock_provider,
    lock_timing,
    table_lock,
)
from hudi_core.lock.provider import LockProvider, now_ms
from hudi_core.storage import Storage
from tests import datagen, oracle
from tests.locks import lock_options, postgres_unreachable, postgres_url
from tests.tables import create_trips_table

PROVIDERS = ["file_system", "sqlite", "postgresql"]  # locks that reach beyond one process
ALL_PROVIDERS = ["in_process", *PROVIDERS]
# Gives up after three attempts of 100 ms, polling every 20 ms.
SHORT_WAIT = {
    "hoodie.write.lock.wait_time_ms": 100,
    "hoodie.write.lock.wait_time_ms_between_retry": 20,
    "hoodie.write.lock.num_retries": 2,
}
FAST_POLL = {"hoodie.write.lock.wait_time_ms_between_retry": 10}
FOREIGN_OWNER = "other-host:4242:feedbeef"  # as TableLock names owners: host:pid:nonce


# ---- fixtures


@pytest.fixture
def table_path(tmp_path) -> str:
    """The (unique) table the lock guards; the database locks key their row by it."""
    return str(tmp_path / "table")


def _lock(table_path: str, options: dict):
    return table_lock(Storage(table_path), Options(options))


@pytest.fixture(params=PROVIDERS)
def two_providers(request, tmp_path, table_path) -> tuple[LockProvider, LockProvider]:
    """Two handles on one table's lock, as two processes would have."""
    options = Options(lock_options(request.param, tmp_path))
    first, second = (lock_provider(Storage(table_path), options) for _ in range(2))
    assert type(first) is (
        FileSystemLockProvider if request.param == "file_system" else DatabaseLockProvider
    )
    yield first, second
    for owner in ("a", "b"):
        first.release(owner)


@pytest.fixture(scope="module")
def spawn_pool():
    """Three worker processes started the 'spawn' way (nothing inherited from this one)."""
    pool = multiprocessing.get_context("spawn").Pool(3)
    yield pool
    pool.terminate()
    pool.join()


# ---- providers: exclusion, release, takeover, renewal


def test_one_owner_at_a_time(two_providers):
    a, b = two_providers
    assert a.holder() is None
    assert a.try_acquire("a", now_ms() + 60_000)
    assert not b.try_acquire("b", now_ms() + 60_000)
    assert b.holder().owner == "a"
    assert a.try_acquire("a", now_ms() + 60_000)  # asking again as the holder keeps it
    assert b.holder().owner == "a"


def test_only_the_owner_releases(two_providers):
    a, b = two_providers
    assert a.try_acquire("a", now_ms() + 60_000)
    b.release("b")
    assert b.holder().owner == "a"
    assert not b.try_acquire("b", now_ms() + 60_000)
    a.release("a")
    assert b.holder() is None
    assert b.try_acquire("b", now_ms() + 60_000)
    assert a.holder().owner == "b"


def test_an_expired_hold_is_taken_over_a_live_one_is_not(two_providers):
    a, b = two_providers
    assert a.try_acquire("a", now_ms() - 1)  # a holder that stopped renewing: expired
    assert b.holder().expired
    assert b.try_acquire("b", now_ms() + 60_000)
    assert a.holder().owner == "b"
    assert not a.renew("a", now_ms() + 60_000)  # the old holder learns it lost the lock
    assert not a.try_acquire("a", now_ms() + 60_000)  # b's hold is live
    assert a.holder().owner == "b"


def test_renewal_keeps_a_hold_past_its_first_expiry(two_providers):
    a, b = two_providers
    first_expiry = now_ms() + 150
    assert a.try_acquire("a", first_expiry)
    assert a.renew("a", now_ms() + 60_000)
    assert not b.renew("b", now_ms() + 60_000)  # only the holder renews
    time.sleep((first_expiry - now_ms()) / 1000 + 0.05)
    assert not b.try_acquire("b", now_ms() + 60_000)
    hold = b.holder()
    assert hold.owner == "a" and not hold.expired
    a.release("a")
    assert not a.renew("a", now_ms() + 60_000)  # nothing left to renew


# ---- TableLock


@pytest.mark.parametrize("kind", ALL_PROVIDERS)
def test_table_lock_is_reentrant_in_a_thread(kind, tmp_path, table_path):
    options = {**lock_options(kind, tmp_path), **SHORT_WAIT}
    outer = _lock(table_path, options)
    with outer:
        assert outer.held
        hold = outer.provider.holder()
        # A second TableLock of the same table, as a commit that rolls back takes it again:
        # no waiting (SHORT_WAIT would fail), no new hold.
        with _lock(table_path, options) as inner:
            assert inner.held
            assert inner.provider.holder() == hold
        assert outer.held
        assert outer.provider.holder() == hold
    assert not outer.held
    assert outer.provider.holder() is None
    if kind != "in_process":
        assert hold is not None and f":{os.getpid()}:" in hold.owner


@pytest.mark.parametrize("kind", PROVIDERS)
def test_lock_error_names_the_holder_after_the_configured_attempts(kind, tmp_path, table_path):
    options = {**lock_options(kind, tmp_path), **SHORT_WAIT}
    other = lock_provider(Storage(table_path), Options(options))  # another process's hold
    assert other.try_acquire(FOREIGN_OWNER, now_ms() + 60_000)
    try:
        started = time.monotonic()
        with pytest.raises(LockError) as caught, _lock(table_path, options):
            pytest.fail("took a lock another owner holds")
        waited = time.monotonic() - started
    finally:
        other.release(FOREIGN_OWNER)
    message = str(caught.value)
    assert FOREIGN_OWNER in message and "3 attempts of 100 ms" in message, message
    assert 0.3 <= waited < 3, waited  # three attempts of 100 ms, then gave up


def test_in_process_lock_error_names_the_holding_thread(tmp_path, table_path):
    options = {**lock_options("in_process", tmp_path), **SHORT_WAIT}
    taken, done = threading.Event(), threading.Event()

    def hold() -> None:
        with _lock(table_path, options):
            taken.set()
            done.wait(10)

    holder = threading.Thread(target=hold, name="compaction-planner")
    holder.start()
    try:
        assert taken.wait(10)
        with pytest.raises(LockError, match="held by thread 'compaction-planner'"):
            with _lock(table_path, options):
                pytest.fail("took a lock another thread holds")
    finally:
        done.set()
        holder.join()
    with _lock(table_path, options) as lock:  # free again once the thread let go
        assert lock.held


@pytest.mark.parametrize("kind", ALL_PROVIDERS)
def test_threads_of_one_process_exclude_each_other(kind, tmp_path, table_path):
    options = {**lock_options(kind, tmp_path), **FAST_POLL}
    counter, inside, most_inside = [0], [0], [0]
    guard = threading.Lock()  # guards only the bookkeeping of who is inside

    def increment(times: int) -> None:
        for _ in range(times):
            with _lock(table_path, options):  # a lock object per use, as writers build them
                with guard:
                    inside[0] += 1
                    most_inside[0] = max(most_inside[0], inside[0])
                value = counter[0]
                time.sleep(0.001)  # a lost update would show if two threads were in here
                counter[0] = value + 1
                with guard:
                    inside[0] -= 1

    threads = [threading.Thread(target=increment, args=(10,)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter[0] == 40
    assert most_inside[0] == 1


@pytest.mark.parametrize("kind", PROVIDERS)
def test_table_lock_renews_its_hold_while_held(kind, tmp_path, table_path):
    # Heartbeat 150 ms: a hold expires 450 ms after its last renewal (room for a renewal
    # thread that a loaded machine, running tests in parallel, starves for a moment).
    options = {**lock_options(kind, tmp_path), "hoodie.write.lock.heartbeat_interval_ms": 150}
    intruder = lock_provider(Storage(table_path), Options(options))
    with _lock(table_path, options) as lock:
        first = lock.provider.holder()
        time.sleep(1.0)  # well past the first expiry
        assert not intruder.try_acquire(FOREIGN_OWNER, now_ms() + 60_000)
        later = lock.provider.holder()
        assert later.owner == first.owner and not later.expired
        assert later.expires_at_ms >= first.expires_at_ms + 500
    assert intruder.holder() is None


@pytest.mark.parametrize("kind", ["file_system", "sqlite"])
def test_release_is_final_though_renewals_run_constantly(kind, tmp_path, table_path, caplog):
    # A renewal every millisecond races the release: it used to write the hold back after
    # the release (a lock file nobody held until it expired), or to report the lock lost.
    options = {**lock_options(kind, tmp_path), "hoodie.write.lock.heartbeat_interval_ms": 1}
    for _ in range(100 if kind == "file_system" else 30):
        lock = _lock(table_path, options)
        with lock:
            time.sleep(0.003)
        assert lock.provider.holder() is None
    assert not [r for r in caplog.records if "lost the lock" in r.getMessage()]


# ---- options


def test_provider_names_and_timing_options(tmp_path, table_path):
    storage = Storage(table_path)
    for name, kind in [
        ("in_process", InProcessLockProvider),
        (L.IN_PROCESS, InProcessLockProvider),
        ("InProcessLockProvider", InProcessLockProvider),
        ("file_system", FileSystemLockProvider),
        (L.FILE_SYSTEM, FileSystemLockProvider),
        (" FileSystemBasedLockProvider ", FileSystemLockProvider),
    ]:
        assert type(lock_provider(storage, Options({L.PROVIDER.key: name}))) is kind, name
    default = lock_provider(storage, Options({L.PROVIDER.key: "file_system"}))
    assert default.key == f"file-system:{storage.full_path('.hoodie/lock')}"
    elsewhere = {L.PROVIDER.key: "file_system", L.FILESYSTEM_PATH.key: str(tmp_path / "locks")}
    assert lock_provider(storage, Options(elsewhere)).key.endswith(str(tmp_path / "locks/lock"))

    heartbeat = {L.HEARTBEAT_INTERVAL_MS.key: 200}
    assert lock_timing(Options(heartbeat)).expire_ms == 600  # three heartbeats
    expire = {**heartbeat, L.FILESYSTEM_EXPIRE.key: 2}
    assert lock_timing(Options(expire)).expire_ms == 120_000  # minutes
    assert lock_timing(Options(SHORT_WAIT)).max_wait_s == pytest.approx(0.3)


def test_database_url_comes_from_the_option_then_the_environment(tmp_path, table_path, monkeypatch):
    storage = Storage(table_path)
    database = {L.PROVIDER.key: "database"}
    option_url, hudi_url, airflow_url = (f"sqlite:///{tmp_path / n}.db" for n in "abc")
    monkeypatch.setenv("HUDI_LOCK_DB_URL", hudi_url)
    monkeypatch.setenv("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", airflow_url)
    with_option = {**database, L.DATABASE_URL.key: option_url}
    assert lock_provider(storage, Options(with_option)).url == option_url
    assert lock_provider(storage, Options(database)).url == hudi_url
    monkeypatch.delenv("HUDI_LOCK_DB_URL")
    with pytest.raises(InvalidOptionError):  # no fallback: a database must be named
        lock_provider(storage, Options(database))


def test_bad_lock_options_name_the_option(table_path, monkeypatch):
    storage = Storage(table_path)
    for bad in ("no.such.module.Provider", "NoSuchProvider", "hudi_core.table.HudiTable"):
        with pytest.raises(InvalidOptionError, match=L.PROVIDER.key):
            lock_provider(storage, Options({L.PROVIDER.key: bad}))
    monkeypatch.delenv("HUDI_LOCK_DB_URL", raising=False)
    monkeypatch.delenv("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", raising=False)
    with pytest.raises(InvalidOptionError, match=L.DATABASE_URL.key):
        lock_provider(storage, Options({L.PROVIDER.key: "database"}))
    with pytest.raises(InvalidOptionError, match=L.CONCURRENCY_MODE.key):
        Options({L.CONCURRENCY_MODE.key: "MULTI_WRITER"}).get_option(L.CONCURRENCY_MODE)


def test_a_database_lock_that_cannot_be_reached_names_its_setting(tmp_path, table_path):
    storage = Storage(table_path)
    database = {L.PROVIDER.key: "database"}
    unparsable = {**database, L.DATABASE_URL.key: "not a database url"}
    with pytest.raises(InvalidOptionError, match=f"{L.DATABASE_URL.key}.*HUDI_LOCK_DB_URL"):
        lock_provider(storage, Options(unparsable))
    unknown_dialect = {**database, L.DATABASE_URL.key: "nosuchdb://host/db"}
    with pytest.raises(InvalidOptionError, match=L.DATABASE_URL.key):
        lock_provider(storage, Options(unknown_dialect))
    nowhere = f"sqlite:///{tmp_path / 'no-such-folder' / 'locks.db'}"
    with pytest.raises(LockError, match=f"cannot be reached.*{L.DATABASE_URL.key}") as caught:
        lock_provider(storage, Options({**database, L.DATABASE_URL.key: nowhere}))
    assert "no-such-folder" in str(caught.value)  # the database, named
    refusing = "postgresql+psycopg2://hudi:s3cret@127.0.0.1:9/locks"  # nothing listens there
    with pytest.raises(LockError, match=f"127.0.0.1:9.*{L.DATABASE_URL.key}") as caught:
        lock_provider(storage, Options({**database, L.DATABASE_URL.key: refusing}))
    assert "s3cret" not in str(caught.value)


# ---- across processes


def _wait_for_everyone(folder: str, parties: int) -> None:
    """A barrier through files: returns once `parties` processes have arrived."""
    Path(folder, str(os.getpid())).touch()
    deadline = time.monotonic() + 60
    while len(os.listdir(folder)) < parties:
        if time.monotonic() > deadline:
            raise TimeoutError(f"only {len(os.listdir(folder))} of {parties} processes came")
        time.sleep(0.01)


def _count_under_lock(
    table_path: str, options: dict, counter: str, times: int, barrier: str, parties: int
) -> tuple[int, list[tuple[float, float]]]:
    """Runs in a spawned process: `times` read-sleep-write increments of the counter file,
    each under the lock. Returns its pid and when it was inside the lock."""
    _wait_for_everyone(barrier, parties)  # all processes count at once
    storage, inside = Storage(table_path), []
    for _ in range(times):
        with table_lock(storage, Options(options)):
            entered = time.time()
            value = int(Path(counter).read_text())
            time.sleep(0.005)
            Path(counter).write_text(str(value + 1))
            inside.append((entered, time.time()))
    return os.getpid(), inside


@pytest.mark.parametrize("kind", PROVIDERS)
def test_processes_exclude_each_other(kind, tmp_path, table_path, spawn_pool):
    options = {**lock_options(kind, tmp_path), **FAST_POLL}
    counter, barrier = tmp_path / "counter", tmp_path / "barrier"
    counter.write_text("0")
    barrier.mkdir()
    times, processes = 8, 3
    args = (table_path, options, str(counter), times, str(barrier), processes)
    results = spawn_pool.starmap(_count_under_lock, [args] * processes, chunksize=1)
    assert len({pid for pid, _ in results}) == processes
    assert int(counter.read_text()) == times * processes  # no lost update
    spans = sorted(span for _, inside in results for span in inside)
    for (_, left), (right, _) in zip(spans, spans[1:], strict=False):
        assert left <= right, "two processes were inside the lock at once"
    assert lock_provider(Storage(table_path), Options(options)).holder() is None


def _hold_and_die(locks: list[tuple[str, dict]]) -> None:
    """Runs in a spawned process: takes every lock, then dies without releasing any."""
    with ExitStack() as held:
        for table_path, options in locks:
            held.enter_context(table_lock(Storage(table_path), Options(options)))
        os._exit(3)


@pytest.fixture(scope="module")
def dead_holders(tmp_path_factory) -> dict[str, tuple[str, dict, int]]:
    """Per provider, a table whose lock a killed process held: (table path, options, pid).
    One process holds them all, so only one is spawned."""
    folder = tmp_path_factory.mktemp("dead-holder")
    # Heartbeat 200 ms: a hold expires 600 ms after its last renewal.
    timing = {"hoodie.write.lock.heartbeat_interval_ms": 200, **FAST_POLL}
    kinds = [k for k in PROVIDERS if k != "postgresql" or postgres_unreachable() is None]
    locks = {k: (str(folder / k), {**lock_options(k, folder), **timing}) for k in kinds}
    child = multiprocessing.get_context("spawn").Process(
        target=_hold_and_die, args=(list(locks.values()),)
    )
    child.start()
    child.join(60)
    assert child.exitcode == 3, child.exitcode
    return {kind: (path, options, child.pid) for kind, (path, options) in locks.items()}


@pytest.mark.parametrize("kind", PROVIDERS)
def test_a_killed_holder_is_taken_over_after_its_expiry(kind, dead_holders):
    if kind == "postgresql":
        postgres_url()
    table_path, options, dead_pid = dead_holders[kind]
    left = lock_provider(Storage(table_path), Options(options)).holder()
    assert left is not None and f":{dead_pid}:" in left.owner  # never released
    patient = {**options, "hoodie.write.lock.wait_time_ms": 5000}
    with _lock(table_path, patient) as lock:
        taken_at = now_ms()
        hold = lock.provider.holder()
        assert hold.owner != left.owner and f":{os.getpid()}:" in hold.owner
    assert taken_at > left.expires_at_ms  # not before the dead hold expired
    assert lock.provider.holder() is None


# ---- readers and the lock file


def test_hudi_rs_reads_a_table_while_its_lock_file_exists(tmp_path):
    options = {L.PROVIDER.key: "file_system"}
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", options)
    first = table.write(datagen.trips(list(range(12)), seed=1, ts=1))
    second = table.write(datagen.trips(list(range(0, 12, 3)), seed=2, ts=2))
    lock_file = Path(path) / ".hoodie" / "lock"
    assert not lock_file.exists()  # writes let go of it
    with _lock(path, options):
        assert lock_file.is_file()
        assert oracle.completed_commit_times(path) == [first, second]
        oracle.assert_same_table(table.read(), oracle.snapshot(path), "while locked")
        assert table.read().num_rows == 12


def test_a_holder_whose_hold_was_taken_over_refuses_to_publish(tmp_path):
    """A holder paused past its expiry (its renewal finds another owner) must not go on to
    change the timeline as if it still held the lock."""
    storage = Storage(str(tmp_path))
    storage.makedirs(".hoodie")
    options = Options(
        {
            "hoodie.write.lock.provider": "file_system",
            "hoodie.write.lock.heartbeat_interval_ms": "100",
        }
    )
    lock = table_lock(storage, options)
    with lock:
        lock.require_held()  # still ours
        # Another process takes over (as after an expiry): the next renewal finds out.
        storage.write_bytes(".hoodie/lock", b'{"owner": "other", "expiresAtMs": 99999999999999}')
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                lock.require_held()
            except LockError as error:
                assert "taken over" in str(error)
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the lost hold was never noticed")
        storage.delete(".hoodie/lock")


def test_a_named_lock_lives_beside_the_table_lock(tmp_path):
    """Another lock of a table (WRITER_TURN) is a file, row or key of its own in the table
    lock's medium; a custom provider's table gets one that follows the storage."""
    from hudi_core.lock import WRITER_TURN

    storage = Storage(str(tmp_path / "t"))
    file_lock = Options({"hoodie.write.lock.provider": "file_system"})
    with table_lock(storage, file_lock, WRITER_TURN), table_lock(storage, file_lock):
        held = sorted(p.name for p in (tmp_path / "t" / ".hoodie").iterdir())
        assert held == ["lock", "writer_turn.lock"]
    database = Options(
        {
            "hoodie.write.lock.provider": "database",
            "hoodie.write.lock.database.url": f"sqlite:///{tmp_path / 'locks.db'}",
        }
    )
    turn_key = lock_provider(storage, database, WRITER_TURN).key
    assert turn_key == lock_provider(storage, database).key + "#writer_turn"
    custom = Options({"hoodie.write.lock.provider": "my_company.locks.ZooKeeperLockProvider"})
    assert isinstance(lock_provider(storage, custom, WRITER_TURN), FileSystemLockProvider)
