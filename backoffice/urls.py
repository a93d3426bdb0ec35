"""The back-office's pages, under /backoffice/ (config.urls)."""

from django.urls import path

from backoffice.views import (
    audit,
    auth,
    dashboard,
    exports,
    imports,
    integrations,
    keys,
    members,
    notifications,
    queue_forms,
    sales,
)

app_name = "backoffice"

urlpatterns = [
    path("login/", auth.SignInView.as_view(), name="login"),
    path("logout/", auth.SignOutView.as_view(), name="logout"),
    path("password/", auth.NewPasswordRequestView.as_view(), name="password-reset"),
    path("password/sent/", auth.NewPasswordSentView.as_view(), name="password-reset-sent"),
    path("password/done/", auth.NewPasswordDoneView.as_view(), name="password-reset-done"),
    path("password/<uidb64>/<token>/", auth.NewPasswordView.as_view(), name="password-reset-confirm"),
    path("switch/", auth.switch_account, name="switch"),
    path("", dashboard.dashboard, name="dashboard"),
    path("exports/queues/", exports.queue_list, name="queues"),
    path("exports/queues/new/", queue_forms.queue_new, name="queue-new"),
    path("exports/queues/<int:pk>/", exports.queue_detail, name="queue"),
    path("exports/queues/<int:pk>/edit/", queue_forms.queue_edit, name="queue-edit"),
    path("exports/queues/<int:pk>/delete/", queue_forms.queue_delete, name="queue-delete"),
    path("exports/queues/<int:pk>/enable/", exports.queue_enable, name="queue-enable"),
    path("exports/queues/<int:pk>/disable/", exports.queue_disable, name="queue-disable"),
    path("exports/log/", exports.export_log, name="export-log"),
    path("exports/log/<int:pk>/", exports.export_item, name="export-item"),
    path("exports/retry/", exports.export_retry, name="export-retry"),
    path("imports/", imports.import_log, name="imports"),
    path("imports/<int:pk>/", imports.import_item, name="import-item"),
    path("sales/", sales.sale_list, name="sales"),
    path("sales/<int:pk>/", sales.sale_detail, name="sale"),
    path("checkouts/", sales.checkout_list, name="checkouts"),
    path("checkouts/<int:pk>/", sales.checkout_detail, name="checkout"),
    path("integrations/", integrations.integration_list, name="integrations"),
    path("integrations/<int:pk>/", integrations.integration_detail, name="integration"),
    path("audit/", audit.audit_log, name="audit"),
    path("keys/", keys.key_list, name="keys"),
    path("keys/<int:pk>/revoke/", keys.key_revoke, name="key-revoke"),
    path("members/", members.member_list, name="members"),
    path("members/<int:pk>/role/", members.member_role, name="member-role"),
    path("members/<int:pk>/remove/", members.member_remove, name="member-remove"),
    path("members/<int:pk>/invite/", members.member_invite, name="member-invite"),
    path("notifications/", notifications.notification_settings, name="notifications"),
    path("invite/<str:token>/", members.invite, name="invite"),
]
