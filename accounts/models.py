"""The tenant and its shop structure: account, markets, stock locations, registers, cashiers,
integrations and the API keys that authenticate them."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils.translation import gettext_lazy as _

from accounts.money import is_currency_code
from accounts.validation import validate_taxes
from core.jsonenc import DecimalJSONField
from core.timezones import is_time_zone

identifier_validator = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$",
    "Use letters, digits and . _ : - (starting with a letter or digit).",
)


class Account(models.Model):
    """A tenant. Everything else belongs to exactly one account."""

    identifier = models.CharField(max_length=64, unique=True, validators=[identifier_validator])
    name = models.CharField(max_length=200, blank=True)
    timezone = models.CharField(
        max_length=64, default="UTC", help_text="IANA time zone, e.g. Europe/Copenhagen (daily exports run in it)."
    )
    two_factor_required = models.BooleanField(
        default=False,
        help_text="Every member signs in to the back-office with a code from an authenticator app (set by an owner).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["identifier"]

    def __str__(self) -> str:
        return self.identifier

    def clean(self) -> None:
        if not is_time_zone(self.timezone):
            raise ValidationError({"timezone": f"'{self.timezone}' is not an IANA time zone."})


class AccountOwned(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")

    class Meta:
        abstract = True


class Identified(AccountOwned):
    """An object of the account named by an ``identifier`` unique within the account: what the API, the POS and
    the imports call it by (``dk``, ``shop-1``; a model whose identifier is the POS's own, any string, overrides
    the field)."""

    identifier = models.CharField(max_length=64, validators=[identifier_validator])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["identifier"]
        constraints = [models.UniqueConstraint(fields=["account", "identifier"], name="%(class)s_unique_per_account")]

    def __str__(self) -> str:
        return self.identifier


class Market(Identified):
    """A market (e.g. ``dk``): a currency and the default taxes of the shops in it."""

    identifier = models.CharField(max_length=32, validators=[identifier_validator])
    name = models.CharField(max_length=200, blank=True)
    currency = models.CharField(max_length=3, help_text="ISO 4217 code, e.g. DKK.")
    default_taxes = DecimalJSONField(
        default=list, blank=True, help_text='List of {"name", "rate", "type": "vat"|"sales_tax"}.'
    )

    def clean(self) -> None:
        if not is_currency_code(self.currency):
            raise ValidationError({"currency": f"'{self.currency}' is not an ISO 4217 currency code."})
        problems = validate_taxes(self.default_taxes)
        if problems:
            raise ValidationError({"default_taxes": "; ".join(problems)})


class StockLocation(Identified):
    """A shop or warehouse: where stock lives and where orders are received and placed."""

    class Kind(models.TextChoices):
        SHOP = "shop", "Shop"
        WAREHOUSE = "warehouse", "Warehouse"

    name = models.CharField(max_length=200, blank=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.SHOP)
    market = models.ForeignKey(Market, on_delete=models.PROTECT, related_name="stock_locations")
    street = models.CharField(max_length=200, blank=True)
    city = models.CharField(max_length=100, blank=True)
    zip = models.CharField(max_length=20, blank=True)
    country_code = models.CharField(max_length=2, blank=True)
    vat_number = models.CharField(max_length=40, blank=True)

    class Meta(Identified.Meta):
        # Its name kept: "%(class)s" would make it stocklocation_unique_per_account (a migration).
        constraints = [
            models.UniqueConstraint(fields=["account", "identifier"], name="stock_location_unique_per_account")
        ]

    def clean(self) -> None:
        if self.market_id and self.account_id and self.market.account_id != self.account_id:
            raise ValidationError({"market": "The market belongs to another account."})


# A pseudo payment type (spec: Sale payments): a line in the payment totals, never a reconciliation.
CASH_ROUNDING = "cash.rounding"
MAX_PAYMENT_TYPES = 50


def default_payment_types() -> list[dict[str, object]]:
    """Cash (counted at close) and external card terminals (settled by the acquirer, not counted)."""
    return [
        {"identifier": "cash", "should_be_reconciled": True},
        {"identifier": "card.external", "should_be_reconciled": False},
    ]


def validate_payment_types(value: object) -> list[str]:
    """Problems of a register's ``payment_types``: a list of ``{"identifier", "should_be_reconciled"}``
    with unique identifiers; shared by ``Register.clean`` and the register API's serializer."""
    if not isinstance(value, list):
        return ["Must be a list of {identifier, should_be_reconciled}."]
    if len(value) > MAX_PAYMENT_TYPES:
        return [f"At most {MAX_PAYMENT_TYPES} payment types."]
    problems: list[str] = []
    seen: set[str] = set()
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            problems.append(f"[{i}]: must be an object {{identifier, should_be_reconciled}}.")
            continue
        identifier = item.get("identifier")
        unknown = sorted(set(item) - {"identifier", "should_be_reconciled"})
        if unknown:
            problems.append(f"[{i}]: unknown key(s): {', '.join(str(k)[:50] for k in unknown)}.")
        if not isinstance(identifier, str) or not identifier.strip() or len(identifier) > 255:
            problems.append(f"[{i}].identifier: must be a non-blank string of at most 255 characters.")
        elif identifier == CASH_ROUNDING:
            problems.append(f"[{i}].identifier: {CASH_ROUNDING} is a pseudo type and is never reconciled.")
        elif identifier in seen:
            problems.append(f"[{i}].identifier: '{identifier}' is listed twice.")
        else:
            seen.add(identifier)
        if not isinstance(item.get("should_be_reconciled"), bool):
            problems.append(f"[{i}].should_be_reconciled: must be true or false.")
    return problems


