"""The back-office's languages: English by default, Danish from the browser's Accept-Language or the chooser."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from exports.models import ExportStatus
from tests.support.backoffice import SignIn
from tests.support.logs import make_item, make_sales_queue

pytestmark = pytest.mark.django_db


def text(answer) -> str:
    assert answer.status_code == 200, answer.status_code
    return answer.content.decode()


def test_the_sign_in_page_is_english_by_default_and_for_a_language_not_offered():
    for headers in ({}, {"HTTP_ACCEPT_LANGUAGE": "fr-FR,fr;q=0.9"}):
        page = text(Client().get("/backoffice/login/", **headers))
        assert '<html lang="en">' in page
        assert "<h1>Sign in</h1>" in page and "Forgot your password?" in page and "Password" in page
        assert "Log ind" not in page


def test_the_sign_in_page_is_danish_for_a_browser_that_asks_for_danish():
    page = text(Client().get("/backoffice/login/", HTTP_ACCEPT_LANGUAGE="da-DK,da;q=0.9,en;q=0.5"))
    assert '<html lang="da">' in page
    assert "<h1>Log ind</h1>" in page
    assert "Glemt din adgangskode?" in page
    assert "Adgangskode</label>" in page  # the form's own field label, from Django's translation
    assert 'action="/backoffice/language/"' in page and '<option value="da" lang="da" selected>Dansk</option>' in page


def test_the_dashboard_is_danish_for_a_browser_that_asks_for_danish(tenant, sign_in: SignIn):
    client = sign_in(tenant.account, "owner")
    page = text(client.get("/backoffice/", HTTP_ACCEPT_LANGUAGE="da"))
    assert "<h1>Oversigt</h1>" in page
    assert "Eksportkøer" in page and "Eksportlog" in page and "Log ud" in page and "Medlemmer" in page
    assert "Export queues" not in page
    assert "<h1>Dashboard</h1>" in text(client.get("/backoffice/"))


def test_the_chooser_keeps_danish_for_the_next_pages_and_back_to_english(tenant, sign_in: SignIn):
    client = sign_in(tenant.account, "viewer")
    chosen = client.post("/backoffice/language/", {"language": "da", "next": "/backoffice/exports/log/"})
    assert chosen.status_code == 302 and chosen["Location"] == "/backoffice/exports/log/"
    assert "<h1>Eksportlog</h1>" in text(client.get("/backoffice/exports/log/"))
    assert "<h1>Oversigt</h1>" in text(client.get("/backoffice/", HTTP_ACCEPT_LANGUAGE="en"))

    client.post("/backoffice/language/", {"language": "en", "next": "/backoffice/"})
    assert "<h1>Dashboard</h1>" in text(client.get("/backoffice/"))


def test_the_chooser_works_before_signing_in_and_ignores_a_language_not_offered():
    client = Client()
    client.get("/backoffice/login/")
    client.post("/backoffice/language/", {"language": "xx", "next": "/backoffice/login/"})
    assert "<h1>Sign in</h1>" in text(client.get("/backoffice/login/"))
    client.post("/backoffice/language/", {"language": "da", "next": "/backoffice/login/"})
    assert "<h1>Log ind</h1>" in text(client.get("/backoffice/login/"))


def test_the_chooser_needs_the_csrf_token():
    client = Client(enforce_csrf_checks=True)
    assert client.post("/backoffice/language/", {"language": "da"}).status_code == 403


def test_the_api_answers_in_english_whatever_the_accept_language(tenant):
    client = APIClient()
    url = f"/imports/incoming_orders?{tenant.query(stock_location='shop-1')}"
    answers = [
        client.post(url, {"orders": [{"order_identifier": 5}]}, format="json", HTTP_ACCEPT_LANGUAGE=language)
        for language in ("en", "da")
    ]
    assert answers[0].status_code == answers[1].status_code == 400
    assert answers[0].json() == answers[1].json()
    assert "must be a string, not number" in answers[1].content.decode()


def test_the_queue_form_is_danish_with_the_exports_apps_own_texts(tenant, sign_in: SignIn):
    client = sign_in(tenant.account, "manager")
    page = text(client.get("/backoffice/exports/queues/new/", HTTP_ACCEPT_LANGUAGE="da"))
    assert "Ny eksportkø" in page and "Opret køen" in page
    assert "Entitets-id" in page  # exports/forms.py, translated in exports/locale/
    assert "Kun lagersteder" in page and "Signeringshemmelighed" in page  # the typed fields' labels
    assert "Hvordan entiteterne bliver til filen eller indholdet:" in page  # the transform's help
    assert "Only stock locations" not in page


def test_the_export_log_shows_the_statuses_in_danish(tenant, sign_in: SignIn):
    queue = make_sales_queue(tenant.account)
    make_item(queue, status=ExportStatus.SUCCESS)
    make_item(queue, status=ExportStatus.FAILURE)
    client = sign_in(tenant.account, "viewer")
    page = text(client.get("/backoffice/exports/log/", HTTP_ACCEPT_LANGUAGE="da"))
    assert '<span class="status success">Gennemført</span>' in page
    assert '<span class="status failure">Fejlet</span>' in page
    assert ">Success</span>" not in page
    assert '<span class="status success">Success</span>' in text(client.get("/backoffice/exports/log/"))


def test_the_members_page_shows_the_roles_in_danish(tenant, sign_in: SignIn):
    client = sign_in(tenant.account, "owner")
    page = text(client.get("/backoffice/members/", HTTP_ACCEPT_LANGUAGE="da"))
    assert 'value="owner" selected>Ejer</option>' in page
    assert ">Leder</option>" in page and ">Læser</option>" in page
    assert ">Owner</option>" not in page
    assert 'value="owner" selected>Owner</option>' in text(client.get("/backoffice/members/"))


def test_the_dashboard_tells_the_breaker_in_danish(tenant, sign_in: SignIn):
    make_sales_queue(tenant.account)
    client = sign_in(tenant.account, "viewer")
    page = text(client.get("/backoffice/", HTTP_ACCEPT_LANGUAGE="da"))
    assert "lukket: ingen fejl siden seneste succes (afbryder " in page
    assert "closed: no failure" not in page
    assert "closed: no failure since the last success (breaker " in text(client.get("/backoffice/"))
