"""Every example body in ``examples/`` is what the README and docs post: each is posted here, as written, to
the endpoint the docs name, against the demo tenant ``make run`` creates (``manage.py bootstrap_demo``)."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from pos.admin import PriceBasketForm

pytestmark = pytest.mark.django_db

EXAMPLES = Path(settings.BASE_DIR) / "examples"
ROOT = Path(settings.BASE_DIR)


@pytest.fixture
def demo(settings, tmp_path) -> dict[str, str]:
    settings.VAR_DIR = tmp_path
    out = StringIO()
    call_command("bootstrap_demo", stdout=out)
    key = next(line for line in out.getvalue().splitlines() if line.startswith("rk_"))
    return {"account": "demo", "integration": "webshop", "apikey": key}


def post(client: APIClient, path: str, example: str, query: dict[str, str]) -> Any:
    body = (EXAMPLES / example).read_bytes()
    return client.post(path, data=body, content_type="application/json", QUERY_STRING=_query(query))


def _query(query: dict[str, str]) -> str:
    return "&".join(f"{k}={v}" for k, v in query.items())


def test_the_import_example_is_initiated(demo):
    answer = post(APIClient(), "/imports/incoming_orders", "incoming_orders.json", {"stock_location": "shop-1", **demo})
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"status": "OK", "message": "Import of 1 order(s) initiated"}


@pytest.mark.parametrize(
    ("path", "example"), [("discount_campaigns", "discount_campaigns.json"), ("product_rules", "product_rules.json")]
)
def test_the_definition_examples_are_stored(demo, path, example):
    answer = post(APIClient(), f"/imports/{path}", example, {"markets": "dk", **demo})
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "OK"


def test_the_checkout_example_is_booked_and_a_replay_is_answered_from_the_store(demo):
    first = post(APIClient(), "/api/v1/pos/checkouts", "checkout.json", demo)
    assert first.status_code == 201, first.content
    again = post(APIClient(), "/api/v1/pos/checkouts", "checkout.json", demo)
    assert again.status_code == 200 and again.json()["created"] is False


def test_the_basket_example_shows_the_demo_campaign_and_the_deposit(demo):
    answer = post(APIClient(), "/api/v1/pos/baskets/price", "basket.json", demo)
    assert answer.status_code == 200, answer.content
    text = json.dumps(answer.json())
    assert "coffee-20" in text, "the demo campaign discounts the coffee"
    assert "pant-a" in text, "the deposit rule adds its deposit"


def test_the_export_queue_example_is_created_and_previews_the_checkout_examples_sale(demo):
    post(APIClient(), "/api/v1/pos/checkouts", "checkout.json", demo)
    answer = post(APIClient(), "/api/v1/export-queues/", "export_queue.json", demo)
    assert answer.status_code == 201, answer.content
    assert answer.json()["name"] == "Sales to the ERP"
    preview = APIClient().post(f"/api/v1/export-queues/{answer.json()['id']}/preview", QUERY_STRING=_query(demo))
    assert preview.status_code == 200, preview.content
    assert "demo-co-1-s1" in json.dumps(preview.json()), "the README's preview shows the stored sale"


def test_every_example_the_docs_name_exists_and_every_example_is_named_and_posted_here():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    named = {m for doc in docs for m in re.findall(r"examples/([\w.-]+\.json)", doc.read_text())}
    present = {p.name for p in EXAMPLES.glob("*.json")}
    assert named <= present, f"the docs name examples that do not exist: {sorted(named - present)}"
    posted = set(re.findall(r'"([\w-]+\.json)"', Path(__file__).read_text()))
    assert present <= posted, f"examples no test posts: {sorted(present - posted)}"


def test_the_admins_price_a_basket_example_shows_the_demo_campaign_and_deposit(demo, admin_client):
    form = PriceBasketForm()
    answer = admin_client.post(
        reverse("admin:campaigns_campaign_price_basket"),
        {"account": "demo", "market": "dk", "customer": "", "line_items": form.fields["line_items"].initial},
    )
    assert answer.status_code == 200
    page = answer.content.decode()
    assert "coffee-20" in page, "a newcomer's first Price shows the demo campaign's discount"
    assert "pant-a" in page, "and the demo deposit rule's deposit line"