class Register(Identified):
    name = models.CharField(max_length=200, blank=True)
    stock_location = models.ForeignKey(StockLocation, on_delete=models.PROTECT, related_name="registers")
    payment_types = DecimalJSONField(
        default=default_payment_types,
        blank=True,
        help_text="Payment types configured on the register (spec: Register close statement, reconciliations): "
        '[{"identifier": "cash", "should_be_reconciled": true}, ...].',
    )

    def clean(self) -> None:
        if self.stock_location_id and self.account_id and self.stock_location.account_id != self.account_id:
            raise ValidationError({"stock_location": "The stock location belongs to another account."})
        problems = validate_payment_types(self.payment_types)
        if problems:
            raise ValidationError({"payment_types": "; ".join(problems)})


class Cashier(Identified):
    """A store associate (spec: Cashier)."""

    identifier = models.CharField(max_length=64)  # the spec allows any string (the API refuses "/")
    display_name = models.CharField(max_length=64, help_text="Usually initials.")
    full_name = models.CharField(max_length=200, blank=True)
    image_url = models.URLField(blank=True)

    def __str__(self) -> str:
        return f"{self.display_name} ({self.identifier})"


class Integration(Identified):
    """An integration of the account: an import queue with its own import log and API keys.

    Import requests name it in the ``integration`` query parameter.
    """

    name = models.CharField(max_length=200, blank=True)


class Scope(models.TextChoices):
    IMPORTS = "imports", _("Imports (/imports/...)")
    POS = "pos", _("POS (/api/v1/pos/...)")
    ADMIN = "admin", _("Back-office (/api/v1/...)")


class ApiKey(AccountOwned):
    """An API key. Only a SHA-256 hash of the key is stored; the key itself is shown once."""

    integration = models.ForeignKey(Integration, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200, blank=True)
    prefix = models.CharField(max_length=16, db_index=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({', '.join(self.scopes)})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes


class AuthFailureWindow(models.Model):
    """The failed API authentications of one subject (a client address or a key prefix) in its current window.

    Bookkeeping of ``accounts.auth_failures``, not an account's data: a failure happens before any account is
    known. One row per subject, counted up atomically, pruned once its window is over.
    """

    subject = models.CharField(max_length=80, unique=True)
    failures = models.PositiveIntegerField()
    window_ends_at = models.DateTimeField(db_index=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(failures__gte=1), name="auth_failures_at_least_one")]

    def __str__(self) -> str:
        return f"{self.subject}: {self.failures} until {self.window_ends_at:%Y-%m-%d %H:%M:%S}"


