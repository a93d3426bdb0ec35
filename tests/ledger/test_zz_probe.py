import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from exports.models import ExportQueue
from tests.ledger.test_checkouts import checkout_body, post_ok

pytestmark = pytest.mark.usefixtures("register")

def test_probe(pos, tenant):
    for et, trig in (("checkouts", "daily"), ("sales", "realtime"), ("stock_events", "realtime")):
        ExportQueue.objects.create(account=tenant.account, name=et, entity_type=et, trigger=trig,
            transform={"type": "identity"}, delivery={"type": "webhook", "url": "https://example.com/hook"})
    lines = [(f"p-{n}", "tops", 1, 10) for n in range(50)]
    post_ok(pos, checkout_body(identifier="co-0", lines=lines[:1]))
    for n in (1, 50):
        with CaptureQueriesContext(connection) as q:
            post_ok(pos, checkout_body(identifier=f"co-{n}-x", lines=lines[:n]))
        print("N", n, len(q))
        for x in q.captured_queries:
            print("   ", x["sql"][:200])
