"""Back-office admin of the account structure and API keys, and the pieces the other apps' admins share.

Staff see every account, so identifiers that repeat across accounts (every account has a market ``dk``)
are labelled ``account / identifier`` wherever a related object is chosen or filtered on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, cast

from django.contrib import admin, messages
from django.db.models import Count, Field, ForeignKey, JSONField, Model, Q, QuerySet, URLField
from django.forms import ModelChoiceField, ModelForm
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path
from django.utils.html import format_html
from django.utils.safestring import SafeString

from accounts import keys, services
from accounts.forms import ApiKeyCreateForm
from accounts.models import (
    Account,
    AccountOwned,
    ApiKey,
    AuditEntry,
    Cashier,
    Integration,
    Market,
    Membership,
    Register,
    StockLocation,
)
from core.admin_fields import field_display
from core.forms import BoundedJSONFormField
from core.jsonenc import DecimalJSONEncoder
from core.paginators import EstimatedCountPaginator

if TYPE_CHECKING:
    from django.contrib.admin.options import _FieldsetSpec
    from django_stubs_ext import StrOrPromise

# --- Shared by the admins of every app ----------------------------------------------------------------


def account_label(obj: Model) -> str:
    """``acme / dk``: an account-owned object named so that it is unambiguous across accounts."""
    return f"{obj.account} / {obj}"  # type: ignore[attr-defined]


def by_account(model: type[Model]) -> QuerySet[Any]:
    """Every row of an account-owned model with its account, in one query, grouped by account."""
    return model._default_manager.select_related("account").order_by(
        "account__identifier", *(model._meta.ordering or ())
    )


def pretty_json(value: Any) -> SafeString | None:
    """A stored JSON value indented for reading in a detail page; None shows as the admin's empty value."""
    if value is None:
        return None
    text = json.dumps(value, indent=2, ensure_ascii=False, cls=DecimalJSONEncoder)
    return format_html('<pre class="pretty-json">{}</pre>', text)


def pretty_json_field(field: str, description: str) -> Callable[[Any, Model], SafeString | None]:
    """A read-only admin field (a method named in ``readonly_fields``) showing the JSON stored in ``field``
    with ``pretty_json``, under the label ``description``."""
    return field_display(field, pretty_json, description=description)


class AccountLabelledChoiceField(ModelChoiceField):
    def label_from_instance(self, obj: Model) -> str:
        return account_label(obj)


class AccountScopedRelatedFilter(admin.RelatedFieldListFilter):
    """A filter on an account-owned related object (market, stock location, integration).

    Choices read ``account / identifier`` and, when the account filter is active, list only that
    account's objects.
    """

    def field_choices(
        self, field: Field, request: HttpRequest, model_admin: admin.ModelAdmin
    ) -> list[tuple[str, StrOrPromise]]:
        queryset = by_account(cast("type[Model]", field.related_model))
        account_id = request.GET.get("account__id__exact", "")
        if account_id.isdigit():
            queryset = queryset.filter(account_id=account_id)
        return [(str(obj.pk), account_label(obj)) for obj in queryset]


def scoped_filters(*filters: Any, related: tuple[str, ...] = ("stock_location",)) -> list[Any]:
    """A list's filters for rows of one account's shops (or integrations, destinations...): the account first, then
    ``filters``, then each ``related`` object filtered by ``AccountScopedRelatedFilter`` (its choices only the chosen
    account's)."""
    return ["account", *filters, *((name, AccountScopedRelatedFilter) for name in related)]


class AccountOwnedAdmin(admin.ModelAdmin):
    """Base admin of account-owned models: related choices are labelled with their account and
    fetched in one query; JSON text areas read through the bounded parser."""

    formfield_overrides: ClassVar[dict[Any, dict[str, Any]]] = {JSONField: {"form_class": BoundedJSONFormField}}

    def formfield_for_foreignkey(
        self, db_field: ForeignKey, request: HttpRequest, **kwargs: Any
    ) -> ModelChoiceField | None:
        related = cast("type[Model]", db_field.related_model)
        if issubclass(related, AccountOwned):
            kwargs.setdefault("queryset", by_account(related))
            kwargs.setdefault("form_class", AccountLabelledChoiceField)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def page(self, route: str, view: Callable[..., HttpResponse], name: str) -> URLPattern:
        """A page of its own at ``route`` (under the model's admin), behind the admin's sign-in, its URL named
        ``<app>_<model>_<name>``."""
        opts = self.model._meta
        return path(route, self.admin_site.admin_view(view), name=f"{opts.app_label}_{opts.model_name}_{name}")


def adopt(obj: Any, saved: Any) -> None:
    """The admin goes on to log and redirect with ``obj``: make it the row the service saved."""
    for field in type(saved)._meta.concrete_fields:
        setattr(obj, field.attname, getattr(saved, field.attname))
    obj._state.adding = False
    obj._state.db = saved._state.db


