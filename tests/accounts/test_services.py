"""``unique_in_account``: a value unique per account is refused with an error naming its field, before the
save and when a concurrent insert gets in between the check and the save."""

from __future__ import annotations

import pytest

from accounts.models import Cashier
from accounts.services import unique_in_account
from core.errors import ServiceError
from tests.factories import AccountFactory, CashierFactory


@pytest.mark.django_db
def test_a_value_another_row_of_the_account_has_is_refused_before_the_save() -> None:
    account = AccountFactory()
    CashierFactory(account=account, identifier="c-1")
    saved = []
    with (
        pytest.raises(ServiceError) as caught,
        unique_in_account(
            account=account,
            instance=Cashier(account=account, identifier="c-1"),
            field="identifier",
            message="already there",
        ),
    ):
        saved.append(True)
    assert (caught.value.message, caught.value.field, caught.value.code) == (
        "already there",
        "identifier",
        "duplicate",
    ) and not saved


@pytest.mark.django_db
def test_the_same_value_in_another_account_is_no_duplicate() -> None:
    CashierFactory(identifier="c-1")
    account = AccountFactory()
    cashier = Cashier(account=account, identifier="c-1", display_name="AB")
    with unique_in_account(account=account, instance=cashier, field="identifier", message="already there"):
        cashier.save()
    assert Cashier.objects.filter(identifier="c-1").count() == 2


@pytest.mark.django_db
def test_a_concurrent_insert_between_the_check_and_the_save_is_the_same_duplicate() -> None:
    account = AccountFactory()
    cashier = Cashier(account=account, identifier="c-1", display_name="AB")
    unique = unique_in_account(account=account, instance=cashier, field="identifier", message="already there")
    with pytest.raises(ServiceError) as caught, unique:
        CashierFactory(account=account, identifier="c-1")  # another request's insert, after the check
        cashier.save()
    assert (caught.value.message, caught.value.field, caught.value.code) == ("already there", "identifier", "duplicate")
    assert not Cashier.objects.filter(account=account).exists()  # the failed save rolled back what it held
