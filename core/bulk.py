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


def insert(objs: Sequence[M]) -> list[M]:
    """``bulk_create(objs)`` of new objects of one model (no pk, no expression as a value), all or nothing by
    itself: the rows are inserted in order in one statement, each object gets its pk and ``auto_now_add`` fields
    their time. Returns ``objs``."""
    if not objs:
        return list(objs)
    model = type(objs[0])
    connection = connections[router.db_for_write(model)]
    opts = model._meta
    pk = opts.pk
    assert pk is not None
    fields = [f for f in opts.concrete_fields if f is not pk]
    encoder = _document_encoder(fields)
    if connection.vendor != "postgresql" or encoder is None:
        return model._default_manager.bulk_create(objs)
    # A JSON field's value goes into the document as it is, written by the encoder as JSONField writes it.
    documents = [(f.column, f) for f in fields if isinstance(f, JSONField)]
    plain = [(f.column, f.attname) for f in fields if f.get_internal_type() in _PLAIN_FIELDS]
    other = [
        (f.column, f) for f in fields if not isinstance(f, JSONField) and f.get_internal_type() not in _PLAIN_FIELDS
    ]
    prepared = {f.attname: f for f in fields}
    rows = []
    for obj in objs:
        row = {column: f.pre_save(obj, True) for column, f in documents}
        for column, attname in plain:
            value = getattr(obj, attname)
            if type(value) not in _PLAIN_VALUES:
                value = _column_value(prepared[attname].get_db_prep_save(value, connection))
            row[column] = value
        for column, f in other:
            row[column] = _column_value(f.get_db_prep_save(f.pre_save(obj, True), connection))
        rows.append(row)
    quote = connection.ops.quote_name
    quoted = [quote(str(f.column)) for f in fields]
    names = ", ".join(quoted)
    types = ", ".join(f"{name} {f.db_type(connection)}" for name, f in zip(quoted, fields, strict=True))
    # Every name comes from the model and is quoted; the rows are the one parameter.
    sql = (
        f"INSERT INTO {quote(opts.db_table)} ({names}) SELECT {names} "  # noqa: S608
        f"FROM ROWS FROM (jsonb_to_recordset(%s::jsonb) AS ({types})) WITH ORDINALITY AS r ({names}, "
        f"{_ROW_NUMBER}) ORDER BY {_ROW_NUMBER} RETURNING {quote(str(pk.column))}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [json.dumps(rows, cls=encoder)])
        ids = [row[0] for row in cursor.fetchall()]
    for obj, pk_value in zip(objs, ids, strict=True):
        obj.pk = pk_value
        obj._state.adding = False
        obj._state.db = connection.alias
    return list(objs)
