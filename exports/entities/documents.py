"""Entity types whose rows keep their exported JSON form in a ``document`` column (the POS ledger).

The document is written once, when the entity is created, and never changed, so loading is reading it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.apps import apps

from exports.entities.base import EntityDefinition, find_newest


def document_entity(*, code: str, model_label: str, element_key: str, key_of: Callable[[Any], str]) -> EntityDefinition:
    """An entity type over ``model_label`` rows; ``key_of(row)`` is the element key of one row."""

    def model() -> Any:
        return apps.get_model(model_label)

    def load(object_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        rows = model().objects.filter(pk__in=list(object_ids)).values_list("pk", "document")
        return dict(rows)

    def find(account_id: int, object_id: int | None) -> tuple[int, str] | None:
        return find_newest(model().objects.filter(account_id=account_id), object_id, key_of)

    return EntityDefinition(code=code, model_label=model_label, element_key=element_key, load=load, find=find)
