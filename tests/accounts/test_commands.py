"""Management commands: create_api_key and bootstrap_demo."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts import selectors
from accounts.models import Account, ApiKey, Integration, Market, Membership, Register, StockLocation
from campaigns.models import Campaign, ProductRule

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    """bootstrap_demo keeps its key under VAR_DIR: a directory of each test's own."""
    settings.VAR_DIR = tmp_path


def run(*args: str) -> list[str]:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().strip().splitlines()


def test_create_api_key_creates_account_and_integration_and_prints_the_key_last():
    lines = run("create_api_key", "acme", "webshop", "--scope", "imports", "--scope", "admin")
    raw_key = lines[-1]
    api_key = selectors.api_key_for_credentials(
        account_identifier="acme", integration_identifier="webshop", raw_key=raw_key
    )
    assert api_key is not None
    assert api_key.scopes == ["admin", "imports"]
    assert Account.objects.filter(identifier="acme").exists()
    assert Integration.objects.filter(identifier="webshop", account__identifier="acme").exists()


def test_create_api_key_reuses_an_existing_account_and_defaults_to_the_imports_scope():
    run("create_api_key", "acme", "webshop")
    lines = run("create_api_key", "acme", "webshop")
    assert Account.objects.count() == 1
    assert ApiKey.objects.count() == 2
    assert ApiKey.objects.get(prefix=lines[-1][3:11]).scopes == ["imports"]


def test_create_api_key_refuses_an_unknown_scope():
    with pytest.raises(CommandError):
        run("create_api_key", "acme", "webshop", "--scope", "root")


def test_bootstrap_demo_creates_the_demo_tenant_and_a_working_key_and_curl():
    lines = run("bootstrap_demo")
    curl = next(line for line in lines if line.startswith("curl "))
    assert "stock_location=shop-1" in curl and "account=demo" in curl and "integration=webshop" in curl
    raw_key = next(line for line in lines if line.startswith("rk_"))
    assert raw_key in curl
    assert (
        selectors.api_key_for_credentials(account_identifier="demo", integration_identifier="webshop", raw_key=raw_key)
        is not None
    )
    assert Market.objects.get(account__identifier="demo").currency == "DKK"
    assert StockLocation.objects.get(account__identifier="demo").identifier == "shop-1"
    assert Register.objects.get(account__identifier="demo").stock_location.identifier == "shop-1"
    assert list(Campaign.objects.filter(account__identifier="demo").values_list("campaign_id", flat=True)) == [
        "coffee-20"
    ]
    assert list(ProductRule.objects.filter(account__identifier="demo").values_list("rule_id", flat=True)) == ["pant-a"]
    assert lines[0].startswith("====") and lines[-1].startswith("===="), "the last lines are boxed"
    assert lines[-2] == curl


def test_bootstrap_demo_keeps_its_key_between_runs_in_var_and_mints_one_when_it_stops_working(tmp_path):
    first = next(line for line in run("bootstrap_demo") if line.startswith("rk_"))
    assert (tmp_path / "demo-api-key").read_text().strip() == first
    assert (tmp_path / "demo-api-key").stat().st_mode & 0o077 == 0, "the key file is readable by its owner only"
    again = next(line for line in run("bootstrap_demo") if line.startswith("rk_"))
    assert again == first and ApiKey.objects.filter(account__identifier="demo").count() == 1
    ApiKey.objects.filter(account__identifier="demo").update(revoked_at=timezone.now())
    minted = next(line for line in run("bootstrap_demo") if line.startswith("rk_"))
    assert minted != first and (tmp_path / "demo-api-key").read_text().strip() == minted


def test_bootstrap_demo_runs_again_without_duplicating_the_tenant():
    run("bootstrap_demo")
    run("bootstrap_demo")
    assert Account.objects.filter(identifier="demo").count() == 1
    assert StockLocation.objects.filter(account__identifier="demo").count() == 1
    assert Register.objects.filter(account__identifier="demo").count() == 1
    assert Campaign.objects.filter(account__identifier="demo").count() == 1


def test_bootstrap_demo_creates_the_accounts_back_office_owner_and_prints_its_sign_in_beside_the_admins(settings):
    settings.RUN_BIND = "127.0.0.1:8000"
    lines = run("bootstrap_demo")
    owner = Membership.objects.select_related("user").get(account__identifier="demo")
    assert (owner.user.username, owner.user.email, owner.role) == ("owner@example.com", "owner@example.com", "owner")
    assert owner.user.check_password("owner") and not owner.user.is_staff
    back_office = next(i for i, line in enumerate(lines) if line.startswith("Back-office: "))
    assert lines[back_office] == (
        "Back-office: http://127.0.0.1:8000/backoffice/ e-mail owner@example.com, password owner "
        "(change it before going live)"
    )
    assert lines[back_office + 1].startswith("Admin: http://127.0.0.1:8000/admin/ user admin, password admin")
    owner.user.set_password("changed-Owner-pw-1")
    owner.user.save()
    again = run("bootstrap_demo")
    assert "Back-office: http://127.0.0.1:8000/backoffice/ e-mail owner@example.com" in again
    owner.user.refresh_from_db()
    assert owner.user.check_password("changed-Owner-pw-1"), "a later run keeps the owner's own password"
    assert Membership.objects.filter(account__identifier="demo").count() == 1
