"""The shared worker pool (``mcp_ref.session.workers``): bounded, threads on demand that end when
idle, and per-session lanes that keep a session's limit and order. Spec:
basic/transports#session-management (what idle HTTP sessions may cost)."""
import threading
import time

import pytest

from mcp_ref.session.workers import Lane, WorkerPool

from helpers import WAIT


def _wait_for(predicate, limit: float = WAIT) -> bool:
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_pool_starts_threads_on_demand_up_to_its_bound_and_queues_the_rest():
    pool = WorkerPool(3, name="mcp-test-pool", idle_exit=0.1)
    gate, started, done = threading.Event(), threading.Semaphore(0), []
    try:
        assert pool.thread_count == 0
        for n in range(10):
            pool.submit(lambda n=n: (started.release(), gate.wait(WAIT), done.append(n)))
        for _ in range(3):
            assert started.acquire(timeout=WAIT)
        assert not started.acquire(timeout=0.2)
        assert pool.thread_count == 3
        gate.set()
        assert _wait_for(lambda: len(done) == 10)
        assert sorted(done) == list(range(10))
        assert _wait_for(lambda: pool.thread_count == 0)               # idle threads end
        assert not [t for t in threading.enumerate() if t.name.startswith("mcp-test-pool")]
        pool.submit(lambda: done.append("again"))                      # and come back on demand
        assert _wait_for(lambda: done[-1] == "again")
    finally:
        gate.set()
        pool.close()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


def test_an_idle_thread_takes_the_next_job_rather_than_a_new_thread():
    pool = WorkerPool(8, name="mcp-test-pool", idle_exit=WAIT)
    try:
        for n in range(20):
            finished = threading.Event()
            pool.submit(finished.set)
            assert finished.wait(WAIT)
            assert _wait_for(lambda: pool._idle == 1)
        assert pool.thread_count == 1
    finally:
        pool.close()


def test_a_failing_job_is_logged_and_the_thread_goes_on(caplog):
    pool = WorkerPool(1, name="mcp-test-pool", idle_exit=WAIT)
    finished = threading.Event()
    try:
        pool.submit(lambda: 1 / 0)
        pool.submit(finished.set)
        assert finished.wait(WAIT)
        assert "ZeroDivisionError" in caplog.text
    finally:
        pool.close()


def test_a_lane_runs_at_most_its_limit_at_once_and_the_rest_in_order():
    pool = WorkerPool(16, name="mcp-test-pool", idle_exit=0.1)
    lane = Lane(pool, 2)
    serial = Lane(pool, 1)
    lock, running, peak, order = threading.Lock(), [0], [0], []
    gate = threading.Event()

    def job(n):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        gate.wait(WAIT)
        with lock:
            running[0] -= 1
            order.append(n)
    try:
        for n in range(8):
            lane.submit(lambda n=n: job(n))
        assert _wait_for(lambda: running[0] == 2)
        assert pool.thread_count == 2 and lane.busy
        gate.set()
        assert _wait_for(lambda: len(order) == 8)
        assert peak[0] == 2 and sorted(order) == list(range(8))
        assert _wait_for(lambda: not lane.busy)
        seen = []
        for n in range(50):
            serial.submit(lambda n=n: seen.append(n))
        assert _wait_for(lambda: len(seen) == 50) and seen == list(range(50))
        lane.close()
        lane.submit(lambda: seen.append("after close"))
        time.sleep(0.05)
        assert "after close" not in seen
    finally:
        gate.set()
        pool.close()


def test_a_thread_starts_outside_the_pools_lock_and_one_closed_before_it_ran_does_nothing(monkeypatch):
    """Rule 5: while a new worker thread starts, another thread can use the pool (here
    ``close()``, which takes the pool's lock); the job of a thread the pool closed
    before it ran is dropped, as every job not started is."""
    pool = WorkerPool(2, name="mcp-test-start", idle_exit=0.1)
    real_start, closed, ran = threading.Thread.start, threading.Event(), []

    def start(thread):
        if thread.name.startswith("mcp-test-start"):
            closer = threading.Thread(target=lambda: (pool.close(), closed.set()), daemon=True)
            real_start(closer)
            closed.wait(WAIT)               # without rule 5 close() waits for this start to return
        real_start(thread)
    monkeypatch.setattr(threading.Thread, "start", start)
    pool.submit(lambda: ran.append("ran"))
    assert closed.is_set()
    assert _wait_for(lambda: pool.thread_count == 0)
    assert ran == []
    with pytest.raises(RuntimeError):
        pool.submit(lambda: ran.append("late"))
