"""Many new rows of one model in one statement, their ids set on the objects: ``bulk_create`` for the hot paths.

On PostgreSQL the rows travel as one JSON document, ``INSERT ... SELECT ... FROM jsonb_to_recordset(%s)``: one
parameter instead of one per value. Django's ``bulk_create`` sends a ``VALUES`` list of every value, which
psycopg's client-side binding quotes one by one in Python and the server plans for milliseconds; for 100 import
items of about 850 bytes each that cost three times the Python and more database time than this
(docs/benchmarks.md, imports). The server reads each value as its column's type, as an ``INSERT`` does (a too
long string is refused alike). Elsewhere (SQLite) it is ``bulk_create``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any, TypeVar

from django.db import connections, router
from django.db.models import Field, JSONField, Model

M = TypeVar("M", bound=Model)

# The row number the statement orders by, named so that it cannot be a column of a model.
_ROW_NUMBER = "__row"
# A row's reference to the new row of an earlier group it names (``insert_together``).
_REF = "__ref_"
# Fields whose value, when it is exactly one of _PLAIN_VALUES, is the column value as it is: get_db_prep_save
# would return it unchanged, and it is one Django call per value less (1,500 for 100 import items).
_PLAIN_FIELDS = {
    "CharField",
    "TextField",
    "BooleanField",
    "IntegerField",
    "BigIntegerField",
    "SmallIntegerField",
    "PositiveIntegerField",
    "PositiveBigIntegerField",
    "PositiveSmallIntegerField",
    "ForeignKey",
}
_PLAIN_VALUES = (str, int, bool, type(None))


def _column_value(value: Any) -> Any:
    """A value as ``get_db_prep_save`` makes it, as JSON its column's type reads back exactly."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, uuid.UUID | Decimal):
        return str(value)
    return value


def _document_encoder(fields: Sequence[Field[Any, Any]]) -> type[json.JSONEncoder] | None:
    """The encoder of the JSON fields' documents, the one they share (``json.JSONEncoder`` when none has its own);
    None when two differ (the rows then go through ``bulk_create``)."""
    encoders = {f.encoder for f in fields if isinstance(f, JSONField) and f.encoder is not None}
    if len(encoders) > 1:
        return None
    return encoders.pop() if encoders else json.JSONEncoder


def _plain(model: type[Model]) -> tuple[Any, list[Field[Any, Any]]]:
    opts = model._meta
    pk = opts.pk
    assert pk is not None
    return pk, [f for f in opts.concrete_fields if f is not pk]


def _rows(objs: Sequence[Model], fields: Sequence[Field[Any, Any]], connection: Any) -> list[dict[str, Any]]:
    """Each object as the JSON row its columns read back."""
    documents = [(str(f.column), f) for f in fields if isinstance(f, JSONField)]
    plain = [(str(f.column), f.attname) for f in fields if f.get_internal_type() in _PLAIN_FIELDS]
    other = [
        (str(f.column), f)
        for f in fields
        if not isinstance(f, JSONField) and f.get_internal_type() not in _PLAIN_FIELDS
    ]
    prepared = {f.attname: f for f in fields}
    # The time of the auto_now(_add) fields, once for the statement: its rows are added at one time.
    stamped = [f for f in fields if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False)]
    for f in stamped:
        now = f.pre_save(objs[0], True)
        for obj in objs[1:]:
            setattr(obj, f.attname, now)
    # A value repeated over the rows (a request id, a time, a status) is converted once: one Django call per
    # distinct value, not per row (500 calls for 100 import items before).
    converted: dict[tuple[str, type, Any], Any] = {}

    def column_value(f: Field[Any, Any], value: Any) -> Any:
        key = (f.attname, type(value), value)  # the type too: 1 == True == Decimal(1)
        try:
            return converted[key]
        except KeyError:
            result = converted[key] = _column_value(f.get_db_prep_save(value, connection))
            return result
        except TypeError:  # not hashable
            return _column_value(f.get_db_prep_save(value, connection))

    rows: list[dict[str, Any]] = []
    for obj in objs:
        row = {column: f.pre_save(obj, True) for column, f in documents}
        for column, attname in plain:
            value = getattr(obj, attname)
            row[column] = value if type(value) in _PLAIN_VALUES else column_value(prepared[attname], value)
        for column, f in other:
            row[column] = column_value(f, getattr(obj, f.attname) if f in stamped else f.pre_save(obj, True))
        rows.append(row)
    return rows


