"""The admin site of the back office: headed with the product's name, its navigation grouped by task.

Django's admin lists models by app, which is how the code is cut, not how a shop's back-office person works. The
index and the sidebar here list them by task (shops and registers, imports, pricing, sales and stock, exports,
integrations, operations). A model no section names is listed under its app's section (``APP_SECTIONS``), so a
new model is never hidden. The scheduler's tables (django-celery-beat) are for superusers only: the beat's
schedule is the deployment's, not a tenant's.

The admin is the operator's: it shows every account. Only an operator enters it (``is_operator``: a superuser, or
an active staff user who is a member of no account). Anyone else who is signed in, a retailer's member above all,
is sent to the back-office (``/backoffice/``) when they open the admin or sign in at its login page.

Installed in place of ``django.contrib.admin`` (``config.admin_app.BackOfficeAdminConfig``), so
``admin.site`` is this site everywhere and every ``@admin.register`` lands on it.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import logout
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import Model
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache

from accounts import two_factor
from accounts.services import memberships_of
from backoffice import second_step

PRODUCT_NAME = "Retail back-office"
SUPERUSER_ONLY_APPS = frozenset({"django_celery_beat"})

# (section title, its anchor, the models it lists in this order)
SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "Shops and registers",
        "shops",
        (
            "accounts.Account",
            "accounts.Market",
            "accounts.StockLocation",
            "accounts.Register",
            "accounts.Cashier",
            "ledger.RegisterPeriod",
            "ledger.RegisterCloseStatement",
        ),
    ),
    (
        "Imports",
        "imports",
        (
            "accounts.Integration",
            "accounts.ApiKey",
            "imports.ImportItem",
            "orders.IncomingOrder",
            "orders.ExternalOrder",
            "orders.OutgoingOrder",
            "orders.OrderStateChange",
        ),
    ),
    ("Pricing", "pricing", ("campaigns.Campaign", "campaigns.ProductRule")),
    (
        "Sales and stock",
        "sales",
        (
            "ledger.Checkout",
            "ledger.Sale",
            "ledger.Expense",
            "ledger.Product",
            "ledger.ProductEditEvent",
            "ledger.StockLevel",
            "ledger.StockEvent",
            "ledger.NewsletterSignup",
            "giftcards.GiftCard",
            "giftcards.GiftCardMove",
            "giftcards.CustomerAccountPayment",
        ),
    ),
    ("Exports", "exports", ("exports.ExportQueue", "exports.ExportItem", "exports.ExportDelivery")),
    ("Integrations", "integrations", ("integrations.RuntimeIntegration", "integrations.IntegrationCall")),
    (
        "Operations",
        "operations",
        (
            "auth.User",
            "auth.Group",
            "axes.AccessAttempt",
            "axes.AccessFailureLog",
            "axes.AccessLog",
            "django_celery_beat.PeriodicTask",
            "django_celery_beat.IntervalSchedule",
            "django_celery_beat.CrontabSchedule",
            "django_celery_beat.ClockedSchedule",
            "django_celery_beat.SolarSchedule",
        ),
    ),
)
# Where a model that no section names is listed.
APP_SECTIONS = {
    "accounts": "shops",
    "imports": "imports",
    "orders": "imports",
    "campaigns": "pricing",
    "ledger": "sales",
    "giftcards": "sales",
    "exports": "exports",
    "integrations": "integrations",
}
FALLBACK_SECTION = "operations"


def is_operator(user: Any) -> bool:
    """Whether ``user`` works in the operator's admin: an active superuser, or an active staff user who is a member
    of no account. A member flagged staff stays a retailer's person: the admin would show them every account."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return bool(user.is_staff) and not memberships_of(user)


def _awaits_code(request: HttpRequest) -> bool:
    """A person with two-factor sign-in on whose session has not passed the second step."""
    return two_factor.is_enrolled(user=request.user) and not second_step.is_verified(request)


class AnyoneSignInForm(AdminAuthenticationForm):
    """The admin's sign-in form without its staff check: a member's right password signs them in, and the site's
    ``login`` then sends them to the back-office instead of calling the password wrong."""

    def confirm_login_allowed(self, user: Any) -> None:
        AuthenticationForm.confirm_login_allowed(self, user)


