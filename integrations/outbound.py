"""The one guard for every outgoing connection to an integrator (web hooks, FTP, SFTP, runtime integrations).

Not for SMTP: the mail relay comes from the operator's settings and is often local.

A destination is resolved once; every resolved address must be public (not loopback, private, link-local,
CGNAT, multicast, reserved or unspecified) unless it lies inside ``OUTBOUND_ALLOWED_NETWORKS`` (CIDRs). The
caller then connects to the checked address, so a DNS answer that changes between check and connect (DNS
rebinding) cannot reach a refused address. ``http_session()`` gives a requests session whose connections
apply the check at connect time and which follows no redirects and ignores proxy variables.
"""

from __future__ import annotations

import ipaddress
import socket
from functools import cache
from typing import Any

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class OutboundRefused(Exception):
    """The destination resolves to an address this service must not connect to."""


@cache
def _parse_networks(values: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(value.strip(), strict=False) for value in values if value.strip())


def allowed_networks() -> tuple[IPNetwork, ...]:
    return _parse_networks(tuple(settings.OUTBOUND_ALLOWED_NETWORKS))


def refusal(ip: IPAddress) -> str | None:
    """Why the address is refused, or None when it may be connected to."""
    if any(ip in network for network in allowed_networks()):
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return refusal(ip.ipv4_mapped)
    if ip.is_multicast:
        return "multicast address"
    if not ip.is_global:
        # is_global is False for loopback, private, link-local, CGNAT (100.64/10), reserved, unspecified.
        return "not a public address"
    return None


def check_address(host: str, port: int) -> list[str]:
    """Resolve ``host`` and return its addresses, all allowed; raise OutboundRefused otherwise."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise OutboundRefused(f"cannot resolve {host!r}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        reason = refusal(ipaddress.ip_address(address.split("%")[0]))
        if reason:
            raise OutboundRefused(f"{host} resolves to {address}: {reason} (see OUTBOUND_ALLOWED_NETWORKS)")
    if not addresses:
        raise OutboundRefused(f"{host!r} resolves to no address")
    return addresses


def connect(host: str, port: int, timeout: float | None) -> socket.socket:
    """A TCP connection to the first reachable checked address of ``host``."""
    error: OSError | None = None
    for address in check_address(host, port):
        try:
            return socket.create_connection((address, port), timeout=timeout)
        except OSError as exc:
            error = exc
    assert error is not None
    raise error


class _GuardedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        return connect(self._dns_host, self.port, self.timeout)  # type: ignore[arg-type]


class _GuardedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return connect(self._dns_host, self.port, self.timeout)  # type: ignore[arg-type]


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _GuardedHTTPSConnection


class _GuardedAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _GuardedHTTPPool, "https": _GuardedHTTPSPool}


def http_session() -> requests.Session:
    """A session for outgoing HTTP: the address guard at connect time, no redirects, no proxies from env."""
    session = requests.Session()
    session.trust_env = False
    session.max_redirects = 0
    adapter = _GuardedAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
