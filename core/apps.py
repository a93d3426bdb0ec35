from django.apps import AppConfig


class CoreConfig(AppConfig):
    """``core`` is an app only for the tables every app shares (the circuit breakers); it imports no app."""

    name = "core"
