"""Changing one place of a JSON document (a posted body, an order) to make it break a rule."""

from __future__ import annotations

from typing import Any

DELETE = object()  # the value that removes the key at the path


def change_at(document: Any, path: list[Any], value: Any) -> Any:
    """``document``, changed in place: the key (or index) at ``path`` set to ``value``, or removed when ``value`` is
    ``DELETE``."""
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return document
