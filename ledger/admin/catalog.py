"""Admin of the ledger's catalog: products and expenses (edited through the catalog services, so every
product change emits its product edit event), product edit events and newsletter signups (read-only).

Names, prices and taxes are typed as the spec's JSON: a name is plain text or ``{"da": "...", "en": "..."}``,
a retail price a number or ``{"dk": 199.95}``; the forms check them with the REST API's schema nodes, so
the admin accepts exactly what the API accepts.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, ClassVar

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from accounts.admin import (
    AccountOwnedAdmin,
    DeletedByServiceAdmin,
    ReadOnlyAdminMixin,
    adopt,
    pretty_json_field,
    scoped_filters,
)
from core import jsonparse
from core.errors import ServiceError
from core.jsonenc import DecimalJSONDecoder, DecimalJSONEncoder
from core.nodes import Obj
from ledger.bodies.catalog import EXPENSE, PRODUCT, PRODUCT_OPTIONAL, validated
from ledger.models import Expense, NewsletterSignup, Product, ProductEditEvent
from ledger.services import catalog as services


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, cls=DecimalJSONEncoder)


class L10nStringFormField(forms.CharField):
    """Spec: L10nString. Plain text, or a JSON object of language code to text (starting with ``{``)."""

    widget = forms.Textarea(attrs={"rows": 2, "cols": 60})

    def prepare_value(self, value: Any) -> Any:
        return _json_text(value) if isinstance(value, dict) else value

    def to_python(self, value: Any) -> Any:
        text = (super().to_python(value) or "").strip()
        if not text:
            return None
        if text.startswith("{"):
            try:
                return jsonparse.loads(text)
            except ServiceError:
                raise forms.ValidationError('Enter plain text, or a JSON object like {"da": "Kaffe"}.') from None
        return text


class MarketPriceFormField(forms.CharField):
    """Spec: MarketPrice. A number for every market, or a JSON object of market identifier to number."""

    def prepare_value(self, value: Any) -> Any:
        return _json_text(value) if isinstance(value, dict | int | Decimal) else value

    def to_python(self, value: Any) -> Any:
        text = (super().to_python(value) or "").strip()
        if not text:
            return None
        try:
            value = jsonparse.loads(text)
        except ServiceError:
            value = None
        if isinstance(value, bool) or not isinstance(value, dict | int | Decimal):
            raise forms.ValidationError('Enter a number, or a JSON object like {"dk": 199.95}.')
        return value


def _taxes_field() -> forms.JSONField:
    return forms.JSONField(
        required=False,
        encoder=DecimalJSONEncoder,
        decoder=DecimalJSONDecoder,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
    )


class CatalogForm(forms.ModelForm):
    """A product or expense form whose JSON fields are checked by the REST API's schema node ``node``;
    the checked body is left in ``self.body`` for the admin's ``save_model`` to hand to the service."""

    node: Obj
    spec_fields: tuple[str, ...]
    id_field: str

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.body: dict[str, Any] = {}

    def clean(self) -> dict[str, Any] | None:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        body: dict[str, Any] = {"id": cleaned.get(self.id_field) or getattr(self.instance, self.id_field)}
        for name in self.spec_fields:
            value = cleaned.get(name)
            if value not in (None, ""):
                body[name] = value
        data, report = validated(self.node, body)
        errors = report.errors
        if not errors:
            account = cleaned.get("account") or self.instance.account
            try:
                self.check_references(account=account, data=data)
            except ServiceError as exc:
                errors = exc.errors()
        for error in errors:
            name = error["field"].split(".")[0].split("[")[0]
            name = self.id_field if name == "id" else name
            message = error["message"] if error["field"] == name else f"{error['field']}: {error['message']}"
            self.add_error(name if name in self.fields else None, message)
        self.body = data
        return cleaned

    def check_references(self, *, account: Any, data: dict[str, Any]) -> None:
        raise NotImplementedError


class ProductForm(CatalogForm):
    node = PRODUCT.node
    spec_fields = ("name", *PRODUCT_OPTIONAL)
    id_field = "product_id"

    name = L10nStringFormField(help_text='Plain text, or per language: {"da": "Kaffe", "en": "Coffee"}.')
    description = L10nStringFormField(required=False)
    retail_price = MarketPriceFormField(
        required=False, help_text='A number, or per market: {"dk": 199.95}. Empty: a variable-price product.'
    )
    taxes = _taxes_field()

    class Meta:
        model = Product
        fields = ["account", "product_id", *("name", *PRODUCT_OPTIONAL)]
        labels = {"product_id": "id"}
        help_texts = {"taxes": '[{"name": "VAT", "rate": 0.25, "type": "vat"}]; empty: the market default.'}

    def check_references(self, *, account: Any, data: dict[str, Any]) -> None:
        services.check_product_references(account=account, data=data)


class ExpenseForm(CatalogForm):
    node = EXPENSE
    spec_fields = ("name", "taxes")
    id_field = "expense_id"

    name = L10nStringFormField(help_text='Plain text, or per language: {"da": "Kaffe", "en": "Coffee"}.')
    taxes = _taxes_field()

    class Meta:
        model = Expense
        fields = ["account", "expense_id", "name", "taxes"]
        labels = {"expense_id": "id"}
        help_texts = {"taxes": '[{"name", "rate", "type"}], or per market: {"dk": [...]}. Empty: market default.'}

    def check_references(self, *, account: Any, data: dict[str, Any]) -> None:
        services.check_expense_references(account=account, data=data)


class ThroughServicesAdmin(DeletedByServiceAdmin):
    """An admin whose rows are created, changed and deleted by the catalog services (which validate the body
    the form built and emit the mirrors' events), never by a bare save."""

    writes: ClassVar[services.CatalogWrites]

    def save_model(self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool) -> None:
        body = form.body  # type: ignore[attr-defined]  # ProductForm, ExpenseForm: the body the form built
        if change:
            saved = self.writes.updated(obj, account=obj.account, data=body)
        else:
            saved = self.writes.create(account=obj.account, data=body)
        adopt(obj, saved)

    def delete_row(self, obj: Any) -> None:
        self.writes.deleted(obj, account=obj.account)


@admin.register(Product)
class ProductAdmin(ThroughServicesAdmin):
    """Products are saved and deleted by the catalog services, which emit the product edit events."""

    form = ProductForm
    list_display = ["product_id", "name_text", "barcode", "product_group", "account", "updated_at"]
    list_filter = ["account"]
    list_select_related = ["account"]
    search_fields = ["product_id", "barcode", "search_text", "account__identifier"]
    fieldsets = [
        (None, {"fields": ["account", "product_id", "name", "description", "barcode", "image_url", "product_group"]}),
        ("Price and taxes", {"fields": ["retail_price", "cost_price", "taxes"]}),
        ("History", {"fields": ["created_at", "updated_at"]}),
    ]

    def get_fieldsets(self, request: HttpRequest, obj: Product | None = None) -> Any:
        return self.fieldsets if obj is not None else self.fieldsets[:2]

    def get_readonly_fields(self, request: HttpRequest, obj: Product | None = None) -> list[str]:
        # The id is the product for every mirror; a new id is a new product (delete and create).
        return ["account", "product_id", "created_at", "updated_at"] if obj is not None else []

    @admin.display(description="name", ordering="search_text")
    def name_text(self, obj: Product) -> str:
        return obj.name if isinstance(obj.name, str) else " / ".join(str(n) for n in obj.name.values())

    writes = services.PRODUCT_WRITES


@admin.register(Expense)
class ExpenseAdmin(ThroughServicesAdmin):
    form = ExpenseForm
    list_display = ["expense_id", "account", "created_at"]
    list_filter = ["account"]
    list_select_related = ["account"]
    search_fields = ["expense_id", "account__identifier"]

    fields = ["account", "expense_id", "name", "taxes", "created_at"]

    def get_readonly_fields(self, request: HttpRequest, obj: Expense | None = None) -> list[str]:
        # Sales name their expense by id, so it stays.
        return ["account", "expense_id", "created_at"] if obj is not None else ["created_at"]

    writes = services.EXPENSE_WRITES


@admin.register(ProductEditEvent)
class ProductEditEventAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    """The record of what was sent to the mirrors: never changed."""

    list_display = ["id", "event", "product_id", "account", "created_at"]
    list_filter = ["account", "event"]
    list_select_related = ["account"]
    search_fields = ["product_id"]
    fields = ["account", "event", "product_id", "created_at", "document_pretty"]
    readonly_fields = ["document_pretty"]

    document_pretty = pretty_json_field("document", "document")


@admin.register(NewsletterSignup)
class NewsletterSignupAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = ["email", "stock_location", "register", "account", "created_at"]
    list_filter = scoped_filters()
    list_select_related = ["account", "stock_location", "register"]
    search_fields = ["email"]
    fields = ["account", "email", "stock_location", "register", "created_at", "document_pretty"]
    readonly_fields = ["document_pretty"]

    document_pretty = pretty_json_field("document", "document")
