from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"

    def ready(self) -> None:
        from exports import checks  # noqa: F401 - registers the deployment checks
