"""What the audit trail (``accounts.audit``) records of export queues and of export items sent again.

A queue is recorded by its configuration: its delivery as the delivery masks it (a web hook's secret and custom
headers, an FTP password, an SFTP key), compared on the real values, so that a changed secret shows as changed
and never its value. Turning a queue on or off is ``enabled`` / ``disabled`` (the disable's reason with it); any
other change is ``changed``. Items sent again are one entry per call, ``export_items``, naming their queues and
the items, however many there are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from accounts import audit
from accounts.models import Account
from exports.deliveries import REGISTRY as DELIVERIES
from exports.models import ExportItem, ExportQueue

__all__ = ("queue_fields", "record_queue", "record_sent_again")

QUEUE = "export_queue"
ITEMS = "export_items"
# The fields of a queue the trail shows (not its bookkeeping: failing_since, disabled_at, updated_at).
_FIELDS = (
    "name",
    "entity_type",
    "enabled",
    "disabled_reason",
    "filters",
    "trigger",
    "daily_at",
    "transform",
    "delivery",
    "concurrency",
)
# Turning a queue off gives a reason, turning it on clears it: still only a switch.
_SWITCH = ("disabled_reason",)


def queue_fields(queue: ExportQueue) -> dict[str, Any]:
    """The queue's configuration as the trail compares it (real values: ``record_queue`` masks them)."""
    fields = {name: getattr(queue, name) for name in _FIELDS}
    fields["daily_at"] = queue.daily_at.isoformat() if queue.daily_at is not None else None
    return fields


def _masked(fields: dict[str, Any] | None) -> dict[str, Any] | None:
    if fields is None:
        return None
    delivery = fields.get("delivery")
    if not isinstance(delivery, dict) or (kind := DELIVERIES.get(str(delivery.get("type")))) is None:
        return fields  # an unknown configuration: masked by name only
    return {**fields, "delivery": kind.mask(delivery)}


def record_queue(
    *,
    account: Account,
    queue: ExportQueue,
    before: dict[str, Any] | None,
    action: str = "",
    actor: audit.Actor | None = None,
) -> None:
    """Record, in the caller's transaction, the queue created (``before`` None), changed since ``before``
    (``queue_fields`` taken before the change: ``enabled``, ``disabled`` or ``changed``), or ``action`` as given
    (``deleted``: recorded before the row goes, while it still has its id)."""
    after = None if action == "deleted" else queue_fields(queue)
    if not action:
        action = "created" if before is None else audit.change_action(audit.diff(before, after), along=_SWITCH)
    audit.record(
        account=account,
        action=action,
        target_type=QUEUE,
        target_id=queue.pk,
        target=queue.name,
        before=before,
        after=after,
        shown=(_masked(before), _masked(after)),
        actor=actor,
    )


def record_sent_again(*, account: Account, items: Sequence[ExportItem], action: str = "retried") -> None:
    """One entry for these items sent again (``retried``, or ``replayed`` for a replay of a time window): their
    queues, how many and which."""
    if not items:
        return
    queue_ids = sorted({item.queue_id for item in items})
    names = dict(ExportQueue.objects.filter(account=account, pk__in=queue_ids).values_list("pk", "name"))
    audit.record(
        account=account,
        action=action,
        target_type=ITEMS,
        target_id=",".join(str(pk) for pk in queue_ids),
        target=", ".join(names.get(pk, str(pk)) for pk in queue_ids),
        changes={
            "queues": [None, [names.get(pk, str(pk)) for pk in queue_ids]],
            "count": [None, len(items)],
            "ids": [None, sorted(item.pk for item in items)[: audit.LIST_LIMIT]],
        },
    )
