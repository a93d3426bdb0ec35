"""A private ``redis-server`` (a free port of 127.0.0.1, nothing kept on disk), killed and started again at will:
the broker of the broker-outage test, and of the soak and scale-out benchmarks (bench/soak.py, bench/scaleout.py).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import redis

from tests.support.ports import free_port
from tests.support.waiting import wait_until

REDIS_SERVER = shutil.which("redis-server")


class PrivateRedis:
    """``redis-server`` on a free port, killed and started at will, keeping nothing on disk."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it and wait (10 s at the most) until it answers; RuntimeError when it is not installed or does not
        answer."""
        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not installed")
        self.process = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            cwd=self.workdir,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

        try:
            wait_until(answers, 10, message="the private Redis to answer")
        except AssertionError as exc:
            raise RuntimeError(str(exc)) from None

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
