from django.urls import path

from imports import views

# Paths as the spec spells them. The same path with a trailing slash is accepted too (a POST cannot
# be redirected); imports.docs.hide_trailing_slash_twins keeps it out of the OpenAPI schema.
ROUTES = [
    ("incoming_orders", views.IncomingOrdersImport, "import-incoming-orders"),
    ("external_orders", views.ExternalOrdersImport, "import-external-orders"),
    ("outgoing_order_state_changes", views.OutgoingOrderStateChangesImport, "import-outgoing-order-state-changes"),
    ("discount_campaigns", views.DiscountCampaignsImport, "import-discount-campaigns"),
    ("product_rules", views.ProductRulesImport, "import-product-rules"),
    ("stock_events", views.StockEventsImport, "import-stock-events"),
]

urlpatterns = [path(route, view.as_view(), name=name) for route, view, name in ROUTES] + [
    path(f"{route}/", view.as_view()) for route, view, _ in ROUTES
]
