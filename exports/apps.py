from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"

    def ready(self) -> None:
        # Importing at ready(), when every app's models are loaded: the checks register themselves, and the
        # outbox's door hands the entities the domain apps offer (core.outbox.offer) to the export queues.
        from core import outbox
        from exports import checks, services  # noqa: F401 - the checks register on import

        outbox.register(services.offered)
