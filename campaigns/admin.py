"""Back-office admin of discount campaigns and product rules: view-only, since imports manage them."""

from __future__ import annotations

from django.contrib import admin
from django.utils.safestring import SafeString

from accounts.admin import AccountOwnedAdmin, AccountScopedRelatedFilter, ReadOnlyAdminMixin, pretty_json
from campaigns.models import Campaign, ProductRule


@admin.register(Campaign)
class CampaignAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = [
        "campaign_id",
        "name",
        "type",
        "market",
        "account",
        "priority",
        "members_only",
        "continue_evaluation",
        "updated_at",
    ]
    list_filter = ["account", ("market", AccountScopedRelatedFilter), "type", "members_only"]
    list_select_related = ["account", "market"]
    search_fields = ["campaign_id", "name", "display_name"]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "account",
                    "market",
                    "campaign_id",
                    "type",
                    "name",
                    "display_name",
                    "priority",
                    "members_only",
                    "continue_evaluation",
                    "created_at",
                    "updated_at",
                ]
            },
        ),
        ("Definition", {"fields": ["definition_pretty"]}),
    ]
    readonly_fields = ["definition_pretty"]

    @admin.display(description="definition")
    def definition_pretty(self, obj: Campaign) -> SafeString | None:
        return pretty_json(obj.definition)


@admin.register(ProductRule)
class ProductRuleAdmin(ReadOnlyAdminMixin, AccountOwnedAdmin):
    list_display = ["rule_id", "name", "type", "tag", "product_group", "market", "account", "updated_at"]
    list_filter = ["account", ("market", AccountScopedRelatedFilter), "type"]
    list_select_related = ["account", "market"]
    search_fields = ["rule_id", "name", "tag", "product_group"]
    fieldsets = [
        (
            None,
            {
                "fields": [
                    "account",
                    "market",
                    "rule_id",
                    "type",
                    "name",
                    "tag",
                    "product_group",
                    "created_at",
                    "updated_at",
                ]
            },
        ),
        ("Definition", {"fields": ["display_name_pretty", "price_pretty", "definition_pretty"]}),
    ]
    readonly_fields = ["display_name_pretty", "price_pretty", "definition_pretty"]

    @admin.display(description="display name")
    def display_name_pretty(self, obj: ProductRule) -> SafeString | None:
        return pretty_json(obj.display_name)

    @admin.display(description="price")
    def price_pretty(self, obj: ProductRule) -> SafeString | None:
        return pretty_json(obj.price)

    @admin.display(description="definition")
    def definition_pretty(self, obj: ProductRule) -> SafeString | None:
        return pretty_json(obj.definition)
