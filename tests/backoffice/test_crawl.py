"""Scoping in one place, proved by crawling: every back-office page an owner of one account reaches by following
links, and every form on them, replayed as a member of another account (no page shows the first account's data)
and as a viewer of the first (every write refused, nothing changed)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from django.test import Client

from accounts import services as account_services
from accounts.models import AuditEntry
from backoffice.members import FORM_ACCOUNT_FIELD
from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus
from integrations import services as integration_services
from integrations.models import RuntimeIntegration
from ledger.models import RegisterCloseStatement
from ledger.services.registers import close_register, open_register
from tests.factories import RegisterFactory
from tests.support.backoffice import SignIn
from tests.support.imports import import_orders
from tests.support.queues import make_queue

pytestmark = pytest.mark.django_db

# Pages a crawl visits at most (each list's first page and the items it links).
MAX_PAGES = 150
# Paths never followed: they end the session.
NOT_FOLLOWED = ("/backoffice/logout/",)
# Forms where every member, a viewer too, sets their own choice.
OWN_CHOICES = ("/backoffice/switch/", "/backoffice/notifications/", "/backoffice/language/")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.forms: list[dict[str, object]] = []
        self._form: dict[str, object] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "a" and named.get("href"):
            self.links.append(str(named["href"]))
        elif tag == "form":
            self._form = {"action": named.get("action") or "", "method": (named.get("method") or "get").lower()}
            self._form["fields"] = {}
            self.forms.append(self._form)
        elif tag in ("input", "select", "textarea", "button") and self._form is not None and named.get("name"):
            fields = self._form["fields"]
            assert isinstance(fields, dict)
            fields.setdefault(str(named["name"]), named.get("value") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None


def crawl(client: Client) -> tuple[list[str], list[tuple[str, dict[str, object]]]]:
    """Every back-office page reachable from the dashboard, and every POST form on them (action, fields)."""
    seen: list[str] = []
    forms: dict[str, dict[str, object]] = {}
    queue = ["/backoffice/"]
    while queue and len(seen) < MAX_PAGES:
        url = queue.pop(0)
        if url in seen:
            continue
        answer = client.get(url)
        assert answer.status_code == 200, (url, answer.status_code)
        seen.append(url)
        parser = _Links()
        parser.feed(answer.content.decode())
        for link in parser.links:
            target = urljoin(url, link)
            path = urlsplit(target)
            if path.path.startswith("/backoffice/") and path.path not in NOT_FOLLOWED:
                full = path.path + (f"?{path.query}" if path.query else "")
                if full not in seen and full not in queue:
                    queue.append(full)
        for form in parser.forms:
            if form["method"] == "post":
                action = urljoin(url, str(form["action"]) or url)
                if urlsplit(action).path not in NOT_FOLLOWED and action not in forms:
                    forms[action] = dict(form["fields"])  # type: ignore[arg-type]
    return seen, sorted(forms.items())


@pytest.fixture
def first_account(tenant, client, settings):
    """Account A with data on every page: a queue, an export log of delivered, failed and waiting items, a runtime
    integration of a kind that may move money (so its test page asks to confirm rather than calls), a register close
    statement."""
    queue = make_queue(tenant, "https://example.com/a-hook", name="a-queue-7f3e")
    integration_services.save_runtime_integration(
        account=tenant.account,
        data={
            "kind": "giftcard_pay",
            "method": "POST",
            "url": "https://erp-a-7f3e.example.com/giftcards/{code}/pay",
            "headers": {"Authorization": "Bearer a-secret-7f3e"},
            "body": {"amount": "{amount}"},
        },
    )
    import_orders(client, tenant, "a-order-1", "a-order-2", "a-order-3")
    items = list(ExportItem.objects.filter(queue=queue).order_by("pk"))
    ExportItem.objects.filter(pk=items[0].pk).update(status=ExportStatus.FAILURE, message="HTTP 503")
    ExportItem.objects.filter(pk=items[1].pk).update(status=ExportStatus.SUCCESS)
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="a-register-7f3e")
    open_register(account=tenant.account, register_identifier="a-register-7f3e")
    counted = [{"payment_type_identifier": "cash", "counted": 0}]
    close_register(
        account=tenant.account, register_identifier="a-register-7f3e", counted=counted, identifier="a-close-7f3e"
    )
    return tenant


def a_markers(tenant) -> list[bytes]:
    """Text only account A's pages show."""
    names = list(ExportQueue.objects.filter(account=tenant.account).values_list("name", flat=True))
    keys = list(ExportItem.objects.filter(account=tenant.account).values_list("element_key", flat=True))
    hosts = ["erp-a-7f3e.example.com", "a-secret-7f3e"]
    closes = list(RegisterCloseStatement.objects.filter(account=tenant.account).values_list("identifier", flat=True))
    return [value.encode() for value in [*names, *keys, *hosts, *closes, "a-register-7f3e"] if value]


def state(tenant) -> tuple[object, ...]:
    return (
        AuditEntry.objects.count(),
        sorted(ExportQueue.objects.values_list("pk", "enabled", "name")),
        sorted(ExportItem.objects.values_list("pk", "status", "delivery_id")),
        ExportDelivery.objects.count(),
        sorted(RuntimeIntegration.objects.values_list("pk", "kind", "url", "timeout", "enabled")),
    )


