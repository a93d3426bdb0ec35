"""Ports on 127.0.0.1 for the servers tests start."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on now: bound and released, for a server to take (or a connection to be refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