class BackOfficeAdminSite(admin.AdminSite):
    site_header = PRODUCT_NAME
    site_title = PRODUCT_NAME
    index_title = "Back office"
    # No "View site" link: the service has no public site (the API's own page is linked from the index).
    site_url = None
    login_form = AnyoneSignInForm

    def has_permission(self, request: HttpRequest) -> bool:
        """An operator (``is_operator``) whose session passed the second step if they have two-factor sign-in on;
        read once per request and person (the admin asks several times)."""
        user = request.user
        cached: tuple[Any, bool] | None = getattr(request, "_operator", None)
        if cached is None or cached[0] != user.pk:
            allowed = is_operator(user) and not _awaits_code(request)
            cached = (user.pk, allowed)
            request._operator = cached  # type: ignore[attr-defined]
        return cached[1]

    @method_decorator(never_cache)
    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """The admin's login; a signed-in person who is not an operator (already, or by this very POST) goes to the
        back-office. Every other admin page sends such a person here (``admin_view``), so here is the one place."""
        if request.user.is_authenticated and not self.has_permission(request):
            return self._elsewhere(request)
        response = super().login(request, extra_context)
        if request.user.is_authenticated and not self.has_permission(request):
            return self._elsewhere(request)
        return response

    def _elsewhere(self, request: HttpRequest) -> HttpResponse:
        """An operator with two-factor sign-in on whose password was right types their code on the back-office's
        second step, then comes back (the password alone signs no one in); anyone else goes to the back-office."""
        if is_operator(request.user) and _awaits_code(request):
            user = request.user
            logout(request)
            second_step.begin(request, user=user)
            after = request.GET.get("next") or reverse("admin:index")
            return HttpResponseRedirect(f"{reverse('backoffice:login-verify')}?{urlencode({'next': after})}")
        return HttpResponseRedirect(reverse("backoffice:dashboard"))

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
        apps = super().get_app_list(request, app_label)
        if app_label is not None:
            return apps
        models: dict[str, tuple[str, dict[str, Any]]] = {}
        for app in apps:
            if app["app_label"] in SUPERUSER_ONLY_APPS and not request.user.is_superuser:
                continue
            for model in app["models"]:
                models[f"{app['app_label']}.{model['object_name']}"] = (app["app_label"], model)
        index = reverse("admin:index", current_app=self.name)
        sections: dict[str, dict[str, Any]] = {
            anchor: {
                "name": title,
                "app_label": f"section-{anchor}",
                "app_url": f"{index}#section-{anchor}",
                "has_module_perms": True,
                "models": [models.pop(label)[1] for label in labels if label in models],
            }
            for title, anchor, labels in SECTIONS
        }
        for app_label_of_model, model in models.values():  # the models no section names, by their app
            sections[APP_SECTIONS.get(app_label_of_model, FALLBACK_SECTION)]["models"].append(model)
        return [section for section in sections.values() if section["models"]]

    def register(self, model_or_iterable: Any, admin_class: Any = None, **options: Any) -> None:
        models: list[type[Model]] = (
            [model_or_iterable] if isinstance(model_or_iterable, type) else list(model_or_iterable)
        )
        for model in models:
            model_admin = admin_class or admin.ModelAdmin
            if model._meta.app_label in SUPERUSER_ONLY_APPS:
                model_admin = _superuser_only(model_admin)
            super().register(model, model_admin, **options)


def _superuser_only(model_admin: type[admin.ModelAdmin[Any]]) -> type[admin.ModelAdmin[Any]]:
    class SuperuserOnly(model_admin):  # type: ignore[valid-type, misc]
        def has_module_permission(self, request: HttpRequest) -> bool:
            return bool(request.user.is_superuser)

        def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
            return bool(request.user.is_superuser)

        def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
            return bool(request.user.is_superuser)

        def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
            return bool(request.user.is_superuser)

        def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
            return bool(request.user.is_superuser)

    SuperuserOnly.__name__ = SuperuserOnly.__qualname__ = f"SuperuserOnly{model_admin.__name__}"
    return SuperuserOnly
