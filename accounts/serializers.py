"""Serializers of the back-office REST API for the shop structure and API keys.

Input serializers are plain ``Serializer``s with limits (they only parse; references such as ``market``
stay identifiers and are resolved within the caller's account by the services). Output serializers
are ``ModelSerializer``s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.validators import RegexValidator, URLValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from accounts.models import (
    ActorKind,
    ApiKey,
    AuditEntry,
    Cashier,
    Integration,
    Market,
    Register,
    Scope,
    StockLocation,
    default_payment_types,
    identifier_validator,
    validate_payment_types,
)
from accounts.money import is_currency_code
from accounts.validation import TAX_DESCRIPTIONS, TAX_TYPES, validate_taxes
from core.serializers import JSONField, read_only_meta

# --- Shared ------------------------------------------------------------------------------------------


class CheckedJSONField(JSONField):
    """A JSON value checked by the field's ``check`` (the problems found, none when it is fine): the same function
    as the model's ``clean``, so the API and the admin refuse the same values."""

    check: Callable[[Any], list[str]]

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        problems = type(self).check(value)
        if problems:
            raise serializers.ValidationError(problems)
        return value


class TaxSerializer(serializers.Serializer):
    """Spec: a tax `{name, rate, type}` of a product or of a market's defaults."""

    name = serializers.CharField(help_text=TAX_DESCRIPTIONS["name"])
    rate = serializers.FloatField(min_value=0, max_value=1, help_text=TAX_DESCRIPTIONS["rate"])
    type = serializers.ChoiceField(choices=[(t, t) for t in TAX_TYPES], help_text=TAX_DESCRIPTIONS["type"])

    class Meta:
        ref_name = "Tax"


@extend_schema_field(TaxSerializer(many=True))
class TaxesField(CheckedJSONField):
    """A list of taxes, checked by ``accounts.validation.validate_taxes`` (shared with ``Market.clean``)."""

    check = staticmethod(validate_taxes)


def _optional_text(max_length: int, **kwargs: Any) -> serializers.CharField:
    # A default (not required=False) so that PUT resets an omitted field; PATCH skips defaults.
    return serializers.CharField(max_length=max_length, allow_blank=True, default="", **kwargs)


# --- Markets -----------------------------------------------------------------------------------------


IDENTIFIER = "Its identifier, unique in the account: letters, digits and `. _ : -`, starting with a letter or digit."
NAME = "Its name, for people (may be empty)."


def _identifier(max_length: int, more: str = "") -> serializers.CharField:
    """The identifier of an object of the account, as a request gives it."""
    return serializers.CharField(
        max_length=max_length,
        validators=[identifier_validator],
        help_text=f"{IDENTIFIER} At most {max_length} characters{more}.",
    )


def _identified(max_length: int, more: str, **descriptions: str) -> dict[str, str]:
    """The output descriptions of an object with an identifier and a name, then the other ``descriptions``."""
    return {"identifier": f"{IDENTIFIER} At most {max_length} characters{more}.", "name": NAME, **descriptions}


class MarketInputSerializer(serializers.Serializer):
    identifier = _identifier(32)
    name = _optional_text(200, help_text=f"{NAME} At most 200 characters.")
    currency = serializers.CharField(max_length=3, help_text="ISO 4217 code, e.g. DKK.")
    default_taxes = TaxesField(  # type: ignore[arg-type]  # the stubs expect a mapping
        default=list,
        help_text="The taxes of a product or expense that names none of its own (spec: Product); default none.",
    )

    def validate_currency(self, value: str) -> str:
        if not is_currency_code(value):
            raise serializers.ValidationError(f"'{value}' is not an ISO 4217 currency code.")
        return value

    class Meta:
        # Same name as the output: the schema shows MarketRequest / PatchedMarketRequest.
        ref_name = "Market"


class MarketOutputSerializer(serializers.ModelSerializer):
    default_taxes = TaxesField(
        read_only=True, help_text="The taxes of a product or expense that names none of its own (spec: Product)."
    )

    Meta = read_only_meta(
        Market,
        ["identifier", "name", "currency", "default_taxes", "created_at"],
        descriptions=_identified(32, " (`dk`)"),
    )


# --- Stock locations ---------------------------------------------------------------------------------


