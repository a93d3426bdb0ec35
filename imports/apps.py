from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "imports"

    def ready(self) -> None:
        # Registers the import tasks in every process (web included): the services hand work to them by name.
        from imports import tasks  # noqa: F401
