"""A checkout's SQL queries do not grow with its lines (at most 10 per checkout, whatever its size, with the
export queues of a real shop; PostgreSQL writes the rows of several tables in one statement, SQLite cannot: see
docs/notes/history.md).

Counted through the POS endpoint, authentication and the answer included, in real transactions (as a server runs
them: the test's own transaction would add savepoints no server sends), with the queries run after the commit.
The transaction's own BEGIN and COMMIT are not counted (Django logs them on SQLite, not on PostgreSQL);
savepoints are.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.support.api import PosApi
from tests.support.checkouts import checkout_body, export_queue, post_ok
from tests.support.tenants import Tenant

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("register")]

LINES = [(f"p-{n}", "tops", 1, 10) for n in range(50)]


TRANSACTION = ("BEGIN", "COMMIT")

# PostgreSQL writes a sale's lines, payments and taxes in one statement, and export deliveries with their items
# in one (a data-modifying WITH, core.bulk.insert_together); SQLite, which has none, writes one per table.
ONE_STATEMENT_PER_TABLE = connection.vendor != "postgresql"


def queries_of(pos: PosApi, identifier: str, lines: int) -> list[dict[str, Any]]:
    with CaptureQueriesContext(connection) as queries:
        post_ok(pos, checkout_body(identifier=identifier, lines=LINES[:lines]))
    return [query for query in queries.captured_queries if not query["sql"].startswith(TRANSACTION)]


def sql_of(queries: list[dict[str, Any]]) -> str:
    return "\n".join(query["sql"][:160] for query in queries)


def test_a_checkout_of_50_lines_takes_as_many_queries_as_one_of_1_and_at_most_10(pos: PosApi) -> None:
    post_ok(pos, checkout_body(identifier="co-0", lines=LINES[:1]))  # the register's period is open

    one = queries_of(pos, "co-1", 1)
    fifty = queries_of(pos, "co-50", 50)

    assert len(one) == len(fifty), sql_of(fifty)
    assert len(fifty) <= (9 if ONE_STATEMENT_PER_TABLE else 7), sql_of(fifty)


def test_export_queues_of_every_entity_add_queries_but_none_per_line(pos: PosApi, tenant: Tenant) -> None:
    # The checkout collected for a daily file; its sales and stock events sent in real time.
    for entity_type, trigger in (("checkouts", "daily"), ("sales", "realtime"), ("stock_events", "realtime")):
        export_queue(tenant, entity_type, trigger=trigger)
    post_ok(pos, checkout_body(identifier="co-0", lines=LINES[:1]))

    one = queries_of(pos, "co-1", 1)
    fifty = queries_of(pos, "co-50", 50)

    assert len(one) == len(fifty), sql_of(fifty)
    # Those above (the export queues read by the period's lock: core.outbox.read_along), the deliveries and items
    # written (one statement on PostgreSQL, two on SQLite), and after the commit one look at the real-time queues'
    # leases and their accounts' before their hand-off (exports.services.hand_off; the queues' bounds come with
    # the read-along).
    assert len(fifty) <= (9 + 2 + 1 if ONE_STATEMENT_PER_TABLE else 9), sql_of(fifty)
