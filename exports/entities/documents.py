"""Entity types whose rows keep their exported JSON form in a ``document`` column (the POS ledger).

The document is written once, when the entity is created, and never changed, so loading is reading it.

A reader of a few values (``load_paths``: a cron CSV of six columns over a hundred thousand sales) has the
database take just those values out of each document, so that only they are sent and decoded, not the whole
document (measured: decoding the documents was half of a daily CSV's time, docs/benchmarks.md). The paths are
followed strictly, as ``exports.transforms.common.resolve`` follows them: a key only inside an object, an index
only inside an array and within it; anything else is no value (PostgreSQL: a ``strict`` SQL/JSON path, errors
silenced; SQLite: its ``->`` path, which is strict that way). Each value is decoded by the column's own decoder,
so a number is the same Decimal it is in the whole document, and the values are put back at their paths.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.apps import apps
from django.db import connections

from core.outbox import EntityType
from exports.entities.base import EntityDefinition, find_newest

PathStep = str | int
Path = tuple[PathStep, ...]


def document_entity(
    *, code: EntityType, model_label: str, element_key: str, key_of: Callable[[Any], str]
) -> EntityDefinition:
    """An entity type over ``model_label`` rows; ``key_of(row)`` is the element key of one row."""

    def model() -> Any:
        return apps.get_model(model_label)

    def load(object_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        rows = model().objects.filter(pk__in=list(object_ids)).values_list("pk", "document")
        return dict(rows)

    def load_paths(object_ids: Iterable[int], paths: Sequence[Path]) -> dict[int, dict[str, Any]]:
        return _load_paths(model(), list(object_ids), paths)

    def find(account_id: int, object_id: int | None) -> tuple[int, str] | None:
        return find_newest(model().objects.filter(account_id=account_id), object_id, key_of)

    return EntityDefinition(
        code=code, model_label=model_label, element_key=element_key, load=load, find=find, load_paths=load_paths
    )


# Values taken out per JSON array (a function takes at most 100 arguments in PostgreSQL, 127 in SQLite).
VALUES_PER_ARRAY = 50


def _load_paths(model: Any, object_ids: list[int], paths: Sequence[Path]) -> dict[int, dict[str, Any]]:
    """``load`` reduced to ``paths`` (``EntityDefinition.load_paths``): one query; per row, the values at the paths
    as JSON arrays (of ``VALUES_PER_ARRAY``), null where there is none."""
    wanted = outermost(paths)
    chunks = [wanted[start : start + VALUES_PER_ARRAY] for start in range(0, len(wanted), VALUES_PER_ARRAY)]
    connection = connections[model.objects.db]
    quote = connection.ops.quote_name
    table, pk = quote(model._meta.db_table), quote(model._meta.pk.column)
    field = model._meta.get_field("document")
    if connection.vendor == "postgresql":
        # The document is stored compressed: it is decompressed once per row (the concatenation is a new,
        # plain value; OFFSET 0 keeps it computed once), not once per path. Every path starts with a key, which
        # a document that is not an object does not have, whatever is appended to it. A jsonpath error (a key of
        # an array, an index past the end) is silenced: no value, as resolve says.
        value = "jsonb_path_query_first(x.d, %s::jsonpath, '{}'::jsonb, true)"
        arrays = "".join(f", jsonb_build_array({', '.join([value] * len(chunk))})::text" for chunk in chunks)
        source = f"{table} s CROSS JOIN LATERAL (SELECT s.{quote(field.column)} || '{{}}'::jsonb AS d OFFSET 0) x"
        sql = f"SELECT s.{pk}{arrays} FROM {source} WHERE s.{pk} = ANY(%s::bigint[])"  # noqa: S608  # quoted names
        params: list[Any] = [f"strict {json_path(path)}" for path in wanted]
        params.append("{" + ",".join(str(int(pk)) for pk in object_ids) + "}")  # an array literal: one cheap text
    else:  # SQLite, whose path is strict that way already
        value = f"{quote(field.column)} -> %s"
        arrays = "".join(f", json_array({', '.join([value] * len(chunk))})" for chunk in chunks)
        sql = f"SELECT {pk}{arrays} FROM {table} WHERE {pk} IN (SELECT value FROM json_each(%s))"  # noqa: S608
        params = [json_path(path) for path in wanted]
        params.append(json.dumps(object_ids))
    decode = (field.decoder or json.JSONDecoder)().decode
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    places = [_placing(path) for path in wanted]
    entities: dict[int, dict[str, Any]] = {}
    for pk_value, *arrays_text in rows:
        entity: dict[str, Any] = {}
        values = [value for text in arrays_text for value in decode(text)]
        for (path, keys, leaf), found in zip(places, values, strict=True):
            if found is None:
                continue  # none there, or null: resolve finds None either way
            if keys is None:
                place(entity, path, found)
                continue
            node = entity
            for key in keys:
                node = node.setdefault(key, {})
            node[leaf] = found
        entities[pk_value] = entity
    return entities


def _placing(path: Path) -> tuple[Path, tuple[str, ...] | None, str]:
    """(path, its keys but the last, its last key) for a path of keys only (the common case, placed inline);
    (path, None, "") for one with an index (``place``)."""
    if all(isinstance(step, str) for step in path):
        return path, tuple(str(step) for step in path[:-1]), str(path[-1])
    return path, None, ""


def json_path(path: Path) -> str:
    """``("summary", "line_items", 0)`` as the SQL/JSON path ``$."summary"."line_items"[0]`` (SQLite reads the same
    form). Keys are quoted: a path's key is letters, digits, ``_`` and ``-`` (``common.parse_path``), all safe
    within quotes; anything else is refused."""
    parts = ["$"]
    for step in path:
        if isinstance(step, int):
            parts.append(f"[{step:d}]")
        elif step and all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in step):
            parts.append(f'."{step}"')
        else:
            raise ValueError(f"not a path key: {step!r}")
    return "".join(parts)


def outermost(paths: Iterable[Path]) -> list[Path]:
    """The distinct ``paths``, in their order, without those inside another of them (its value holds theirs)."""
    distinct = list(dict.fromkeys(paths))
    given = set(distinct)
    return [path for path in distinct if not any(path[:length] in given for length in range(1, len(path)))]


def place(entity: dict[str, Any], path: Path, value: Any) -> None:
    """Put ``value`` at ``path`` inside ``entity``, making the objects and arrays on the way (an array padded with
    nulls up to the index). ``value`` is None: nothing to put, ``resolve`` finds None anyway."""
    if value is None:
        return
    node: Any = entity
    for position, step in enumerate(path):
        if isinstance(step, int):
            node.extend([None] * (step + 1 - len(node)))
        if position == len(path) - 1:
            node[step] = value
            return
        child = node[step] if isinstance(step, int) else node.get(step)
        if child is None:
            child = node[step] = [] if isinstance(path[position + 1], int) else {}
        node = child
