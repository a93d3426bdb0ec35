"""Exports: the outbox, delivery, retries, the sweeper and cron windows (spec: Events, Errors 4, Limits).

``enqueue`` is the only way an entity enters exports. It runs inside the transaction that creates the
entity and writes one export item per enabled matching queue (and, for real-time queues, the delivery
that will carry it), so a rolled-back entity exports nothing and a crash after commit loses nothing:
the sweeper hands over every delivery still pending a grace period after its last hand-off. A delivery
task works on one export queue: it leases each delivery just before its send (at most
EXPORT_QUEUE_CONCURRENCY of one queue at a time), under Celery time limits shorter than the lease; a worker
killed mid-delivery leaves the lease to run out and the delivery to be taken up again. Receivers drop
repeats by the delivery id every delivery carries.

One module per role:

- ``enqueueing``: the outbox's sink (``enqueue``, ``offered``, ``queues_read_along``, the queues' filters) and
  ``hand_off``, which gives committed deliveries to Celery;
- ``leasing``: the bounds on sending (a queue's concurrency, an account's share of the worker processes) and
  the leases taken within them;
- ``sending``: a delivery task's loop (``deliver``, ``deliver_queue``): leases in batches, sends in threads,
  outcomes recorded as they come;
- ``attempts``: one delivery's attempt (rendered and sent, a cron window streamed) and its outcome;
- ``outcomes``: what an attempt gave;
- ``recording``: the outcomes written (attempts, deliveries, items) and retries handed back;
- ``sweeping``: the sweeper, retries requested by staff, cron windows;
- ``queues``: queue configuration (validation, create, update, delete, limits, destination checks);
- ``tryouts``: a transform previewed and a configuration sent once as a test, writing nothing.

Callers use the names below, from this package. The modules refer to each other's functions through the
module (``enqueueing.hand_off``), so that each function has one name to patch: its module's.
"""

from __future__ import annotations

from exports.services.attempts import (
    STREAM_PAGE,
    STREAM_SPOOL_BYTES,
    TIME_LIMIT_ERROR,
    elements_of,
    render_context,
)
from exports.services.enqueueing import (
    DELIVER_CRON_TASK,
    DELIVER_TASK,
    HAND_OFF_IDS,
    ExportEntry,
    enqueue,
    hand_off,
    new_delivery_id,
    offered,
    queues_read_along,
)
from exports.services.leasing import account_cap, queue_concurrency
from exports.services.queues import (
    FILTER_KEYS,
    create_queue,
    delete_queue,
    destination_refusal,
    destination_warning,
    queue_limit_reached,
    update_queue,
    validate_concurrency,
    validate_queue,
)
from exports.services.sending import (
    GATHER_SECONDS,
    RECORD_MARGIN_SECONDS,
    SLOW_STEP_SECONDS,
    deliver,
    deliver_queue,
)
from exports.services.sweeping import cron_window, retry_items, run_cron, sweep
from exports.services.tryouts import (
    TEST_DELIVERY_PREFIX,
    SentTest,
    preview,
    preview_config,
    send_test_config,
    send_test_delivery,
)

__all__ = [
    "DELIVER_CRON_TASK",
    "DELIVER_TASK",
    "FILTER_KEYS",
    "GATHER_SECONDS",
    "HAND_OFF_IDS",
    "RECORD_MARGIN_SECONDS",
    "SLOW_STEP_SECONDS",
    "STREAM_PAGE",
    "STREAM_SPOOL_BYTES",
    "TEST_DELIVERY_PREFIX",
    "TIME_LIMIT_ERROR",
    "ExportEntry",
    "SentTest",
    "account_cap",
    "create_queue",
    "cron_window",
    "delete_queue",
    "deliver",
    "deliver_queue",
    "destination_refusal",
    "destination_warning",
    "elements_of",
    "enqueue",
    "hand_off",
    "new_delivery_id",
    "offered",
    "preview",
    "preview_config",
    "queue_concurrency",
    "queue_limit_reached",
    "queues_read_along",
    "render_context",
    "retry_items",
    "run_cron",
    "send_test_config",
    "send_test_delivery",
    "sweep",
    "update_queue",
    "validate_concurrency",
    "validate_queue",
]