class Role(models.TextChoices):
    """A member's role in one account; what each may do is ``accounts.policy.POLICY``."""

    OWNER = "owner", _("Owner")
    MANAGER = "manager", _("Manager")
    VIEWER = "viewer", _("Viewer")


class Membership(AccountOwned):
    """A person (a Django user whose username is their e-mail address) in one account, with one role there. A
    person may be a member of several accounts, with a role in each."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["account", "user"]
        constraints = [models.UniqueConstraint(fields=["account", "user"], name="membership_one_per_account")]

    def __str__(self) -> str:
        return f"{self.user} in {self.account}: {self.role}"


class NotificationKind(models.TextChoices):
    """What a member may be told by e-mail (``ops.notifications`` sends them)."""

    QUEUE_DISABLED = "queue_disabled", _("An export queue was disabled")
    BREAKER_OPEN = "breaker_open", _("A destination has been failing for a while")
    DAILY_DIGEST = "daily_digest", _("The daily digest")


# What a member is told while they have not chosen: owners and managers, who can act on it, get the problems;
# nobody gets the digest until they ask for it.
NOTIFICATION_DEFAULTS: dict[str, frozenset[str]] = {
    "owner": frozenset({NotificationKind.QUEUE_DISABLED, NotificationKind.BREAKER_OPEN}),
    "manager": frozenset({NotificationKind.QUEUE_DISABLED, NotificationKind.BREAKER_OPEN}),
    "viewer": frozenset(),
}


class NotificationPreference(AccountOwned):
    """A member's own choice of what they are told (one boolean per ``NotificationKind``). A member without a
    row gets ``NOTIFICATION_DEFAULTS`` for their role; the row is written when they choose."""

    membership = models.OneToOneField(Membership, on_delete=models.CASCADE, related_name="notification_preference")
    queue_disabled = models.BooleanField()
    breaker_open = models.BooleanField()
    daily_digest = models.BooleanField()
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"notifications of {self.membership}"

    def chosen(self) -> frozenset[str]:
        return frozenset(kind for kind in NotificationKind.values if getattr(self, kind))


class PersonPreference(models.Model):
    """A person's own choices across all their accounts: the language of the back-office (empty: the browser's)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference")
    language = models.CharField(max_length=8, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"preferences of {self.user}"


class ActorKind(models.TextChoices):
    PERSON = "person"
    API_KEY = "api_key"
    SYSTEM = "system"


class AuditEntryQuerySet(models.QuerySet["AuditEntry"]):
    def update(self, **kwargs: object) -> int:
        raise TypeError("audit entries are never changed")


class AuditEntry(AccountOwned):
    """One change made in an account (``accounts.audit``): when, who (a person, an API key with its integration, or
    the system), which object, which fields from what to what, secrets masked. Written once, never changed: no
    path updates or deletes an entry; they go only with their account."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="audit_entries")
    at = models.DateTimeField(auto_now_add=True)
    actor_kind = models.CharField(max_length=16, choices=ActorKind.choices)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    actor_api_key = models.ForeignKey("ApiKey", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    actor = models.CharField(max_length=200, help_text="The actor as shown: an e-mail, a key's prefix, 'system'.")
    action = models.CharField(max_length=32)
    target_type = models.CharField(max_length=64)
    target_id = models.CharField(max_length=100)
    target = models.CharField(max_length=200, blank=True, help_text="The object as shown when it changed.")
    changes = models.JSONField(default=dict, blank=True)

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"
        indexes = [
            models.Index(fields=["account", "-at", "-id"], name="audit_account_at"),
            models.Index(fields=["account", "target_type", "target_id", "-at"], name="audit_account_target"),
            models.Index(fields=["account", "actor", "-at"], name="audit_account_actor"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.target_type} {self.target_id}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise TypeError("audit entries are never changed")
        super().save(*args, **kwargs)  # type: ignore[arg-type]
