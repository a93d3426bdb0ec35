from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"

    def ready(self) -> None:
        # Importing at ready(), when every app's models are loaded: the checks register themselves, and the
        # outbox (core.outbox) hands the entities the domain apps offer (core.outbox.offer) to the export queues; the
        # services hand deliveries to the tasks by their names in Celery's registry (no services <-> tasks cycle).
        from core import outbox
        from exports import checks, services, tasks  # noqa: F401 - the checks and tasks register on import

        outbox.register(services.offered, reader=services.queues_read_along)
