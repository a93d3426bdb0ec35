"""The runtime-integration fixtures (a reference integrator on 127.0.0.1), for the answers hostile integrators give."""

from tests.integrations.conftest import allow_loopback, configure, reference  # noqa: F401
