from django.urls import re_path

from imports import views

# Paths as the spec spells them; a trailing slash is accepted too (a POST cannot be redirected).
urlpatterns = [
    re_path(r"^incoming_orders/?$", views.IncomingOrdersImport.as_view(), name="import-incoming-orders"),
    re_path(r"^external_orders/?$", views.ExternalOrdersImport.as_view(), name="import-external-orders"),
    re_path(
        r"^outgoing_order_state_changes/?$",
        views.OutgoingOrderStateChangesImport.as_view(),
        name="import-outgoing-order-state-changes",
    ),
    re_path(r"^discount_campaigns/?$", views.DiscountCampaignsImport.as_view(), name="import-discount-campaigns"),
    re_path(r"^product_rules/?$", views.ProductRulesImport.as_view(), name="import-product-rules"),
]
