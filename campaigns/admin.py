"""Back-office admin of discount campaigns and product rules: view-only, since imports manage them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse

from accounts.admin import AccountOwnedAdmin, AccountScopedRelatedFilter, ReadOnlyAdminMixin, pretty_json
from campaigns.models import CAMPAIGN_COLUMNS, Campaign, ProductRule
from core.admin_fields import field_display

# --- Tools: pages an upper app adds to the campaigns' admin -----------------------------------------------------


@dataclass(frozen=True)
class CampaignTool:
    """A page below ``/admin/campaigns/campaign/`` that an app above campaigns adds (the pos app's "Price a
    basket", which needs the catalog and the integrations campaigns may not import). The change list links it.

    ``view(model_admin, request)`` is wrapped in the admin site's login and staff check; ``name`` makes the URL
    name ``admin:campaigns_campaign_<name>`` and, with dashes, its path and the link's CSS class.
    """

    name: str
    label: str
    view: Callable[[CampaignAdmin, HttpRequest], HttpResponse]

    @property
    def slug(self) -> str:
        return self.name.replace("_", "-")


# Filled by the apps above (``pos.admin``); read when the admin's URLs are built, after every app is ready.
CAMPAIGN_TOOLS: dict[str, CampaignTool] = {}


def register_tool(tool: CampaignTool) -> None:
    CAMPAIGN_TOOLS[tool.name] = tool


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
            {"fields": ["account", "market", "campaign_id", *CAMPAIGN_COLUMNS, "created_at", "updated_at"]},
        ),
        ("Definition", {"fields": ["definition_pretty"]}),
    ]
    readonly_fields = ["definition_pretty"]

    definition_pretty = field_display("definition", pretty_json)

    def _tool_url_name(self, tool: CampaignTool) -> str:
        return f"{self.opts.app_label}_{self.opts.model_name}_{tool.name}"

    def get_urls(self) -> list[URLPattern]:
        tools = [
            path(
                f"{tool.slug}/",
                self.admin_site.admin_view(partial(tool.view, self)),
                name=self._tool_url_name(tool),
            )
            for tool in CAMPAIGN_TOOLS.values()
        ]
        return [*tools, *super().get_urls()]

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        site = self.admin_site.name
        links = [
            {"label": tool.label, "slug": tool.slug, "url": reverse(f"{site}:{self._tool_url_name(tool)}")}
            for tool in CAMPAIGN_TOOLS.values()
        ]
        return super().changelist_view(request, {**(extra_context or {}), "campaign_tools": links})


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

    display_name_pretty = field_display("display_name", pretty_json)
    price_pretty = field_display("price", pretty_json)
    definition_pretty = field_display("definition", pretty_json)
