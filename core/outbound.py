"""The one guard for every outgoing connection to an integrator (web hooks, FTP, SFTP, runtime integrations).

Not for SMTP: the mail relay comes from the operator's settings and is often local.

A destination is resolved once; every resolved address must be public (not loopback, private, link-local,
site-local, CGNAT, multicast, reserved or unspecified) unless it lies inside ``OUTBOUND_ALLOWED_NETWORKS``
(CIDRs). The caller then connects to the checked address, so a DNS answer that changes between check and connect
(DNS rebinding) cannot reach a refused address. ``http_session()`` gives a requests session whose connections
apply the check at connect time and which follows no redirects and ignores proxy variables.

An IPv6 address that carries an IPv4 address (IPv4-mapped ``::ffff:0:0/96``, IPv4-compatible ``::/96``, NAT64
``64:ff9b::/96`` and ``64:ff9b:1::/48``, 6to4 ``2002::/16``, Teredo ``2001::/32``: server and client) reaches that
IPv4 host through the kernel, a translator or a relay, so it is judged by the IPv4 address(es) it carries, and
only by them: every one must be allowed (public, or inside an allowed IPv4 network). So ``::ffff:127.0.0.1`` is
allowed exactly when ``127.0.0.1/32`` is; an IPv6 entry of the allow list (``::/0``, ``64:ff9b::/96``) never
opens the way to an IPv4 address that is refused.
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
from urllib3.response import HTTPResponse

from core import deadline

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class OutboundRefused(Exception):
    """The destination resolves to an address this service must not connect to."""


@cache
def _parse_networks(values: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(value.strip(), strict=False) for value in values if value.strip())


def allowed_networks() -> tuple[IPNetwork, ...]:
    return _parse_networks(tuple(settings.OUTBOUND_ALLOWED_NETWORKS))


# Forms of IPv6 address that carry an IPv4 address (see the module docstring).
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")
_LOW32 = 0xFFFFFFFF


def embedded_ipv4(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses ``ip`` carries, each with the name of its form; empty for a plain IPv6 address."""
    value = int(ip)
    if ip.ipv4_mapped is not None:
        return [("IPv4-mapped", ip.ipv4_mapped)]
    if ip in _IPV4_COMPATIBLE and value > 1:  # :: and ::1 are the unspecified and loopback addresses
        return [("IPv4-compatible", ipaddress.IPv4Address(value & _LOW32))]
    if ip in _NAT64:
        return [("NAT64", ipaddress.IPv4Address(value & _LOW32))]
    if ip in _NAT64_LOCAL:
        # RFC 6052: the translator's prefix length decides where the IPv4 address sits; a local-use prefix may
        # be /48, /56, /64 or /96 inside 64:ff9b:1::/48, so every possible place is judged.
        return [("NAT64", address) for address in _rfc6052_candidates(value)]
    if ip.sixtofour is not None:
        return [("6to4", ip.sixtofour)]
    if ip.teredo is not None:
        server, client = ip.teredo  # the client's address is stored XOR 0xffffffff; ``teredo`` undoes it
        return [("Teredo server", server), ("Teredo client", client)]
    return []


def _rfc6052_candidates(value: int) -> list[ipaddress.IPv4Address]:
    def octets(*spans: tuple[int, int]) -> ipaddress.IPv4Address:
        # (bit offset from the left, number of bits) of the IPv4 address's pieces, skipping bits 64-71 ("u").
        number = 0
        for start, length in spans:
            number = (number << length) | ((value >> (128 - start - length)) & ((1 << length) - 1))
        return ipaddress.IPv4Address(number)

    return list(
        dict.fromkeys(
            [
                octets((96, 32)),  # /96, the common layout, first: it names the address in the refusal
                octets((72, 32)),  # /64
                octets((56, 8), (72, 24)),  # /56
                octets((48, 16), (72, 16)),  # /48
            ]
        )
    )


def refusal(ip: IPAddress) -> str | None:
    """Why the address is refused, or None when it may be connected to."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = embedded_ipv4(ip)
        if embedded:
            for form, address in embedded:
                reason = refusal(address)
                if reason:
                    return f"{form} address of {address}: {reason}"
            return None
    if any(ip in network for network in allowed_networks()):
        return None
    if ip.is_multicast:
        return "multicast address"
    if not ip.is_global:
        # is_global is False for loopback, private, link-local, CGNAT (100.64/10), unspecified, IPv4's reserved.
        return "not a public address"
    if isinstance(ip, ipaddress.IPv6Address) and ip in _SITE_LOCAL:
        return "site-local address"  # fec0::/10, deprecated (RFC 3879) but still routed inside some sites
    if ip.is_reserved:
        return "reserved address"  # IPv6 outside the assigned blocks (e.g. 4000::/3), never on the internet
    return None


def inside_allowed_networks(ip: IPAddress) -> bool:
    """Whether ``ip`` lies inside ``OUTBOUND_ALLOWED_NETWORKS`` (an IPv6 form carrying IPv4 addresses: whether
    all of them do). Plain http is only allowed there."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = embedded_ipv4(ip)
        if embedded:
            return all(inside_allowed_networks(address) for _, address in embedded)
    return any(ip in network for network in allowed_networks())


def plain_http_allowed(host: str, port: int) -> bool:
    """Whether every address of ``host`` lies inside ``OUTBOUND_ALLOWED_NETWORKS`` (a test or on-premises
    integrator): credentials must not cross the internet in clear text. Raises OutboundRefused like
    ``check_address``."""
    return all(inside_allowed_networks(_parse(address)) for address in check_address(host, port))


def _parse(address: str) -> IPAddress:
    return ipaddress.ip_address(address.split("%")[0])


def check_address(host: str, port: int) -> list[str]:
    """Resolve ``host`` and return its addresses, all allowed; raise OutboundRefused otherwise."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise OutboundRefused(f"cannot resolve {host!r}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        reason = refusal(_parse(address))
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

    def getresponse(self) -> HTTPResponse:  # type: ignore[override]
        deadline.attach(self.sock)  # a call with a deadline (core.deadline) is cut off there
        return super().getresponse()


class _GuardedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return connect(self._dns_host, self.port, self.timeout)  # type: ignore[arg-type]

    def getresponse(self) -> HTTPResponse:  # type: ignore[override]
        deadline.attach(self.sock)
        return super().getresponse()


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
