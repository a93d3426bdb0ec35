"""A DNS name that answers differently at each look-up (DNS rebinding), and a record of the TCP connections opened,
for the outbound guard's tests."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from core import outbound

PUBLIC = "93.184.215.14"  # a public address: never connected to here (the test double refuses it)
LOOPBACK = "127.0.0.1"
NAME = "rebinding.example"


def record_connections(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The address of every TCP connection opened from now on (the guard's, and the FTP and SFTP deliveries' own:
    ``socket.create_connection``, which ``core.outbound`` calls), each still made."""
    opened: list[Any] = []
    real = socket.create_connection

    def record(address: Any, *args: Any, **kwargs: Any) -> socket.socket:
        opened.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(outbound.socket, "create_connection", record)
    return opened


class Network:
    """A name whose every look-up gives the next answer (a rebinding DNS server), and the TCP connections made:
    only loopback is really connected to."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, answers: list[str]) -> None:
        self.answers = list(answers)
        self.lookups: list[str] = []
        self.connected: list[str] = []
        real_lookup, real_connect = socket.getaddrinfo, socket.create_connection

        def lookup(host: str, port: Any, *args: Any, **kwargs: Any) -> Any:
            if host != NAME:
                return real_lookup(host, port, *args, **kwargs)
            address = self.answers.pop(0)
            self.lookups.append(address)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

        def connect(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
            self.connected.append(address[0])
            if address[0] != LOOPBACK:
                raise ConnectionRefusedError(111, "not on this test's network")
            return real_connect(address, *args, **kwargs)

        monkeypatch.setattr(outbound.socket, "getaddrinfo", lookup)
        monkeypatch.setattr(outbound.socket, "create_connection", connect)
