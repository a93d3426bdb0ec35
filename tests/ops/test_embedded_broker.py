"""The embedded default's broker (ops.embedded_broker): safe under concurrent producers and consumers,
and what the settings point at when no CELERY_BROKER_URL is set."""

from __future__ import annotations

import queue as queue_module
import shutil
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from kombu import Connection

from ops import embedded_broker
from ops.embedded_broker import EmbeddedBroker

PRODUCERS = 4
CONSUMERS = 4
MESSAGES = 250  # per producer


@pytest.fixture
def broker() -> Iterator[EmbeddedBroker]:
    # A short path: a unix socket's path is limited to 107 bytes.
    directory = Path(tempfile.mkdtemp(prefix="eb-"))
    server = EmbeddedBroker(directory)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


def test_concurrent_producers_and_consumers_lose_and_duplicate_nothing(broker: EmbeddedBroker) -> None:
    with Connection(broker.url) as conn:
        conn.SimpleQueue("soak").close()  # declared before anyone consumes, as Celery does at start
    consumed: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    producers_done = threading.Event()

    def produce(producer: int) -> None:
        with Connection(broker.url) as conn:
            channel_queue = conn.SimpleQueue("soak")
            for i in range(MESSAGES):
                channel_queue.put({"id": f"{producer}-{i}"})
            channel_queue.close()

    def consume() -> None:
        with Connection(broker.url) as conn:
            channel_queue = conn.SimpleQueue("soak")
            while True:
                try:
                    message = channel_queue.get(block=True, timeout=1)
                except queue_module.Empty:
                    if producers_done.is_set():
                        break
                    continue
                except Exception as exc:  # the consumer dies of it, as a Celery worker would
                    errors.append(exc)
                    return
                with lock:
                    consumed.append(message.payload["id"])
                message.ack()
            channel_queue.close()

    consumers = [threading.Thread(target=consume) for _ in range(CONSUMERS)]
    producers = [threading.Thread(target=produce, args=(p,)) for p in range(PRODUCERS)]
    for thread in [*consumers, *producers]:
        thread.start()
    for thread in producers:
        thread.join(timeout=60)
    producers_done.set()
    for thread in consumers:
        thread.join(timeout=60)

    assert errors == []
    counts = Counter(consumed)
    assert set(counts) == {f"{p}-{i}" for p in range(PRODUCERS) for i in range(MESSAGES)}, "nothing lost"
    assert [identifier for identifier, n in counts.items() if n > 1] == [], "nothing duplicated"


def test_queued_messages_survive_a_restart_of_the_broker(broker: EmbeddedBroker) -> None:
    with Connection(broker.url) as conn:
        conn.SimpleQueue("kept").put({"id": "before-restart"})
    broker.stop()
    broker.start()
    with Connection(broker.url) as conn:
        message = conn.SimpleQueue("kept").get(block=True, timeout=5)
        assert message.payload == {"id": "before-restart"}
        message.ack()


def test_the_embedded_broker_is_a_redis_url_on_the_socket_in_its_folder(tmp_path: Path) -> None:
    assert embedded_broker.broker_url(tmp_path) == f"redis+socket://{tmp_path}/redis.sock"


def test_a_socket_path_over_the_kernels_limit_is_refused_with_its_reason(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="choose a shorter VAR_DIR"):
        embedded_broker.server_argv(tmp_path / ("x" * 120))


def test_no_server_answers_where_none_was_started(tmp_path: Path) -> None:
    assert embedded_broker.answers(tmp_path) is False
