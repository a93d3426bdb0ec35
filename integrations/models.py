"""Runtime integrations: how the service calls an integrator's server while an app is in use, and the call log
(spec: Endpoints B, Runtime integrations)."""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from accounts.models import AccountOwned
from core.jsonenc import DecimalJSONField, OrderedJSONField
from core.secrets import URL_PATH, mask_url
from integrations.kinds import KINDS

KIND_CHOICES = [(kind, kind.replace("_", " ")) for kind in KINDS]
DEFAULT_TIMEOUT = Decimal("5")
MIN_TIMEOUT = Decimal("0.1")
MAX_TIMEOUT = Decimal("30")


class Method(models.TextChoices):
    GET = "GET"
    POST = "POST"


class RuntimeIntegration(AccountOwned):
    """One per account and kind: the request templates, timeout and transform of the integrator's endpoint."""

    kind = models.CharField(max_length=32, choices=KIND_CHOICES)
    enabled = models.BooleanField(default=True)
    method = models.CharField(max_length=4, choices=Method.choices, default=Method.GET)
    url = models.CharField(max_length=2000, help_text="URL template, e.g. https://erp.example.com/cards/{code}")
    # JSON text on every database: query parameters, headers and the body's keys go out to the integrator in the
    # order configured, where PostgreSQL's jsonb would reorder them.
    query = OrderedJSONField(default=dict, blank=True, help_text="Query parameters: name -> template.")
    headers = OrderedJSONField(default=dict, blank=True, help_text="Headers: name -> value (template).")
    body = OrderedJSONField(null=True, blank=True, help_text="JSON body template, or null for no body.")
    secret_fields = models.JSONField(
        default=list,
        blank=True,
        help_text='Places whose values are secret (masked when read, kept out of logs): "query.<name>", '
        '"body.<key>.<key>", "url.path". Header values (but Accept, Content-Type, User-Agent...) and the URL\'s '
        "own query values always are. Left empty on a new integration: names that look secret are suggested.",
    )
    timeout = models.DecimalField(
        max_digits=4,
        decimal_places=1,
        default=DEFAULT_TIMEOUT,
        validators=[MinValueValidator(MIN_TIMEOUT), MaxValueValidator(MAX_TIMEOUT)],
        help_text="Seconds (0.1 to 30) for connecting and for the answer.",
    )
    transform = models.TextField(blank=True, help_text="JMESPath expression applied to the JSON answer, or blank.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind"]
        constraints = [models.UniqueConstraint(fields=["account", "kind"], name="runtime_integration_kind_unique")]

    def __str__(self) -> str:
        return f"{self.kind} ({self.method} {self.masked_url})"

    @property
    def masked_url(self) -> str:
        """The URL as it may be shown (titles, lists): its secrets masked."""
        declared = self.secret_fields if isinstance(self.secret_fields, list) else []
        return mask_url(self.url, path_secret=URL_PATH in declared, placeholders=True)


class IntegrationCall(AccountOwned):
    """One call to an integrator (the call log). Never a secret, never a body."""

    integration = models.ForeignKey(RuntimeIntegration, null=True, on_delete=models.SET_NULL, related_name="+")
    kind = models.CharField(max_length=32, choices=KIND_CHOICES)
    ok = models.BooleanField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField()
    error = models.TextField(blank=True)
    # When the call ended, stamped by the call log (``integrations.call_log``), which writes the row a moment later.
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["account", "created_at"], name="integration_call_account_time"),
            # /metrics and the dashboard read every account's recent calls (docs/notes/history.md).
            models.Index(fields=["created_at"], name="integration_call_time"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {'ok' if self.ok else 'failed'} {self.status_code or ''}"


class CustomerDiscountsAnswer(AccountOwned):
    """The last answer of the account's ``customer_discounts`` integration for one customer, market and currency:
    basket changes within ``POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS`` are priced with it instead of
    asking the integrator again. In the database so that every web worker on every machine shares it and the
    embedded setup needs no cache server. Valid only for the configuration that gave it (``integration``, saved
    at ``integration_updated_at``): a changed or disabled configuration is asked afresh."""

    integration = models.ForeignKey(RuntimeIntegration, on_delete=models.CASCADE, related_name="+")
    integration_updated_at = models.DateTimeField()
    customer_id = models.CharField(max_length=255)
    market = models.CharField(max_length=32)
    currency_code = models.CharField(max_length=3)
    data = DecimalJSONField(null=True, help_text="The integrator's answer after the transform, as it answered.")
    fetched_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "customer_id", "market", "currency_code"], name="customer_discounts_answer_unique"
            )
        ]
        indexes = [models.Index(fields=["fetched_at"], name="customer_discounts_fetched")]

    def __str__(self) -> str:
        return f"discounts of {self.customer_id} in {self.market} ({self.currency_code})"
