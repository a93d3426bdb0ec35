"""A delivery task's loop (``deliver_queue``): leases in batches, sends in threads of this process, outcomes
recorded as they come, the rest of the queue handed over before the task's time runs out."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django import db
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core import liveness
from exports.deliveries import REGISTRY as DELIVERIES
from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus, Trigger
from exports.services import attempts, enqueueing, leasing, recording
from exports.services.leasing import Busy
from exports.services.outcomes import DeliveryOutcome, cut_off

logger = logging.getLogger(__name__)


def deliver(*, delivery_pk: int) -> str | None:
    """This one delivery, if it is due and nobody sends it (see ``deliver_queue``). Returns the status it
    reached, or None when it was not due, another worker has it, or its queue is at its concurrency cap."""
    row = ExportDelivery.objects.filter(pk=delivery_pk).values_list("queue_id", "window").first()
    if row is None:
        return None
    queue_id, window = row
    return deliver_queue(queue_id=queue_id, delivery_pks=[delivery_pk], cron=bool(window), drain=False).get(delivery_pk)


def deliver_queue(
    *,
    queue_id: int,
    delivery_pks: Sequence[int] = (),
    cron: bool = False,
    drain: bool = True,
    seconds: float | None = None,
) -> dict[int, str]:
    """Spec: Events (trigger, transformation, delivery; outcome and retry). Send one export queue's due
    deliveries, several at once (real-time ones, or with ``cron`` its cron windows): ``delivery_pks`` first, then
    (``drain``) the queue's others, oldest first, then (real time) the account's other queues' due deliveries in
    turn. Returns the status each sent delivery reached.

    This thread takes the leases (``take_leases``: within the queue's bound and the account's share) and records
    the outcomes, in batches; up to EXPORT_SEND_THREADS renders and sends run in threads of this process (one after
    another in this thread when the caller is inside a transaction: other connections could not see its rows).
    ``seconds`` (default EXPORT_TASK_SOFT_TIME_LIMIT) is the task's time: each send gets at most what is left of
    it, and before a send could not fit any more the rest of the queue goes to a new task. A soft time limit
    reached gives the sends under way a margin to finish, then records the rest as timeouts (retry rule) and
    releases their leases.
    """
    queue = ExportQueue.objects.select_related("account").filter(pk=queue_id).first()
    if queue is None:
        return {}
    sender = _Sender(queue=queue, preferred=[pk for pk in delivery_pks if pk], cron=cron, drain=drain, seconds=seconds)
    return sender.run()


# Seconds a delivery task keeps, past its last send, to record the outcome and hand over the rest of its queue.
RECORD_MARGIN_SECONDS = 5.0
# After a send finishes, the task waits up to this long for more (until half its threads are free) before it
# records them and leases their successors: fewer, larger transactions on a busy queue.
GATHER_SECONDS = 0.1


@dataclass
class _Job:
    """A leased delivery being sent: what recording its outcome needs if the send never reports back."""

    delivery: ExportDelivery
    items: list[ExportItem] | None
    started: datetime
    clock: float


_pool_state: dict[str, Any] = {}
_pool_lock = threading.Lock()


def _send_pool() -> ThreadPoolExecutor:
    """This process's send threads (EXPORT_SEND_THREADS), made on first use: a forked worker child makes its own."""
    size = int(settings.EXPORT_SEND_THREADS)
    with _pool_lock:
        if _pool_state.get("pid") != os.getpid() or _pool_state.get("size") != size:
            _pool_state.update(
                pid=os.getpid(), size=size, pool=ThreadPoolExecutor(max_workers=size, thread_name_prefix="export-send")
            )
        pool: ThreadPoolExecutor = _pool_state["pool"]
        return pool


def _in_thread(job: _Job, timeout: float, entities: dict[tuple[str, int], dict[str, Any]]) -> DeliveryOutcome:
    """One send in a send thread; the thread's database connection (the breaker's reads, a cron window's pages)
    is closed after it, so that idle threads hold none."""
    try:
        return attempts.send_one(job.delivery, timeout=timeout, items=job.items, entities=entities)
    finally:
        db.connections.close_all()


# A sender's leasing or recording taking longer than this is logged (the database's locks were slow to come).
SLOW_STEP_SECONDS = 0.5


def _note_slow(step: str, queue_id: int, clock: float) -> None:
    took = time.monotonic() - clock
    if took > SLOW_STEP_SECONDS:
        logger.warning("export queue %s: %s took %.2f s", queue_id, step, took)