def test_every_page_and_form_of_one_account_is_out_of_reach_of_another_and_a_viewer_changes_nothing(
    first_account, other_tenant, sign_in: SignIn
):
    owner = sign_in(first_account.account, "owner")
    pages, forms = crawl(owner)
    assert len(pages) >= 5 and forms, (pages, forms)
    markers = a_markers(first_account)

    stranger = sign_in(other_tenant.account, "owner")
    for url in pages:
        answer = stranger.get(url)
        assert answer.status_code in (200, 404), (url, answer.status_code)
        if answer.status_code == 200:  # a filter's value is echoed in its field: not a leak
            echoed = unquote(url).encode()
            leaked = [m for m in markers if m in answer.content and m not in echoed]
            assert not leaked, (url, leaked)

    before = state(first_account)
    for action, fields in forms:
        if FORM_ACCOUNT_FIELD in fields:
            # The form names account A, not the stranger's: refused before the view runs.
            assert stranger.post(action, fields).status_code == 409, action
        # Without the field, the scoping alone: done in their own account (a redirect), refused as a form (400,
        # naming the field), or not found.
        answer = stranger.post(action, {k: v for k, v in fields.items() if k != FORM_ACCOUNT_FIELD})
        assert answer.status_code in (302, 400, 403, 404), (action, answer.status_code)
    # A stranger's posts may change their own account (the switcher); nothing of account A.
    assert state(first_account)[1:3] == before[1:3] and state(first_account)[4] == before[4]

    viewer = sign_in(first_account.account, "viewer")
    before = state(first_account)
    for action, fields in forms:
        path = urlsplit(action).path
        answer = viewer.post(action, fields)
        if path in OWN_CHOICES:
            continue  # choosing one's own account, notifications or language is not a write of the account
        if path.startswith("/backoffice/security/"):
            # One's own sign-in, not the account's: every member may; without a right code, a form error.
            assert answer.status_code == 400, (action, answer.status_code)
            continue
        assert answer.status_code in (403, 405), (action, answer.status_code)
    assert state(first_account) == before
    visited = b" ".join(p.encode() for p in pages)
    assert re.search(rb"exports/queues/\d+/", visited)
    # The queue forms: reached by their links, and their posts refused to the stranger and the viewer above.
    assert b"/backoffice/exports/queues/new/" in visited
    assert re.search(rb"exports/queues/\d+/edit/", visited) and re.search(rb"exports/queues/\d+/delete/", visited)
    posted = [urlsplit(action).path for action, _fields in forms]
    assert "/backoffice/exports/queues/new/" in posted
    assert any(re.fullmatch(r"/backoffice/exports/queues/\d+/(edit|delete)/", path) for path in posted)
    assert "/backoffice/notifications/" in pages
    # The owner's own pages: the account's settings and their security page (two-factor sign-in).
    assert {"/backoffice/settings/", "/backoffice/security/"} <= set(pages)
    assert {"/backoffice/settings/", "/backoffice/security/"} <= set(posted)
    for new in (rb"/integrations/new/", rb"/integrations/\d+/edit/", rb"/integrations/\d+/test/", rb"/pricing/"):
        assert re.search(new, visited), new
    assert "/backoffice/statements/" in pages and re.search(rb"/backoffice/statements/\d+/", visited)


# Forms of every page whose views are not ``member_view``'s account-bound writes: the switcher changes the account
# (its job), signing out and the language are the person's own, whichever account they work in.
NOT_ACCOUNT_BOUND = ("/backoffice/switch/", "/backoffice/logout/", "/backoffice/language/")


def test_every_form_that_changes_something_names_the_account_it_was_shown_in(
    first_account, other_tenant, sign_in: SignIn
):
    # An owner who is also a member of another account (the switcher shows) and a colleague not yet signed in
    # (the members page shows every form of a row, the invitation's too).
    owner = sign_in(first_account.account, "owner", email="both-7f3e@example.com")
    account_services.add_member(account=other_tenant.account, email="both-7f3e@example.com", role="viewer")
    account_services.add_member(account=first_account.account, email="colleague-7f3e@example.com", role="viewer")
    pages, _forms = crawl(owner)
    checked: list[str] = []
    for url in pages:
        parser = _Links()
        parser.feed(owner.get(url).content.decode())
        for form in parser.forms:
            action = urlsplit(urljoin(url, str(form["action"]) or url)).path
            if form["method"] != "post" or action in NOT_ACCOUNT_BOUND:
                continue
            fields = form["fields"]
            assert isinstance(fields, dict)
            assert fields.get(FORM_ACCOUNT_FIELD) == first_account.account.identifier, (url, action)
            checked.append(action)
    # The crawl reached the forms of every kind of write, and the switcher, which is left alone.
    for write in ("/queues/new/", "/disable/", "/delete/", "/exports/retry/", "/keys/", "/revoke/"):
        assert any(write in action for action in checked), write
    for write in ("/role/", "/remove/", "/invite/", "/integrations/new/", "/test/", "/settings/", "/security/"):
        assert any(write in action for action in checked), write
    assert b'action="/backoffice/switch/"' in owner.get("/backoffice/").content
