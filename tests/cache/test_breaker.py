"""The circuit breaker of the Redis backend (#15 point 4): a hung Redis costs one timeout, then
calls fail fast for a short, growing interval, and one probe at a time finds it back."""

from __future__ import annotations

import time

import pytest

from sitecache.cache import CacheEngine, MemoryStorage
from sitecache.cache.storage import StorageError, StorageUnavailable
from sitecache.cache.storage.breaker import FIRST_PAUSE, MAX_PAUSE, CircuitBreaker
from tests.cache.conftest import FakeClock, PrivateRedis


def failing(breaker: CircuitBreaker) -> None:
    probe = breaker.before()
    breaker.failed(TimeoutError("Timeout reading from socket"), probe)


def test_a_failure_opens_the_breaker_and_calls_fail_fast() -> None:
    clock = FakeClock(100.0)
    breaker = CircuitBreaker(clock)
    assert breaker.before() is False  # closed: no probe needed
    failing(breaker)
    assert breaker.is_open
    with pytest.raises(StorageUnavailable, match=r"not answering.*Timeout reading"):
        breaker.before()


def test_one_probe_at_a_time_after_the_pause_and_success_closes() -> None:
    clock = FakeClock(100.0)
    breaker = CircuitBreaker(clock)
    failing(breaker)
    clock.advance(FIRST_PAUSE)
    assert breaker.before() is True  # this call probes
    with pytest.raises(StorageUnavailable):
        breaker.before()  # the others still fail fast while it probes
    breaker.succeeded(True)
    assert not breaker.is_open
    assert breaker.before() is False


def test_a_failed_probe_doubles_the_pause_up_to_its_bound() -> None:
    clock = FakeClock(100.0)
    breaker = CircuitBreaker(clock)
    failing(breaker)
    pauses = []
    for _ in range(8):
        pause = breaker._pause
        pauses.append(pause)
        clock.advance(pause)
        failing(breaker)
    assert pauses[:4] == [FIRST_PAUSE, FIRST_PAUSE * 2, FIRST_PAUSE * 4, FIRST_PAUSE * 8]
    assert pauses[-1] == MAX_PAUSE


def test_calls_in_flight_when_it_opened_do_not_lengthen_the_pause() -> None:
    clock = FakeClock(100.0)
    breaker = CircuitBreaker(clock)
    for _ in range(8):  # eight threads were waiting on the same hung socket
        breaker.failed(TimeoutError("timeout"), probe=False)
    assert breaker._pause == FIRST_PAUSE


def test_a_hung_redis_costs_one_timeout_then_fails_fast_and_recovers(
    private_redis: PrivateRedis,
) -> None:
    from sitecache.cache.storage.redis import RedisStorage

    storage = RedisStorage(private_redis.url, "breaker", timeout=0.3)
    storage.set_value("x", b"1")
    private_redis.stop()
    with pytest.raises(StorageUnavailable, match="Timeout"):
        storage.get_value("x")  # waits out the socket timeout once
    for _ in range(50):  # then every call fails at once, without touching the socket
        with pytest.raises(StorageUnavailable, match="not answering"):
            storage.generation()
    private_redis.resume()
    deadline = time.monotonic() + 10
    while True:
        try:
            assert storage.get_value("x") == b"1"
            break
        except StorageUnavailable:
            assert time.monotonic() < deadline, "the breaker never closed"
            time.sleep(0.05)
    assert storage.breaker is not None
    assert not storage.breaker.is_open
    storage.clear_namespace()
    storage.close()


def test_storage_failures_are_logged_once_a_minute_per_kind(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = CacheEngine(MemoryStorage())
    for _ in range(3):
        engine.storage_warning("cache settings unreadable: %s", StorageError("a"))
        engine.storage_warning("cache purge owed to a content change not applied yet: %s", "b")
    messages = [record.getMessage() for record in caplog.records]
    assert messages == [
        "cache settings unreadable: a",
        "cache purge owed to a content change not applied yet: b",
    ]


# ---------------------------------------------------------------------- translate_errors
class Flaky(MemoryStorage):
    """A store whose errors are translated as the network backends' are."""

    storage_errors = (LookupError,)
    unavailable_errors = (TimeoutError, ConnectionError)
    error_label = "flaky"

    def __init__(self, breaker: CircuitBreaker) -> None:
        super().__init__()
        self.breaker = breaker


def test_an_error_of_a_store_that_answered_is_a_storage_error_and_keeps_it_closed() -> None:
    breaker = CircuitBreaker(FakeClock(100.0))
    storage = Flaky(breaker)
    with (
        pytest.raises(StorageError, match=r"^flaky read: 'missing'$") as caught,
        storage.translate_errors("read"),
    ):
        raise KeyError("missing")
    assert type(caught.value) is StorageError
    assert isinstance(caught.value.__cause__, KeyError)
    assert not breaker.is_open


def test_a_store_that_did_not_answer_opens_the_breaker_and_later_calls_never_run() -> None:
    clock = FakeClock(100.0)
    breaker = CircuitBreaker(clock)
    storage = Flaky(breaker)
    with (
        pytest.raises(StorageUnavailable, match=r"^flaky write: timed out$"),
        storage.translate_errors("write"),
    ):
        raise TimeoutError("timed out")
    ran = []
    with (
        pytest.raises(StorageUnavailable, match="not answering"),
        storage.translate_errors("read"),
    ):
        ran.append(True)
    assert ran == []
    clock.advance(FIRST_PAUSE)
    with storage.translate_errors("read"):  # the probe answers: closed again
        ran.append(True)
    assert ran == [True]
    assert not breaker.is_open


def test_other_exceptions_pass_untouched_and_never_leave_a_probe_hanging() -> None:
    clock = FakeClock(100.0)
    breaker = CircuitBreaker(clock)
    storage = Flaky(breaker)
    with pytest.raises(StorageUnavailable), storage.translate_errors("read"):
        raise ConnectionError("refused")
    clock.advance(FIRST_PAUSE)
    with pytest.raises(ValueError, match="a bug"), storage.translate_errors("read"):
        raise ValueError("a bug")  # during the probe: not the store's failure
    with (
        pytest.raises(StorageError, match=r"^already translated$") as caught,
        storage.translate_errors("read"),
    ):
        raise StorageError("already translated")
    assert caught.value.__cause__ is None
    with storage.translate_errors("read"):
        pass
    assert not breaker.is_open


def test_a_store_without_errors_to_translate_lets_everything_through() -> None:
    storage = MemoryStorage()
    with pytest.raises(KeyError), storage.translate_errors("read"):
        raise KeyError("x")
    assert storage.breaker is None