def _table(model: type[Model]) -> str:
    return str(model._meta.db_table)


def _set_pks(objs: Sequence[Model], ids: Sequence[Any], alias: str) -> None:
    for obj, pk_value in zip(objs, ids, strict=True):
        obj.pk = pk_value
        obj._state.adding = False
        obj._state.db = alias


def insert(objs: Sequence[M]) -> list[M]:
    """``bulk_create(objs)`` of new objects of one model (no pk, no expression as a value), all or nothing by
    itself: the rows are inserted in order in one statement, each object gets its pk and ``auto_now_add`` fields
    their time. Returns ``objs``."""
    if not objs:
        return list(objs)
    model = type(objs[0])
    connection = connections[router.db_for_write(model)]
    pk, fields = _plain(model)
    encoder = _document_encoder(fields)
    if connection.vendor != "postgresql" or encoder is None:
        return model._default_manager.bulk_create(objs)
    rows = _rows(objs, fields, connection)
    quote = connection.ops.quote_name
    quoted = [quote(str(f.column)) for f in fields]
    names = ", ".join(quoted)
    types = ", ".join(f"{name} {f.db_type(connection)}" for name, f in zip(quoted, fields, strict=True))
    # Every name comes from the model and is quoted; the rows are the one parameter.
    sql = (
        f"INSERT INTO {quote(_table(model))} ({names}) SELECT {names} "  # noqa: S608
        f"FROM ROWS FROM (jsonb_to_recordset(%s::jsonb) AS ({types})) WITH ORDINALITY AS r ({names}, "
        f"{_ROW_NUMBER}) ORDER BY {_ROW_NUMBER} RETURNING {quote(str(pk.column))}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [json.dumps(rows, cls=encoder)])
        ids = [row[0] for row in cursor.fetchall()]
    _set_pks(objs, ids, connection.alias)
    return list(objs)


def insert_together(*groups: Sequence[Model]) -> None:
    """``insert`` of several groups of new objects (one model per group) in one statement on PostgreSQL, a
    data-modifying ``WITH`` per group: the rows of two or three tables cost one statement, not one each. Every
    object gets its pk. A foreign key of an object may name an object of an earlier group that has no pk yet (an
    export item and its new delivery): the statement gives it that object's new pk. Elsewhere (SQLite, which has no
    data-modifying ``WITH``) each group is ``bulk_create``d in turn, which sets such keys from the objects."""
    groups = tuple(group for group in groups if group)
    if not groups:
        return
    models = [type(group[0]) for group in groups]
    connection = connections[router.db_for_write(models[0])]
    encoders = [_document_encoder(_plain(model)[1]) for model in models]
    if connection.vendor != "postgresql" or any(encoder is None for encoder in encoders):
        for model, group in zip(models, groups, strict=True):
            model._default_manager.bulk_create(group)
        return
    # Where each new object is: id(obj) -> (its group, its row number counted from 1).
    where = {id(obj): (g, n) for g, group in enumerate(groups) for n, obj in enumerate(group, start=1)}
    ctes: list[str] = []
    params: list[str] = []
    linked: list[tuple[Model, str, Model]] = []  # (object, foreign key, the new object it names)
    for g, (model, group) in enumerate(zip(models, groups, strict=True)):
        pk, fields = _plain(model)
        refs = _earlier_group_refs(group, fields, where)
        rows = _rows(group, fields, connection)
        linked += _number_refs(model, group, fields, rows, refs, where)
        ctes.append(_insert_cte(g, model, pk, fields, refs, connection))
        params.append(json.dumps(rows, cls=encoders[g]))
        # This group's rows by row number, for a later group's references (a plain WITH that no one reads is
        # not run): its ids ascend in the order its rows were inserted, one sequence read row by row in that
        # order by this one statement.
        ctes.append(f"n{g} AS (SELECT id, row_number() OVER (ORDER BY id) AS n FROM g{g})")  # noqa: S608
    union = " UNION ALL ".join(f"SELECT {g}, id FROM g{g}" for g in range(len(groups)))  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(f"WITH {', '.join(ctes)} {union}", params)
        ids: dict[int, list[Any]] = {g: [] for g in range(len(groups))}
        for g, pk_value in cursor.fetchall():
            ids[g].append(pk_value)
    for g, group in enumerate(groups):
        _set_pks(group, sorted(ids[g]), connection.alias)
    for obj, fk, target in linked:
        setattr(obj, fk, target)  # its key column too, as bulk_create leaves it


Where = dict[int, tuple[int, int]]  # id(new object) -> (its group, its row number counted from 1)


def _earlier_group_refs(group: Sequence[Model], fields: list[Any], where: Where) -> dict[str, int]:
    """Foreign keys of the group that name an earlier group's new object: column -> that group."""
    refs: dict[str, int] = {}
    for f in fields:
        if f.is_relation and f.many_to_one:
            for obj in group:
                target = obj._state.fields_cache.get(f.name)
                if getattr(obj, f.attname) is None and target is not None and id(target) in where:
                    refs[str(f.column)] = where[id(target)][0]
                    break
    return refs


def _number_refs(
    model: type[Model],
    group: Sequence[Model],
    fields: list[Any],
    rows: list[dict[str, Any]],
    refs: dict[str, int],
    where: Where,
) -> list[tuple[Model, str, Model]]:
    """Each row carries the row number of the new object its reference names; returns (object, foreign key, the
    new object) to set once the pks are known."""
    linked: list[tuple[Model, str, Model]] = []
    for column, target_group in refs.items():
        fk = next(f.name for f in fields if f.column == column)
        for row, obj in zip(rows, group, strict=True):
            target = obj._state.fields_cache.get(fk)
            at = where.get(id(target)) if target is not None and row[column] is None else None
            if at is not None and at[0] != target_group:
                raise ValueError(f"{model.__name__}.{fk} names objects of two groups")
            row[f"{_REF}{column}"] = at[1] if at is not None else None
            if at is not None and target is not None:
                linked.append((obj, fk, target))
    return linked


def _insert_cte(g: int, model: type[Model], pk: Any, fields: list[Any], refs: dict[str, int], connection: Any) -> str:
    """The data-modifying ``WITH`` of group ``g``: its rows from one JSON parameter, a reference to an earlier
    group's new object joined to that group's new ids by row number."""
    quote = connection.ops.quote_name
    quoted = [quote(str(f.column)) for f in fields]
    ref_names = [quote(f"{_REF}{column}") for column in refs]
    types = ", ".join(
        [f"{name} {f.db_type(connection)}" for name, f in zip(quoted, fields, strict=True)]
        + [f"{name} bigint" for name in ref_names]
    )
    values: list[str] = []
    joins: list[str] = []
    for f, name in zip(fields, quoted, strict=True):
        column = str(f.column)
        if column in refs:
            alias = f"n{refs[column]}_{len(joins)}"
            joins.append(f" LEFT JOIN n{refs[column]} AS {alias} ON {alias}.n = r.{quote(_REF + column)}")
            values.append(f"COALESCE(r.{name}, {alias}.id)")
        else:
            values.append(f"r.{name}")
    # Every name comes from the model and is quoted; the rows are one parameter per group.
    return (
        f"g{g} AS (INSERT INTO {quote(_table(model))} ({', '.join(quoted)}) SELECT {', '.join(values)} "  # noqa: S608
        f"FROM ROWS FROM (jsonb_to_recordset(%s::jsonb) AS ({types})) WITH ORDINALITY AS r "
        f"({', '.join(quoted + ref_names)}, {_ROW_NUMBER}){''.join(joins)} ORDER BY r.{_ROW_NUMBER} "
        f"RETURNING {quote(str(pk.column))} AS id)"
    )
