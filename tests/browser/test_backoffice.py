"""The back-office in Chromium at 1280 x 800 and at 390 x 844 (a phone): a member signs in through the form and
reads every main page without scrolling sideways; the export log shows why each delivery failed and when it is
tried again in the first screen at 1280 px and as one card per row on a phone; a failed item is sent again with the
page's own button; a person in two accounts switches between them and chooses Danish."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from exports import services as export_services
from exports.models import ExportItem, ExportStatus
from ledger.models import RegisterCloseStatement
from tests.support import showcase
from tests.support.queues import make_queue
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant, make_tenant

EMAIL = "ann@acme.example"
PASSWORD = "correct-Horse-battery-9"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
# The export log's columns a person needs to see why an item failed and when it is tried again.
WHY_COLUMNS = ["Status", "Reason", "Code", "Attempts", "Next retry"]

# Whether the document scrolls sideways, and each table cell of the named columns that runs out of the viewport.
LAYOUT = """(labels) => {
  const root = document.documentElement;
  const outside = [];
  for (const cell of document.querySelectorAll("table.rows td[data-label]")) {
    if (!labels.includes(cell.dataset.label)) continue;
    const box = cell.getBoundingClientRect();
    if (box.left < 0 || box.right > window.innerWidth + 0.5 || box.width <= 0) outside.push(cell.dataset.label);
  }
  return {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, outside: outside};
}"""
# Each row of the page's tables as a phone shows it: the header row hidden, each cell with its column's name before
# its value.
CARDS = """() => {
  const heads = [...document.querySelectorAll("table.rows thead")].map((h) => getComputedStyle(h).display);
  const cells = [...document.querySelectorAll("table.rows tbody td[data-label]")].map((cell) => {
    const before = getComputedStyle(cell, "::before");
    return {label: cell.dataset.label, shown: before.content, row: getComputedStyle(cell.parentElement).display,
            width: cell.getBoundingClientRect().width};
  });
  return {heads: heads, cells: cells};
}"""

# The sections of the navigation bar that run off the window.
NAV_CUT = """() => [...document.querySelectorAll("nav.main a")]
  .filter((a) => a.getBoundingClientRect().right > window.innerWidth + 0.5).map((a) => a.textContent)"""


@pytest.fixture
def acme(transactional_db: None) -> Tenant:
    return make_tenant("acme")


def sign_in(page: Page) -> None:
    page.goto("/backoffice/")
    expect(page).to_have_url(re.compile(r"/backoffice/login/"))
    assert_no_sideways_scroll(page)
    page.get_by_label("E-mail").fill(EMAIL.upper())
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/backoffice/$"))


def assert_no_sideways_scroll(page: Page, labels: list[str] | None = None) -> None:
    layout = page.evaluate(LAYOUT, labels or [])
    assert layout["scrollWidth"] <= layout["clientWidth"], (page.url, layout)
    assert not layout["outside"], (page.url, layout["outside"])


def assert_rows_are_cards(page: Page) -> None:
    shown = page.evaluate(CARDS)
    assert shown["cells"], page.url
    assert set(shown["heads"]) == {"none"}, (page.url, shown["heads"])
    for cell in shown["cells"]:
        assert cell["shown"] == f'"{cell["label"]}"' and cell["row"] == "block" and cell["width"] > 0, (page.url, cell)


def test_a_member_signs_in_and_reads_every_page_at_desktop_and_phone_width(
    page: Page, acme: Tenant, reachable_receiver: Receiver
) -> None:
    shown = showcase.fill(acme, reachable_receiver)
    showcase.sign_in_member(acme, email=EMAIL, password=PASSWORD)
    assert shown.delivered and shown.failed and shown.waiting
    failed = shown.failed[0]
    pages = [
        ("/backoffice/", "Dashboard", "Orders to the ERP"),
        ("/backoffice/exports/queues/", "Export queues", "Orders to the ERP"),
        (f"/backoffice/exports/queues/{shown.queue.pk}/", "Orders to the ERP", "Latest items"),
        (f"/backoffice/exports/queues/{shown.queue.pk}/edit/", "Edit Orders to the ERP", "Entity type"),
        ("/backoffice/exports/log/", "Export log", failed.element_key),
        (f"/backoffice/exports/log/{failed.pk}/", failed.element_key, "HTTP 400"),
        ("/backoffice/imports/", "Import log", "web-10047"),
        (f"/backoffice/imports/{shown.rejected_import.pk}/", "web-10047", "basket.line_items[0].price"),
        ("/backoffice/sales/?warnings=1", "Sales", "co-20001-s1"),
        ("/backoffice/members/", "Members", EMAIL),
        ("/backoffice/keys/", "API keys", "imports"),
        ("/backoffice/audit/", "Audit log", EMAIL),
        ("/backoffice/notifications/", "Notifications", EMAIL),
    ]
    page.set_viewport_size(DESKTOP)
    sign_in(page)

    for path, heading, text in pages:
        page.goto(path)
        expect(page.locator("h1")).to_contain_text(heading)
        expect(page.locator("main")).to_contain_text(text)
        assert_no_sideways_scroll(page, WHY_COLUMNS if path == "/backoffice/exports/log/" else None)
        if path == "/backoffice/":
            hidden = page.evaluate(NAV_CUT)
            assert not hidden, hidden  # every section in sight at 1280 px, none scrolled off the bar
        if path == "/backoffice/exports/log/":
            failed_row = page.locator("tbody tr", has_text=failed.element_key)
            expect(failed_row.locator("td[data-label=Status]")).to_have_text("Failure")
            expect(failed_row.locator("td[data-label=Reason]")).to_contain_text("customer_email is required")
            expect(failed_row.locator("td[data-label=Code]")).to_have_text("400")
            expect(failed_row.locator("td[data-label=Attempts]")).to_have_text("1")
            waiting_row = page.locator("tbody tr", has_text=shown.waiting[0].element_key)
            expect(waiting_row.locator("td[data-label=Code]")).to_have_text("503")
            expect(waiting_row.locator("td[data-label='Next retry']")).to_have_text(re.compile(r"^\d\d:\d\d:\d\d$"))
            expect(page.locator("thead")).to_be_visible()

    page.set_viewport_size(PHONE)
    for path, heading, text in pages:
        page.goto(path)
        expect(page.locator("h1")).to_contain_text(heading)
        expect(page.locator("main")).to_contain_text(text)
        assert_no_sideways_scroll(page, WHY_COLUMNS if path == "/backoffice/exports/log/" else None)
        if path in ("/backoffice/exports/log/", "/backoffice/imports/", "/backoffice/sales/?warnings=1"):
            assert_rows_are_cards(page)
        if path == "/backoffice/exports/log/":
            card = page.locator("tbody tr", has_text=shown.waiting[0].element_key)
            card.scroll_into_view_if_needed()
            expect(card.locator("td[data-label=Code]")).to_have_text("503")
            expect(card.locator("td[data-label='Next retry']")).to_be_in_viewport()


def test_a_failed_item_is_sent_again_from_the_export_log_and_delivered(
    page: Page, acme: Tenant, reachable_receiver: Receiver
) -> None:
    shown = showcase.fill(acme, reachable_receiver)
    showcase.sign_in_member(acme, email=EMAIL, password=PASSWORD, role="manager")
    failed = shown.failed[0]
    page.set_viewport_size(PHONE)
    sign_in(page)

    page.goto("/backoffice/exports/log/?status=failure")
    page.get_by_label(f"Choose {failed.element_key}").check()
    page.get_by_role("button", name="Send the chosen again").click()

    expect(page).to_have_url(re.compile(r"/backoffice/exports/log/\?status=failure$"))
    expect(page.locator(".messages")).to_have_text("1 item will be sent again.")
    expect(page.locator("tbody tr", has_text=failed.element_key)).to_have_count(0)  # no longer failed
    failed.refresh_from_db()
    assert failed.status == ExportStatus.PENDING and failed.delivery_id is not None
    export_services.deliver(delivery_pk=failed.delivery_id)  # what the worker does with it

    page.goto(f"/backoffice/exports/log/{failed.pk}/")
    expect(page.locator("main")).to_contain_text("Success")
    assert ExportItem.objects.get(pk=failed.pk).status == ExportStatus.SUCCESS


def test_a_person_in_two_accounts_switches_between_them_and_chooses_danish(page: Page, acme: Tenant) -> None:
    globex = make_tenant("globex")
    make_queue(acme, "https://example.com/acme", name="acme-queue")
    make_queue(globex, "https://example.com/globex", name="globex-queue")
    showcase.sign_in_member(acme, email=EMAIL, password=PASSWORD)
    showcase.sign_in_member(globex, email=EMAIL, password=PASSWORD, role="viewer")
    page.set_viewport_size(DESKTOP)
    sign_in(page)
    switcher = page.get_by_label("Account")
    main = page.locator("main")

    page.goto("/backoffice/exports/queues/")
    expect(main).to_contain_text("acme-queue")
    switcher.select_option("globex")
    page.get_by_role("button", name="Switch").click()

    expect(switcher).to_have_value("globex")
    expect(main).to_contain_text("globex-queue")
    expect(main).not_to_contain_text("acme-queue")
    expect(page.locator("header")).to_contain_text("Viewer")
    page.goto("/backoffice/")
    expect(main).to_contain_text("globex-queue")
    switcher.select_option("acme")
    page.get_by_role("button", name="Switch").click()
    expect(switcher).to_have_value("acme")
    expect(main).to_contain_text("acme-queue")

    page.get_by_label("Language").select_option("da")
    page.get_by_role("button", name="Change").click()
    expect(page.locator("h1")).to_have_text("Oversigt")
    expect(page.get_by_label("Konto")).to_have_value("acme")  # the same account, in Danish


# Each input of the pricing page's basket lines that runs out of its line (its row, a card on a phone) or the window.
LINE_INPUTS_OUTSIDE = """() => {
  const outside = [];
  for (const input of document.querySelectorAll("table.basket-lines tbody input:not([type=hidden])")) {
    const box = input.getBoundingClientRect();
    const row = input.closest("tr").getBoundingClientRect();
    if (box.width <= 0 || box.left < row.left || box.right > row.right + 0.5 || box.right > window.innerWidth + 0.5)
      outside.push(input.name);
  }
  return outside;
}"""


def test_the_pricing_page_s_line_inputs_fit_their_lines_at_desktop_and_phone_width(page: Page, acme: Tenant) -> None:
    showcase.sign_in_member(acme, email=EMAIL, password=PASSWORD)
    page.set_viewport_size(DESKTOP)
    sign_in(page)
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        page.goto("/backoffice/pricing/")
        expect(page.locator("h1")).to_contain_text("Price a basket")
        assert page.locator("table.basket-lines tbody input").count() > 0
        assert_no_sideways_scroll(page)
        assert page.evaluate(LINE_INPUTS_OUTSIDE) == [], size
    assert_rows_are_cards(page)


def test_the_other_pages_read_at_desktop_and_phone_width(
    page: Page, acme: Tenant, reachable_receiver: Receiver
) -> None:
    showcase.fill(acme, reachable_receiver)
    showcase.sign_in_member(acme, email=EMAIL, password=PASSWORD)
    statement = RegisterCloseStatement.objects.filter(account=acme.account).first()
    assert statement is not None
    pages = [
        ("/backoffice/checkouts/", "Checkouts"),
        ("/backoffice/statements/", "Statements"),
        (f"/backoffice/statements/{statement.pk}/", "Statement #"),
        ("/backoffice/integrations/", "Runtime integrations"),
        ("/backoffice/integrations/new/", "runtime integration"),
        ("/backoffice/pricing/", "Price a basket"),
        ("/backoffice/security/", "Security"),
        ("/backoffice/settings/", "Settings"),
    ]
    page.set_viewport_size(DESKTOP)
    sign_in(page)
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        for path, heading in pages:
            answer = page.goto(path)
            assert answer is not None and answer.status == 200, path
            expect(page.locator("h1")).to_contain_text(re.compile(re.escape(heading), re.IGNORECASE))
            assert_no_sideways_scroll(page)