class StockLocationInputSerializer(serializers.Serializer):
    identifier = _identifier(64)
    name = _optional_text(200, help_text=f"{NAME} At most 200 characters.")
    kind = serializers.ChoiceField(
        choices=StockLocation.Kind.choices,
        default=StockLocation.Kind.SHOP,
        help_text="What the place is: a shop with registers (the default) or a warehouse.",
    )
    market = serializers.CharField(max_length=32, help_text="Identifier of a market of the account.")
    street = _optional_text(200, help_text="Street and number, at most 200 characters (may be empty).")
    city = _optional_text(100, help_text="City, at most 100 characters (may be empty).")
    zip = _optional_text(20, help_text="Postal code, at most 20 characters (may be empty).")
    country_code = _optional_text(
        2,
        # Empty (the default) is no country: the published pattern says so (DRF does not run it on "").
        validators=[RegexValidator(r"^([A-Za-z]{2})?$", "Use an ISO 3166-1 alpha-2 code, e.g. DK.")],
        help_text="ISO 3166-1 alpha-2, e.g. DK.",
    )
    vat_number = _optional_text(40, help_text="The business's VAT number, at most 40 characters (may be empty).")

    def validate_country_code(self, value: str) -> str:
        return value.upper()

    class Meta:
        # Same name as the output: the schema shows StockLocationRequest / PatchedStockLocationRequest.
        ref_name = "StockLocation"


class StockLocationOutputSerializer(serializers.ModelSerializer):
    market: serializers.SlugRelatedField[Market] = serializers.SlugRelatedField(
        slug_field="identifier", read_only=True, help_text="The identifier of the market it sells in."
    )

    Meta = read_only_meta(
        StockLocation,
        ["identifier", "name", "kind", "market", "street", "city", "zip", "country_code", "vat_number", "created_at"],
        descriptions=_identified(
            64,
            " (`shop-1`)",
            kind="`shop` (registers sell there) or `warehouse`.",
            street="The street address, as receipts print it (may be empty).",
            city="The city (may be empty).",
            zip="The postal code (may be empty).",
            country_code="ISO 3166-1 alpha-2, upper case (may be empty).",
            vat_number="The VAT number receipts and statements print (may be empty).",
        ),
    )


# --- Registers ---------------------------------------------------------------------------------------


class PaymentTypeSerializer(serializers.Serializer):
    identifier = serializers.CharField(help_text="e.g. cash, card.external, giftcard.integration.")
    should_be_reconciled = serializers.BooleanField(help_text="Counted at close (cash) or taken as recorded.")

    class Meta:
        ref_name = "PaymentType"


@extend_schema_field(PaymentTypeSerializer(many=True))
class PaymentTypesField(CheckedJSONField):
    """A register's payment types, checked by ``accounts.models.validate_payment_types`` (shared with
    ``Register.clean``)."""

    check = staticmethod(validate_payment_types)


class RegisterInputSerializer(serializers.Serializer):
    identifier = _identifier(64, "; the `register_id` of the POS API")
    name = _optional_text(200, help_text=f"{NAME} At most 200 characters.")
    stock_location = serializers.CharField(max_length=64, help_text="Identifier of a stock location of the account.")
    payment_types = PaymentTypesField(
        default=default_payment_types,  # type: ignore[arg-type]  # the stubs expect a mapping
        help_text="Defaults to cash (reconciled) and card.external (not reconciled).",
    )

    class Meta:
        # Same name as the output: the schema shows RegisterRequest / PatchedRegisterRequest.
        ref_name = "Register"


class RegisterOutputSerializer(serializers.ModelSerializer):
    stock_location: serializers.SlugRelatedField[StockLocation] = serializers.SlugRelatedField(
        slug_field="identifier", read_only=True, help_text="The identifier of the shop the register is in."
    )
    payment_types = PaymentTypesField(
        read_only=True, help_text="The payment types the register takes; each is reconciled at close or not."
    )

    Meta = read_only_meta(
        Register,
        ["identifier", "name", "stock_location", "payment_types", "created_at"],
        descriptions=_identified(64, " (`reg-1`)"),
    )


# --- Cashiers ----------------------------------------------------------------------------------------


class CashierInputSerializer(serializers.Serializer):
    # The spec allows any string; only "/" is refused because the identifier is a URL path segment.
    identifier = serializers.CharField(
        max_length=64,
        validators=[RegexValidator(r"^[^/]+$", "The identifier cannot contain '/'.")],
        help_text="Its identifier, unique in the account: any text of at most 64 characters without `/`.",
    )
    display_name = serializers.CharField(max_length=64, help_text="Usually initials.")
    full_name = _optional_text(200, help_text="The store associate's full name, at most 200 characters (may be empty).")
    image_url = serializers.URLField(
        max_length=200,
        allow_blank=True,
        default="",
        validators=[URLValidator(schemes=["https"], message="Use an https URL.")],
        help_text="https URL of an image of the store associate.",
    )

    class Meta:
        # Same name as the output: the schema shows CashierRequest / PatchedCashierRequest.
        ref_name = "Cashier"


class CashierOutputSerializer(serializers.ModelSerializer):
    # "" when there is no image: a URLField would document format "uri", which "" does not satisfy.
    image_url = serializers.CharField(read_only=True, help_text="https URL of an image, or empty.")

    Meta = read_only_meta(
        Cashier,
        ["identifier", "display_name", "full_name", "image_url", "created_at"],
        descriptions={
            "identifier": "Its identifier, unique in the account: any text but `/`, at most 64 characters.",
            "full_name": "The store associate's full name (may be empty).",
        },
    )