class DeletedByServiceAdmin(AccountOwnedAdmin):
    """An admin whose rows a service of their app deletes (``delete_row``), never a bare delete: one row at a time,
    for the bulk action too."""

    def delete_row(self, obj: Any) -> None:
        raise NotImplementedError

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.delete_row(obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        for row in queryset.select_related("account"):
            self.delete_row(row)


class ReadOnlyAdminMixin:
    """View-only in the admin: these rows are written by imports and services, never by hand
    (the spec forbids updating or deleting orders; the import log is a record).

    They are the tables that only grow, so their lists neither count the whole table beside the filtered list
    (``show_full_result_count``) nor count a long list exactly: past ``EXACT_COUNT_LIMIT`` rows, PostgreSQL's
    planner estimate (``core.paginators``). Date drill-downs (``date_hierarchy``) are not used on them: they read
    every row's date; a date list filter (today, past 7 days, this month, this year) reads nothing."""

    paginator: ClassVar[type] = EstimatedCountPaginator
    show_full_result_count = False

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class RecordInline(ReadOnlyAdminMixin, admin.TabularInline):
    """Rows recorded beside another (a sale's lines, an order's state changes, a delivery's attempts): shown in a
    table, every field read-only, never added."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.fields


# --- The account structure ------------------------------------------------------------------------------


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ["identifier", "name", "created_at"]
    search_fields = ["identifier", "name"]
    # Two-factor sign-in required is the account's owner's choice, made (and audited) in the back-office.
    readonly_fields = ["two_factor_required", "created_at"]

    def has_delete_permission(self, request: HttpRequest, obj: Account | None = None) -> bool:
        # Deleting an account would cascade to its orders and import log, which are never deleted.
        return False


@admin.register(Market)
class MarketAdmin(AccountOwnedAdmin):
    list_display = ["identifier", "name", "account", "currency", "created_at"]
    list_filter = ["account", "currency"]
    list_select_related = ["account"]
    search_fields = ["identifier", "name", "account__identifier"]
    fields = ["account", "identifier", "name", "currency", "default_taxes", "created_at"]
    readonly_fields = ["created_at"]


@admin.register(StockLocation)
class StockLocationAdmin(AccountOwnedAdmin):
    list_display = ["identifier", "name", "kind", "market", "account", "city", "country_code"]
    list_filter = scoped_filters("kind", related=("market",))
    list_select_related = ["account", "market"]
    search_fields = ["identifier", "name", "city", "zip", "vat_number", "account__identifier"]
    fieldsets = [
        (None, {"fields": ["account", "identifier", "name", "kind", "market", "created_at"]}),
        ("Address", {"fields": ["street", "city", "zip", "country_code", "vat_number"]}),
    ]
    readonly_fields = ["created_at"]


@admin.register(Register)
class RegisterAdmin(AccountOwnedAdmin):
    list_display = ["identifier", "name", "stock_location", "account", "created_at"]
    list_filter = scoped_filters()
    list_select_related = ["account", "stock_location"]
    search_fields = ["identifier", "name", "stock_location__identifier", "account__identifier"]
    fields = ["account", "identifier", "name", "stock_location", "payment_types", "created_at"]
    readonly_fields = ["created_at"]


@admin.register(Cashier)
class CashierAdmin(AccountOwnedAdmin):
    list_display = ["identifier", "display_name", "full_name", "account", "created_at"]
    list_filter = ["account"]
    list_select_related = ["account"]
    search_fields = ["identifier", "display_name", "full_name", "account__identifier"]
    fields = ["account", "identifier", "display_name", "full_name", "image_url", "created_at"]
    readonly_fields = ["created_at"]
    formfield_overrides = {**AccountOwnedAdmin.formfield_overrides, URLField: {"assume_scheme": "https"}}


@admin.register(Integration)
class IntegrationAdmin(AccountOwnedAdmin):
    list_display = ["identifier", "name", "account", "active_key_count", "created_at"]
    list_filter = ["account"]
    list_select_related = ["account"]
    search_fields = ["identifier", "name", "account__identifier"]
    fields = ["account", "identifier", "name", "created_at"]
    readonly_fields = ["created_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Integration]:
        return (
            super()
            .get_queryset(request)
            .annotate(_active_keys=Count("api_keys", filter=Q(api_keys__revoked_at__isnull=True)))
        )

    @admin.display(description="active API keys", ordering="_active_keys")
    def active_key_count(self, obj: Integration) -> int:
        return obj._active_keys  # type: ignore[attr-defined]


# --- API keys -------------------------------------------------------------------------------------------


class ApiKeyStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, StrOrPromise]]:
        return [("active", "Active"), ("revoked", "Revoked")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> QuerySet[ApiKey]:
        if self.value() == "active":
            return queryset.filter(revoked_at__isnull=True)
        if self.value() == "revoked":
            return queryset.filter(revoked_at__isnull=False)
        return queryset


# What a key's list row and its change page both show, after its prefix and name.
_API_KEY_SHOWN = ("account", "integration", "scope_list", "status", "created_at", "last_used_at", "revoked_at")


@admin.register(ApiKey)
class ApiKeyAdmin(AccountOwnedAdmin):
    """Keys are created by ``services.create_api_key`` (the raw key is shown once, in a message) and
    revoked, never deleted. The stored hash is shown nowhere."""

    list_display = ["key_prefix", "name", *_API_KEY_SHOWN]
    list_filter = [ApiKeyStatusFilter, "account", ("integration", AccountScopedRelatedFilter)]
    list_select_related = ["account", "integration"]
    search_fields = ["prefix", "name", "integration__identifier", "account__identifier"]
    actions = ["revoke_selected"]

    add_fields = ("integration", "name", "scopes")
    change_fields = ("name", "key_prefix", *_API_KEY_SHOWN)

    def get_fieldsets(self, request: HttpRequest, obj: ApiKey | None = None) -> _FieldsetSpec:
        if obj is None:
            description = "The key is generated when you save and shown once; only a hash of it is stored."
            return [(None, {"fields": self.add_fields, "description": description})]
        return [(None, {"fields": self.change_fields})]

    def get_readonly_fields(self, request: HttpRequest, obj: ApiKey | None = None) -> list[str]:
        return [] if obj is None else [f for f in self.change_fields if f != "name"]

    def get_form(
        self, request: HttpRequest, obj: ApiKey | None = None, change: bool = False, **kwargs: Any
    ) -> type[ModelForm]:
        if obj is None:
            kwargs["form"] = ApiKeyCreateForm
        return super().get_form(request, obj, change=change, **kwargs)

    def has_delete_permission(self, request: HttpRequest, obj: ApiKey | None = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ApiKey, form: ModelForm, change: bool) -> None:
        if change:
            obj.save(update_fields=["name"])
            return
        api_key, raw_key = services.create_api_key(
            account=obj.integration.account,
            integration=obj.integration,
            scopes=form.cleaned_data["scopes"],
            name=obj.name,
        )
        # The admin goes on to log the addition and redirect with ``obj``: make it the created row.
        for field in ApiKey._meta.concrete_fields:
            setattr(obj, field.attname, getattr(api_key, field.attname))
        obj._state.adding = False
        obj._state.db = api_key._state.db
        # Only the hash is stored: this message is the one place the key is ever shown.
        messages.success(
            request,
            format_html('New API key (shown once, copy it now): <code class="api-key">{}</code>', raw_key),
        )

    @admin.action(description="Revoke selected keys", permissions=["change"])
    def revoke_selected(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        revoked = 0
        for api_key in queryset.filter(revoked_at__isnull=True).select_related("account"):
            services.revoke_api_key(account=api_key.account, api_key=api_key)
            revoked += 1
        self.message_user(request, f"Revoked {revoked} API key(s).", messages.SUCCESS)

    @admin.display(description="key", ordering="prefix")
    def key_prefix(self, obj: ApiKey) -> str:
        return f"{keys.KEY_LEAD}{obj.prefix}…"

    @admin.display(description="scopes")
    def scope_list(self, obj: ApiKey) -> str:
        return ", ".join(obj.scopes)

    @admin.display(description="status", ordering="revoked_at")
    def status(self, obj: ApiKey) -> str:
        return "Active" if obj.is_active else "Revoked"


# --- Members and the audit trail -----------------------------------------------------------------------------


@admin.register(Membership)
class MembershipAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    """Who may work in which account, with which role. Added and changed by ``manage.py add_member`` (and the
    account's owners), so that every change is audited; shown here to the operator."""

    list_display = ["user", "account", "role", "created_at", "updated_at"]
    list_filter = ["role", "account"]
    list_select_related = ["account", "user"]
    search_fields = ["user__username", "account__identifier"]


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    """Every change made in an account, by a person, an API key or the system; never changed or deleted."""

    list_display = ["at", "account", "actor", "action", "target_type", "target_id", "target"]
    list_filter = ["actor_kind", "action", "target_type", "account"]
    list_select_related = ["account"]
    search_fields = ["actor", "target_id", "target"]
    fields = ("at", "account", "actor_kind", "actor", "action", "target_type", "target_id", "target", "changes")
    readonly_fields = (
        "at",
        "account",
        "actor_kind",
        "actor",
        "action",
        "target_type",
        "target_id",
        "target",
        "changes",
    )
