"""What an exportable entity type is: how its rows become the spec's JSON form, in bulk."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from core.outbox import EntityType


@dataclass(frozen=True)
class EntityDefinition:
    """One exportable entity type (spec: Events, Exportable entities).

    ``load`` takes the ``object_id`` of export items and returns each one's JSON form (exactly the spec's
    model); a row that no longer exists is left out. ``element_key`` documents what keys an element in the
    exported wrapper ``{element_key: entity}``.

    ``load_paths``, where the type has it, is ``load`` for a reader of only some values (a CSV with six columns
    over a sale of a hundred): each entity reduced to what lies at the given paths (``("summary", "total")``,
    ``("summary", "line_items", 0)``), so that ``exports.transforms.common.resolve`` finds at each of them exactly
    what it finds in the whole JSON form, and nothing else is read.
    """

    code: EntityType
    model_label: str
    element_key: str
    load: Callable[[Iterable[int]], dict[int, dict[str, Any]]]
    # (account id, object id or None) -> (object id, element key) of that entity, or of the account's newest
    find: Callable[[int, int | None], tuple[int, str] | None]
    load_paths: Callable[[Iterable[int], Sequence[tuple[str | int, ...]]], dict[int, dict[str, Any]]] | None = None


def find_newest(
    rows: QuerySet[Any], object_id: int | None, key_of: Callable[[Any], str | None]
) -> tuple[int, str] | None:
    """``find`` over an account's ``rows``: the row ``object_id`` (or the newest) and its element key
    ``key_of(row)``; None when there is none, or its key is None (a row that cannot be exported)."""
    if object_id is not None:
        rows = rows.filter(pk=object_id)
    row = rows.order_by("-pk").first()
    key = key_of(row) if row is not None else None
    return None if row is None or key is None else (row.pk, key)


def model_entity(
    *,
    code: EntityType,
    model_label: str,
    element_key: str,
    rows: Callable[[], QuerySet[Any]],
    to_json: Callable[[Any], dict[str, Any]],
    key_of: Callable[[Any], str | None],
) -> EntityDefinition:
    """An entity type whose elements are ``to_json(row)`` of the ``rows()`` (the query both loads and finds);
    ``key_of(row)`` is a row's element key."""

    def load(object_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        return {row.pk: to_json(row) for row in rows().filter(pk__in=list(object_ids))}

    def find(account_id: int, object_id: int | None) -> tuple[int, str] | None:
        return find_newest(rows().filter(account_id=account_id), object_id, key_of)

    return EntityDefinition(code=code, model_label=model_label, element_key=element_key, load=load, find=find)
