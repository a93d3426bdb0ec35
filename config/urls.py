from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from integrations.callbacks import IntegratorSchemaView
from ops.admin import dashboard
from ops.views import live, prometheus, ready

urlpatterns = [
    # Unauthenticated on purpose (load balancers and orchestrators probe them); they reveal no secret.
    path("health/live", live, name="health-live"),
    path("health/ready", ready, name="health-ready"),
    # A bearer token (METRICS_TOKEN), which production requires; open in development when unset.
    path("metrics", prometheus, name="metrics"),
    # Before "admin/", which would take the path for an app label.
    path("admin/dashboard/", admin.site.admin_view(dashboard), name="ops-dashboard"),
    path("admin/", admin.site.urls),
    path("backoffice/", include("backoffice.urls")),
    path("imports/", include("imports.urls")),
    path("api/v1/", include("config.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The runtime integrations' callbacks as a document of the integrator's server alone (docs/callbacks.md).
    path("api/schema/integrator/", IntegratorSchemaView.as_view(), name="schema-integrator"),
    # The split view: the page's start-up script is a file of its own (``?script=``), not inline, as the
    # Content-Security-Policy requires.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="schema", template_name="api_docs/swagger_ui.html"),
        name="api-docs",
    ),
]

if settings.DEMO_RECEIVER:
    from ops import demo

    urlpatterns.append(path(demo.PATH, demo.receiver, name="demo-receiver"))

if settings.BENCH_BARE_ENDPOINT:
    from config.bench_views import bare

    urlpatterns.append(path("bench/bare", bare))
handler400 = "core.api.errors.bad_request"
handler404 = "core.api.errors.not_found"
handler500 = "core.api.errors.server_error"