class _Sender:
    """The loop of one delivery task: leases in batches, sends in threads, outcomes recorded as they come."""

    def __init__(
        self, *, queue: ExportQueue, preferred: list[int], cron: bool, drain: bool, seconds: float | None
    ) -> None:
        self.limit = settings.EXPORT_TASK_SOFT_TIME_LIMIT if seconds is None else seconds
        self.started = time.monotonic()
        self.margin = min(RECORD_MARGIN_SECONDS, self.limit * 0.2)  # kept to record outcomes and hand over the rest
        self.first_queue = queue
        self.queue = queue
        self.preferred = preferred
        self.cron, self.drain = cron, drain
        self.owner = liveness.identity()
        # The account's other real-time queues are taken in turn, one batch each: only if it has others.
        self.rotate = (
            not cron
            and drain
            and ExportQueue.objects.filter(account_id=queue.account_id, trigger=Trigger.REALTIME, enabled=True)
            .exclude(pk=queue.pk)
            .exists()
        )
        # Threads only outside a transaction: a caller's uncommitted rows are invisible to other connections.
        self.threaded = settings.EXPORT_SEND_THREADS > 1 and not transaction.get_connection().in_atomic_block
        self.width = int(settings.EXPORT_SEND_THREADS) if self.threaded else 1
        self.in_flight: dict[Future[DeliveryOutcome], _Job] = {}
        self.statuses: dict[int, str] = {}
        self.stopping = False  # no more leases: out of time, or the account is beyond its share
        self.hand_over = False  # the rest of the first queue goes to a new task
        self.yielded = False  # stopped because the account's first senders by name occupy its share
        self.looked_at = 0  # sends recorded when it last tried again after yielding

    def left(self) -> float:
        return self.limit - (time.monotonic() - self.started) - self.margin

    def need(self, queue: ExportQueue) -> float:
        kind = DELIVERIES.get(queue.delivery.get("type", ""))
        return kind.time_budget(queue.delivery) if kind is not None else 0.0  # a send's time with its own timeouts

    def run(self) -> dict[int, str]:
        done: list[DeliveryOutcome] = []
        try:
            while True:
                self.top_up()
                if not self.in_flight:
                    if self.look_again():
                        continue
                    break
                done = [self.collect(future) for future in self.gather()]
                self.record(done)
                done = []
        except SoftTimeLimitExceeded:
            logger.warning(
                "export queue %s: soft time limit reached with %d sends under way", self.queue.pk, len(self.in_flight)
            )
            self.at_soft_limit(done)
        if self.hand_over and self.drain:  # the rest of the queue, by a task with a whole time limit of its own
            enqueueing.hand_off({self.first_queue.pk: self.preferred}, cron=self.cron)
        return self.statuses

    def look_again(self) -> bool:
        """A sender that yielded after sending, once its sends are recorded, tries its account's due deliveries
        once more. The senders it yielded to may have found nothing due and ended just before a delivery
        committed whose commit-time hand-off saw this sender's leases and so left it to the account's senders:
        without this look it would wait for the sweeper. The last of an account's senders to clear its leases
        makes this look (the first by name never yields and looks after every batch)."""
        if not self.yielded or len(self.statuses) == self.looked_at:
            return False
        self.looked_at = len(self.statuses)
        self.stopping = self.yielded = False
        return True

    def gather(self) -> set[Future[DeliveryOutcome]]:
        """The sends that finished: the first, and those that finish within GATHER_SECONDS after it until half
        the threads are free, so that one transaction records several and one leases their successors."""
        finished, running = wait(list(self.in_flight), return_when=FIRST_COMPLETED)
        until = time.monotonic() + GATHER_SECONDS
        while running and len(finished) < self.width // 2:
            left = until - time.monotonic()
            if left <= 0:
                break
            more, running = wait(running, timeout=left, return_when=FIRST_COMPLETED)
            finished |= more
        return finished

    def top_up(self) -> None:
        """Lease and start sends while places are free: this queue's, then the account's other queues in turn."""
        tried: set[int] = set()
        while not self.stopping and len(self.in_flight) < self.width:
            left, need = self.left(), self.need(self.queue)
            busy = bool(self.statuses or self.in_flight)
            if left <= 0 or (busy and left < need):
                self.stopping = self.hand_over = True
                return
            want = 1 if left < need else self.width - len(self.in_flight)
            clock = time.monotonic()
            taken = leasing.take_leases(
                queue_id=self.queue.pk,
                preferred=self.preferred if self.queue.pk == self.first_queue.pk else (),
                drain=self.drain,
                cron=self.cron,
                want=want,
                owner=self.owner,
            )
            _note_slow("leasing", self.queue.pk, clock)
            if taken == Busy.ACCOUNT_AT_CAP:
                self.stopping = self.yielded = True  # the account's senders before this one take its queues in turn
                return
            if isinstance(taken, Busy):
                tried.add(self.queue.pk)
                if not self.next_queue(tried):
                    return
                continue
            self.start(taken, timeout=left)
            if self.rotate:
                self.next_queue(set())  # the account's queues in turn, one batch each

    def next_queue(self, tried: set[int]) -> bool:
        """Move on to the account's next real-time queue with due deliveries (after this one, round the list)."""
        if not self.rotate:
            return False
        due = [pk for pk in leasing.due_queues(account_id=self.queue.account_id, now=timezone.now()) if pk not in tried]
        if not due:
            return False
        after = [pk for pk in due if pk > self.queue.pk]
        pk = (after or due)[0]
        if pk != self.queue.pk:
            queue = ExportQueue.objects.filter(pk=pk).first()
            if queue is None:
                return False
            self.queue = queue
        return True

    def start(self, leased: list[ExportDelivery], *, timeout: float) -> None:
        realtime = [d for d in leased if not d.window]
        items_of: dict[int, list[ExportItem]] = {d.pk: [] for d in realtime}
        for item in ExportItem.objects.filter(delivery_id__in=list(items_of)).order_by("id"):
            assert item.delivery_id is not None
            items_of[item.delivery_id].append(item)
        entities = attempts.load_entities([item for items in items_of.values() for item in items]) if realtime else {}
        for delivery in leased:
            job = _Job(delivery, items_of.get(delivery.pk), timezone.now(), time.monotonic())
            future: Future[DeliveryOutcome]
            if self.threaded:
                future = _send_pool().submit(_in_thread, job, timeout, entities)
            else:
                future = Future()
                future.set_result(attempts.send_one(delivery, timeout=timeout, items=job.items, entities=entities))
            self.in_flight[future] = job

    def collect(self, future: Future[DeliveryOutcome]) -> DeliveryOutcome:
        job = self.in_flight.pop(future)
        try:
            return future.result()
        except BaseException as exc:  # the thread's own failure: recorded like a send that raised
            result = attempts.not_sent(job.delivery, exc) if isinstance(exc, Exception) else None
            if result is None:
                return attempts.timed_out(job.delivery, job.items, {}, job.started, job.clock)
            return attempts.outcome_of(job.delivery, job.items, result, {}, job.started, job.clock)

    def record(self, outcomes: list[DeliveryOutcome]) -> None:
        if not outcomes:
            return
        clock = time.monotonic()
        recording.record(outcomes)
        _note_slow("recording", self.queue.pk, clock)
        for outcome in outcomes:
            self.statuses[outcome.delivery.pk] = outcome.status
            if cut_off(outcome):
                self.stopping = self.hand_over = True
        sent = {outcome.delivery.pk for outcome in outcomes}
        self.preferred = [pk for pk in self.preferred if pk not in sent]

    def at_soft_limit(self, unrecorded: list[DeliveryOutcome]) -> None:
        """The soft time limit, raised in this thread: the sends under way get the margin to finish; what has not
        finished by then is recorded as a timeout (its lease released); then the rest is handed over."""
        self.stopping = self.hand_over = True
        outcomes = list(unrecorded)
        try:
            finished, _ = wait(list(self.in_flight), timeout=self.margin / 2)
            outcomes += [self.collect(future) for future in finished]
            for job in list(self.in_flight.values()):
                outcomes.append(attempts.timed_out(job.delivery, job.items, {}, job.started, job.clock))
            self.in_flight.clear()
            # Only what is still leased by this task: the limit may have come just after a batch was recorded.
            still = set(
                ExportDelivery.objects.filter(
                    pk__in=[o.delivery.pk for o in outcomes], status=ExportStatus.PENDING, lease_until__isnull=False
                ).values_list("pk", flat=True)
            )
            self.record([o for o in outcomes if o.delivery.pk in still])
        except SoftTimeLimitExceeded:  # pragma: no cover - raised once per task by Celery
            logger.warning("export queue %s: outcomes not recorded at the soft limit", self.queue.pk)
