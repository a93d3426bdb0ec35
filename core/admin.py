"""The circuit breakers in the admin: what each destination's breaker says, and closing one by hand."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Model, QuerySet
from django.http import HttpRequest

from core import breaker
from core.models import CircuitBreaker


@admin.register(CircuitBreaker)
class CircuitBreakerAdmin(admin.ModelAdmin):
    """Rows are written by ``core.breaker`` only; closing one (deleting its row) lets calls through at once."""

    list_display = ["key", "state", "failures", "trips", "open_until", "failing_since", "last_error", "updated_at"]
    list_filter = ["state"]
    search_fields = ["key"]
    readonly_fields = [
        "key",
        "state",
        "failures",
        "trips",
        "open_until",
        "trial_until",
        "failing_since",
        "last_error",
        "updated_at",
    ]
    actions = ["close_breakers"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    @admin.action(description="Close (the destination works again)", permissions=["delete"])
    def close_breakers(self, request: HttpRequest, queryset: QuerySet[CircuitBreaker]) -> None:
        closed = breaker.reset(keys=list(queryset.values_list("key", flat=True)))
        self.message_user(request, f"Closed {closed} circuit breaker(s).", messages.SUCCESS)
