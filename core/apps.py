from django.apps import AppConfig


class CoreConfig(AppConfig):
    """``core`` is an app only for the tables every app shares (the circuit breakers); it imports no app."""

    name = "core"

    def ready(self) -> None:
        # DRF's settings name modules of core.api (the pagination class), which DRF's generic views import when they
        # are defined, and core.api defines its view sets on DRF's generic views: whichever is imported first must
        # be core.api, or each finds the other half-loaded. Loaded here, before the URLs import DRF's views.
        from core import api  # noqa: F401