# --- Integrations ------------------------------------------------------------------------------------


class IntegrationInputSerializer(serializers.Serializer):
    identifier = _identifier(64, "; the `integration` of every request's credentials")
    name = _optional_text(200, help_text=f"{NAME} At most 200 characters.")

    class Meta:
        # Same name as the output: the schema shows IntegrationRequest / PatchedIntegrationRequest.
        ref_name = "Integration"


class IntegrationOutputSerializer(serializers.ModelSerializer):
    Meta = read_only_meta(
        Integration,
        ["identifier", "name", "created_at"],
        descriptions=_identified(64, "; the `integration` of every request's credentials"),
    )


# --- API keys ----------------------------------------------------------------------------------------


SCOPES = "What the key may call: `imports` (/imports/...), `pos` (/api/v1/pos/...), `admin` (the rest of /api/v1/)."


class ApiKeyInputSerializer(serializers.Serializer):
    integration = serializers.CharField(max_length=64, help_text="Identifier of an integration of the account.")
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=Scope.choices),
        allow_empty=False,
        max_length=len(Scope.values),
        help_text=SCOPES + " At least one.",
    )
    name = _optional_text(200, help_text="What the key is for, for people: at most 200 characters (may be empty).")

    class Meta:
        # Same name as the output: the schema shows ApiKeyRequest / PatchedApiKeyRequest.
        ref_name = "ApiKey"


API_KEY_FIELDS = ["id", "prefix", "name", "scopes", "integration", "created_at", "last_used_at", "revoked_at", "active"]


API_KEY_DESCRIPTIONS = {
    "id": "The key's id (its URL: `api-keys/{id}/`).",
    "prefix": "The key's first characters: what tells keys apart in lists and logs (the key itself is never shown).",
    "name": NAME,
    "last_used_at": "When a request last authenticated with it (ISO 8601); null: never.",
    "revoked_at": "When it was revoked (ISO 8601); null: not revoked.",
}


class ApiKeyOutputSerializer(serializers.ModelSerializer):
    """A key as listed: never the key itself nor its hash; ``prefix`` tells keys apart."""

    integration: serializers.SlugRelatedField[Integration] = serializers.SlugRelatedField(
        slug_field="identifier", read_only=True, help_text="The identifier of the integration the key belongs to."
    )
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=Scope.choices), read_only=True, help_text=SCOPES
    )
    active = serializers.BooleanField(
        source="is_active", read_only=True, help_text="False once revoked: the key is refused (401)."
    )

    Meta = read_only_meta(ApiKey, API_KEY_FIELDS, descriptions=API_KEY_DESCRIPTIONS)


class ApiKeyCreatedOutputSerializer(ApiKeyOutputSerializer):
    """A new key: the listed fields plus ``key``, shown in this one response and stored nowhere."""

    key = serializers.SerializerMethodField(
        help_text="The key, in this answer only: it is stored as a hash and cannot be shown again."
    )

    Meta = read_only_meta(ApiKey, [*API_KEY_FIELDS, "key"], ref_name="ApiKeyCreated", descriptions=API_KEY_DESCRIPTIONS)

    def get_key(self, api_key: ApiKey) -> str:
        return self.context["raw_key"]


class AuditLogFilterSerializer(serializers.Serializer):
    """Query parameters of the audit log; an empty one means no filter."""

    target_type = serializers.CharField(max_length=64, required=False, allow_blank=True)
    target_id = serializers.CharField(max_length=100, required=False, allow_blank=True)
    actor = serializers.CharField(max_length=200, required=False, allow_blank=True)
    actor_kind = serializers.ChoiceField(choices=ActorKind.choices, required=False, allow_blank=True)


class AuditEntryOutputSerializer(serializers.ModelSerializer):
    """One change: when, who, what, and each changed field from what to what (secrets masked)."""

    changes = serializers.DictField(
        child=serializers.ListField(child=serializers.JSONField(), min_length=2, max_length=2),
        read_only=True,
        help_text="Each changed field (nested ones by dotted path) as [from, to]; a secret's values are masked.",
    )

    Meta = read_only_meta(
        AuditEntry,
        ["id", "at", "actor_kind", "actor", "action", "target_type", "target_id", "target", "changes"],
        descriptions={
            "id": "The entry's id.",
            "at": "When the change was made (ISO 8601).",
            "actor_kind": "Who made it: a `person` (back-office), an `api_key`, or the `system`.",
            "action": "What was done, one of the target type's actions (docs/api.md lists them), e.g. `create`.",
            "target_type": "The kind of object changed, e.g. `market`, `export_queue`.",
            "target_id": "The changed object's id or identifier.",
        },
    )
