"""What an exportable entity type is: how its rows become the spec's JSON form, in bulk."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EntityDefinition:
    """One exportable entity type (spec: Events, Exportable entities).

    ``load`` takes the ``object_id`` of export items and returns each one's JSON form (exactly the spec's
    model); a row that no longer exists is left out. ``element_key`` documents what keys an element in the
    exported wrapper ``{element_key: entity}``.
    """

    code: str
    model_label: str
    element_key: str
    load: Callable[[Iterable[int]], dict[int, dict[str, Any]]]
    # (account id, object id or None) -> (object id, element key) of that entity, or of the account's newest
    find: Callable[[int, int | None], tuple[int, str] | None]
