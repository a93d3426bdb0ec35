"""The back-office's flows in Chromium: a sign-in with two factors; an export queue created with the form,
previewed and test-sent to a real receiver; a member invited by e-mail who signs in through the link; a viewer
refused a change. Each at desktop width and at a phone's (390 px) where the flow has a page to read."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from django.core import mail
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice
from playwright.sync_api import Page, expect

from accounts import services as account_services
from exports.models import ExportQueue
from orders.models import OrderStateChange
from tests.support.imports import materialise_pending, order
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant, make_tenant

PASSWORD = "correct-Horse-battery-9"
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def acme(transactional_db: None, settings: Any) -> Tenant:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return make_tenant("acme")


def password_step(page: Page, email: str) -> None:
    page.goto("/backoffice/login/")
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def no_sideways_scroll(page: Page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth"), page.url


def test_a_member_with_two_factor_types_the_apps_code_after_the_password(page: Page, acme: Tenant) -> None:
    membership, _ = account_services.add_member(
        account=acme.account, email="ann@acme.example", role="owner", password=PASSWORD
    )
    device = TOTPDevice.objects.create(user=membership.user, name="app", confirmed=True)

    password_step(page, "ann@acme.example")
    expect(page).to_have_url(re.compile(r"/backoffice/login/verify/"))
    expect(page.locator("h1")).to_have_text("Your code")  # the password alone signed them not in
    page.set_viewport_size(PHONE)
    no_sideways_scroll(page)
    totp = TOTP(device.bin_key)
    totp.time = time.time()
    page.get_by_label("Code").fill(f"{totp.token():06d}")
    page.get_by_role("button", name=re.compile("Sign in|Verify|Continue")).click()
    expect(page).to_have_url(re.compile(r"/backoffice/$"))
    expect(page.locator("h1")).to_have_text("Dashboard")


def test_a_queue_is_created_with_the_form_previewed_and_test_sent(
    page: Page, acme: Tenant, reachable_receiver: Receiver, client: Any
) -> None:
    account_services.add_member(account=acme.account, email="ann@acme.example", role="manager", password=PASSWORD)
    client.post(
        f"/imports/incoming_orders?{acme.query(stock_location='shop-1')}",
        {"orders": [order("web-preview-1")]},
        format="json",
    )
    materialise_pending(acme)
    assert OrderStateChange.objects.filter(account=acme.account).exists()

    password_step(page, "ann@acme.example")
    page.goto("/backoffice/exports/queues/")
    page.get_by_role("link", name="New queue").click()
    page.locator("[name=name]").fill("orders to the web shop")
    page.locator("[name=entity_type]").select_option("incoming_order_state_changes")
    page.locator("[name=delivery__type]").select_option("webhook")
    page.locator("[name=delivery__url]").fill(reachable_receiver.url)
    page.get_by_role("button", name="Create the queue").click()
    expect(page.locator("h1")).to_contain_text("orders to the web shop")
    queue = ExportQueue.objects.get(account=acme.account, name="orders to the web shop")

    page.goto(f"/backoffice/exports/queues/{queue.pk}/edit/")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("pre.preview")).to_contain_text("web-preview-1")

    page.get_by_role("button", name="Send a test").click()
    expect(page.locator(".test-status")).to_have_text("200")
    assert any("web-preview-1" in got.body.decode() for got in reachable_receiver.received)

    page.set_viewport_size(PHONE)
    no_sideways_scroll(page)


def test_an_invited_member_signs_in_through_the_link_and_a_viewer_is_refused_a_change(page: Page, acme: Tenant) -> None:
    account_services.add_member(account=acme.account, email="owner@acme.example", role="owner", password=PASSWORD)
    password_step(page, "owner@acme.example")
    page.goto("/backoffice/members/")
    page.get_by_label("E-mail", exact=True).fill("vic@acme.example")
    page.get_by_label("Role", exact=True).select_option("viewer")
    page.get_by_role("button", name=re.compile("Add|Invite")).click()
    expect(page.locator("body")).to_contain_text("vic@acme.example")
    link = re.search(r"https?://[^\s]+/backoffice/invite/[^\s/]+/", mail.outbox[-1].body)
    assert link, mail.outbox[-1].body

    page.context.clear_cookies()
    page.goto(link.group(0))
    page.locator("input[type=password]").nth(0).fill(PASSWORD)
    page.locator("input[type=password]").nth(1).fill(PASSWORD)
    page.locator("form button[type=submit]").last.click()
    expect(page).to_have_url(re.compile(r"/backoffice/$"))

    queue = ExportQueue.objects.create(
        account=acme.account,
        name="orders to erp",
        entity_type="incoming_order_state_changes",
        trigger="realtime",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://erp.example.com/hook", "secret": "s" * 24},
    )
    page.goto(f"/backoffice/exports/queues/{queue.pk}/")
    expect(page.get_by_role("link", name="Edit")).to_have_count(0)  # no change offered to a viewer
    answer = page.goto(f"/backoffice/exports/queues/{queue.pk}/edit/")
    assert answer is not None and answer.status == 403
    expect(page.locator("body")).to_contain_text("does not allow")
    page.set_viewport_size(PHONE)
    no_sideways_scroll(page)
