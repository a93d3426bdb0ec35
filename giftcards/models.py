"""The service's own record of gift cards and customer-account payments made through runtime integrations.

Spec: Gift card entity, Gift card status, Customer account payment entity, Errors 3. The integrator is the
source of truth for a card's balance; this record is what the service last learned from it, so that it can
refuse impossible moves before asking (paying with an inactive, used or expired card, in another currency, or
more than the balance) and keep a trail of every move. A row changes only after the integrator confirmed.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from accounts.models import AccountOwned
from core.jsonenc import DecimalJSONField


def money(**kwargs: object) -> models.DecimalField:
    return models.DecimalField(max_digits=20, decimal_places=6, **kwargs)  # type: ignore[arg-type]


def identifier_reserved(name: str, *, of: Q | None = None) -> models.UniqueConstraint:
    """The POS's idempotency key (``identifier``) of a payment is taken while the payment is pending or done; a
    failed one frees it for a retry. ``of`` narrows the rows that reserve one (a gift card's pays only)."""
    condition = ~Q(identifier="") & (Q(ok__isnull=True) | Q(ok=True))
    return models.UniqueConstraint(
        fields=["account", "identifier"], condition=condition if of is None else of & condition, name=name
    )


class GiftCardStatus(models.IntegerChoices):
    """Spec: Gift card status."""

    CREATED = 1, "created (inactive)"
    ACTIVE = 2, "active"
    USED = 3, "used"


class GiftCard(AccountOwned):
    """One gift card as the integrator last described it (spec: Gift card entity)."""

    card_id = models.CharField(max_length=255, help_text="The integrator's internal `id` of the card.")
    code = models.CharField(max_length=255, help_text="Customer-displayed identifier, used for bar codes.")
    currency_code = models.CharField(max_length=3)
    amount = money(help_text="Currently available amount, as last answered by the integrator.")
    status = models.PositiveSmallIntegerField(choices=GiftCardStatus.choices)
    create_date = models.DateTimeField()
    expiry_date = models.DateTimeField()
    external_giftcard = DecimalJSONField(null=True, blank=True, help_text="Integrator-private data, kept as sent.")
    sale_id = models.CharField(max_length=255, blank=True, help_text="The sale that sold the card (once activated).")
    shop_id = models.CharField(max_length=64, blank=True, help_text="The shop that created the card, if given.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["account", "code"], name="giftcard_code_unique_per_account"),
            models.CheckConstraint(condition=Q(status__in=[1, 2, 3]), name="giftcard_status_known"),
            models.CheckConstraint(condition=Q(amount__gte=0), name="giftcard_amount_not_negative"),
        ]

    def __str__(self) -> str:
        return self.code


class GiftCardMove(AccountOwned):
    """One confirmed gift card action, or a pay in flight (``ok`` null) reserving its ``identifier``.

    A pay is written as pending before the integrator is asked, so that a repeated pay with the same
    ``identifier`` (a POS retry) can never reach the integrator twice; it is completed (``ok`` true, amounts
    after) or marked failed (``ok`` false, which frees the identifier) once the integrator has answered.
    """

    class Action(models.TextChoices):
        CREATE = "create"
        ACTIVATE = "activate"
        READ = "read"
        PAY = "pay"

    gift_card = models.ForeignKey(GiftCard, on_delete=models.PROTECT, related_name="moves", null=True, blank=True)
    code = models.CharField(max_length=255)
    action = models.CharField(max_length=8, choices=Action.choices)
    identifier = models.CharField(max_length=255, blank=True, help_text="The POS's idempotency key of a pay.")
    ok = models.BooleanField(null=True, help_text="Null while the integrator is being asked.")
    requested_amount = money(null=True, blank=True)
    currency_code = models.CharField(max_length=3, blank=True)
    amount_before = money(null=True, blank=True)
    amount_after = money(null=True, blank=True)
    status_before = models.PositiveSmallIntegerField(choices=GiftCardStatus.choices, null=True, blank=True)
    status_after = models.PositiveSmallIntegerField(choices=GiftCardStatus.choices, null=True, blank=True)
    integrator_status = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The status the integrator answered (3 is also set locally at 0)."
    )
    sale_id = models.CharField(max_length=255, blank=True)
    shop_id = models.CharField(max_length=64, blank=True)
    answer = DecimalJSONField(null=True, blank=True, help_text="The integrator's answer (spec: Gift card entity).")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [identifier_reserved("giftcard_pay_identifier_unique", of=Q(action="pay"))]
        indexes = [models.Index(fields=["account", "code"])]

    def __str__(self) -> str:
        return f"{self.action} {self.code}"


class CustomerAccountPayment(AccountOwned):
    """One customer-account payment asked of the integrator (spec: Customer account payment entity, Errors 3).

    ``ok`` is null while the integrator is being asked, true when it answered 200 with the amount it used
    (``used_amount``, which may differ from ``requested_amount``), false when the payment failed.
    """

    customer_id = models.CharField(max_length=255)
    identifier = models.CharField(max_length=255, blank=True, help_text="The POS's idempotency key.")
    payment_type = models.CharField(max_length=64)
    currency_code = models.CharField(max_length=3)
    requested_amount = money()
    purchase_amount = money(null=True, blank=True)
    used_amount = money(null=True, blank=True)
    ok = models.BooleanField(null=True, help_text="Null while the integrator is being asked.")
    shop_id = models.CharField(max_length=64, blank=True)
    answer = DecimalJSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        constraints = [identifier_reserved("customer_account_payment_identifier_unique")]
        indexes = [models.Index(fields=["account", "customer_id"])]

    def __str__(self) -> str:
        return f"{self.customer_id} {self.requested_amount} {self.currency_code}"

    @property
    def differs(self) -> bool:
        return self.used_amount is not None and self.used_amount != self.requested_amount
