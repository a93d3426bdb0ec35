"""Export reads: queues and the export log. Every function takes the account first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict, Unpack

from django.apps import apps
from django.db.models import QuerySet

from accounts.models import Account
from core.selectors import filter_given
from exports.entities import REGISTRY as ENTITIES
from exports.models import ExportItem, ExportQueue, ExportStatus


def export_queues(*, account: Account) -> QuerySet[ExportQueue]:
    """The account's export queues, by name."""
    return ExportQueue.objects.filter(account=account).select_related("account").order_by("name", "id")


class ExportLogFilters(TypedDict, total=False):
    """The export log's optional filters; ``queue`` is the queue's id."""

    queue: int | None
    status: str | None
    entity_type: str | None
    element_key: str | None


def export_items(
    *, account: Account, with_attempts: bool = False, **filters: Unpack[ExportLogFilters]
) -> QuerySet[ExportItem]:
    """The export log of the account: every export item with its delivery, newest first.

    ``with_attempts`` prefetches the attempt log of each item's delivery (a detail view).
    """
    queryset = ExportItem.objects.filter(account=account).select_related("queue", "delivery")
    queue = filters.get("queue")
    if queue is not None:
        queryset = queryset.filter(queue_id=queue)
    queryset = filter_given(queryset, {name: filters.get(name) for name in ("status", "entity_type", "element_key")})
    if with_attempts:
        queryset = queryset.prefetch_related("delivery__attempt_log")
    return queryset.order_by("-id")


def retryable_items(
    *, account: Account, queue: ExportQueue, ids: Sequence[int] | None = None, limit: int
) -> list[ExportItem]:
    """Items of a queue that a bulk retry re-sends: the failed ones, or those named by id (a replay).

    Pending items are never included: they are still on their way (or waiting for their cron window).
    """
    queryset = ExportItem.objects.filter(account=account, queue=queue).exclude(status=ExportStatus.PENDING)
    queryset = queryset.filter(pk__in=ids) if ids is not None else queryset.filter(status=ExportStatus.FAILURE)
    return list(queryset.order_by("id")[:limit])


# How many of an entity type's newest stored entities the queue form offers to preview and test on.
RECENT_ENTITIES = 15
# The queue form lists at most this many value paths of an entity, down to this depth.
MAX_PATHS = 300
MAX_PATH_DEPTH = 6


def recent_entities(*, account: Account, entity_type: str, limit: int = RECENT_ENTITIES) -> list[tuple[int, str]]:
    """The account's newest stored entities of ``entity_type``: (object id, element key), newest first."""
    definition = ENTITIES.get(entity_type)
    if definition is None:
        return []
    model = apps.get_model(definition.model_label)
    ids = model.objects.filter(account_id=account.pk).order_by("-pk").values_list("pk", flat=True)[: limit * 2]
    found = [definition.find(account.pk, object_id) for object_id in ids]
    return [entry for entry in found if entry is not None][:limit]


def entity_paths(*, account: Account, entity_type: str, object_id: int | None = None) -> list[str]:
    """The value paths of a stored entity of ``entity_type`` (the newest, or ``object_id``), as transforms write
    them (``summary.total``, ``summary.line_items[0].quantity``): what a template or a column can name. Empty when
    the account has none stored yet."""
    definition = ENTITIES.get(entity_type)
    found = definition.find(account.pk, object_id) if definition is not None else None
    if definition is None or found is None:
        return []
    entity = definition.load([found[0]]).get(found[0])
    paths: list[str] = []

    def walk(value: Any, prefix: str, depth: int) -> None:
        if len(paths) >= MAX_PATHS:
            return
        if isinstance(value, dict) and depth < MAX_PATH_DEPTH:
            for key, inner in value.items():
                walk(inner, f"{prefix}.{key}" if prefix else str(key), depth + 1)
        elif isinstance(value, list) and value and depth < MAX_PATH_DEPTH:
            walk(value[0], f"{prefix}[0]", depth + 1)
        elif prefix:
            paths.append(prefix)

    walk(entity or {}, "", 0)
    return paths
