"""The admin's frame: headed with the product's name, navigation grouped by task, the scheduler's tables for
superusers only, and no dead link on the index."""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.test import Client

from config.admin_site import SECTIONS

pytestmark = pytest.mark.django_db


def test_the_admin_is_headed_with_the_products_name_and_has_no_view_site_link(admin_client: Client) -> None:
    page = admin_client.get("/admin/").content.decode()
    assert "Retail back-office" in page
    assert "Django administration" not in page
    assert "View site" not in page


def test_the_index_groups_models_by_task_in_order(admin_client: Client) -> None:
    page = admin_client.get("/admin/").content.decode()
    assert re.findall(r'class="section"[^>]*>([^<]*)<', page) == [title for title, _, _ in SECTIONS]
    shops = page[page.find(">Shops and registers<") : page.find(">Imports<")]
    assert "Registers" in shops and "Stock locations" in shops
    start = page.find(">Exports<")
    exports = page[start : page.find(">Integrations<", start)]
    assert "Export queues" in exports


def test_every_registered_model_is_listed_once_for_a_superuser(rf, admin_user: User) -> None:
    request = rf.get("/admin/")
    request.user = admin_user
    listed = [f"{m['admin_url']}" for section in admin.site.get_app_list(request) for m in section["models"]]
    assert len(listed) == len(set(listed)) == len(admin.site._registry)


@pytest.fixture
def staff_client(client: Client) -> Client:
    user = User.objects.create_user("staff", password="pw-staff-1234", is_staff=True)
    user.user_permissions.set(Permission.objects.all())  # every permission, and still not a superuser
    client.force_login(user)
    return client


def test_the_schedulers_tables_are_for_superusers_only(staff_client: Client, admin_client: Client) -> None:
    assert "Periodic tasks" not in staff_client.get("/admin/").content.decode()
    assert staff_client.get("/admin/django_celery_beat/periodictask/").status_code == 403
    assert "Periodic tasks" in admin_client.get("/admin/").content.decode()
    assert admin_client.get("/admin/django_celery_beat/periodictask/").status_code == 200


def test_every_link_of_the_index_answers(admin_client: Client) -> None:
    page = admin_client.get("/admin/").content.decode()
    links = {href.split("#")[0] for href in re.findall(r'href="(/[^"]*)"', page)}
    links = {link for link in links if not link.startswith("/static/")}  # whitenoise serves them, not Django
    links.discard("/admin/logout/")
    assert links, "the index links somewhere"
    dead = {link: admin_client.get(link).status_code for link in links}
    assert {link: code for link, code in dead.items() if code != 200} == {}
