from django.apps import AppConfig


class IntegrationsConfig(AppConfig):
    name = "integrations"

    def ready(self) -> None:
        from core.secrets import install_log_filter

        install_log_filter()
