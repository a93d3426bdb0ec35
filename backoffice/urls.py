"""The back-office's pages, under /backoffice/ (config.urls)."""

from django.urls import path

from backoffice.views import auth, dashboard, exports

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
    path("exports/queues/<int:pk>/", exports.queue_detail, name="queue"),
    path("exports/queues/<int:pk>/enable/", exports.queue_enable, name="queue-enable"),
    path("exports/queues/<int:pk>/disable/", exports.queue_disable, name="queue-disable"),
    path("exports/log/", exports.export_log, name="export-log"),
    path("exports/log/<int:pk>/", exports.export_item, name="export-item"),
    path("exports/retry/", exports.export_retry, name="export-retry"),
]
