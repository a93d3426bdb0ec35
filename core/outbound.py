"""The one outbound client: every outgoing connection to an integrator (web hooks, FTP, SFTP, runtime
integrations) is guarded here, its failures are classified here and its time limits are decided here.

Not for SMTP's guard: the mail relay comes from the operator's settings and is often local (its timeout does
come from ``timeouts``).

**The guard.** A destination is resolved once per connection; every resolved address must be public (not
loopback, private, link-local, site-local, CGNAT, multicast, reserved or unspecified) unless it lies inside
``OUTBOUND_ALLOWED_NETWORKS`` (CIDRs), and for plain ``http://`` every address must lie inside
``OUTBOUND_ALLOWED_NETWORKS`` (credentials do not cross the internet in clear text). The caller then connects to
the checked address, so a DNS answer that changes between check and connect (DNS rebinding) cannot reach a
refused address, nor get plain http to an address outside the allowed networks: the plain-http rule is judged
by the connection itself, on the addresses of that one resolution. ``http_session()`` gives a requests session
whose connections apply the check at connect time, which follows no redirects, ignores proxy variables and keeps
no cookies.

**One error mapping.** ``classify(exc)`` names what went wrong with a call (``Failure``: the guard refused it, a
timeout, a refused or dropped connection, TLS, an answer cut off or too large, a redirect...), whether the spec's
retry rule retries it and whether it is the destination's own failure (its circuit breaker counts those). Each
caller words the failure its own way. ``classify_transport(exc)`` does the same for the errors of FTP, SFTP and
SMTP (sockets, ``ftplib``, ``paramiko``, ``smtplib``), into the same kinds.

**One timeout policy.** ``timeouts(connect=, read=, total=, left=)`` decides a call's connect and read timeouts and
its deadline for the whole exchange from the destination's configured timeouts, what the caller's own budget has
left (a delivery task's time limit) and what the request being served has left (``core.budget``).

An IPv6 address that carries an IPv4 address (IPv4-mapped ``::ffff:0:0/96``, IPv4-compatible ``::/96``, NAT64
``64:ff9b::/96`` and ``64:ff9b:1::/48``, 6to4 ``2002::/16``, Teredo ``2001::/32``: server and client) reaches that
IPv4 host through the kernel, a translator or a relay, so it is judged by the IPv4 address(es) it carries, and
only by them: every one must be allowed (public, or inside an allowed IPv4 network). So ``::ffff:127.0.0.1`` is
allowed exactly when ``127.0.0.1/32`` is; an IPv6 entry of the allow list (``::/0``, ``64:ff9b::/96``) never
opens the way to an IPv4 address that is refused.
"""

from __future__ import annotations

import http.cookiejar
import ipaddress
import socket
import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache
from typing import Any

import requests
import urllib3.exceptions
from django.conf import settings
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.response import HTTPResponse

from core import budget, deadline

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class OutboundError(Exception):
    """A call this module stopped (its address, its answer); ``classify`` names it."""


class OutboundRefused(OutboundError):
    """The destination resolves to an address this service must not connect to."""


class Unresolved(OutboundRefused):
    """The destination's name resolves to no address now (which may change: a form warns of it, never refuses)."""


class PlainHttpRefused(OutboundRefused):
    """Plain http to a destination with an address outside ``OUTBOUND_ALLOWED_NETWORKS``."""


class AnswerTooLarge(OutboundError):
    """The answer is longer than the caller reads (``read_answer``)."""


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


def _parse(address: str) -> IPAddress:
    return ipaddress.ip_address(address.split("%")[0])


def check_address(host: str, port: int, *, plain_http: bool = False) -> list[str]:
    """Resolve ``host`` once and return its addresses, all allowed; raise OutboundRefused otherwise. With
    ``plain_http`` every address must also lie inside ``OUTBOUND_ALLOWED_NETWORKS`` (a test or on-premises
    integrator; PlainHttpRefused otherwise): credentials must not cross the internet in clear text."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise Unresolved(f"cannot resolve {host!r}: {exc}") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    for address in addresses:
        reason = refusal(_parse(address))
        if reason:
            raise OutboundRefused(f"{host} resolves to {address}: {reason} (see OUTBOUND_ALLOWED_NETWORKS)")
    if not addresses:
        raise Unresolved(f"{host!r} resolves to no address")
    if plain_http:
        # Judged on this resolution's addresses, the ones ``connect`` connects to (no second look-up).
        for address in addresses:
            if not inside_allowed_networks(_parse(address)):
                raise PlainHttpRefused(
                    f"plain http is only allowed inside OUTBOUND_ALLOWED_NETWORKS, and {host} resolves to {address}"
                )
    return addresses


SocketOptions = Iterable[tuple[int, int, int | bytes]]


def connect(
    host: str, port: int, timeout: float | None, *, plain_http: bool = False, options: SocketOptions | None = None
) -> socket.socket:
    """A TCP connection to the first reachable checked address of ``host`` (``check_address``, one resolution;
    ``plain_http``: the connection will carry plain http), with the socket ``options`` set."""
    error: OSError | None = None
    for address in check_address(host, port, plain_http=plain_http):
        try:
            sock = socket.create_connection((address, port), timeout=timeout)
        except OSError as exc:
            error = exc
            continue
        for option in options or ():
            sock.setsockopt(*option)
        return sock
    assert error is not None
    raise error


def _guarded_connection(connection: HTTPConnection, *, plain_http: bool) -> socket.socket:
    """urllib3's ``_new_conn`` through the guard: its errors raised as urllib3 raises them (so that requests
    reports a connect timeout as ``ConnectTimeout``), its socket options (``TCP_NODELAY``) kept."""
    try:
        return connect(
            connection._dns_host,  # type: ignore[attr-defined]
            connection.port,  # type: ignore[arg-type]
            connection.timeout,  # type: ignore[arg-type]
            plain_http=plain_http,
            options=connection.socket_options,
        )
    except TimeoutError as exc:
        raise urllib3.exceptions.ConnectTimeoutError(
            connection, f"Connection to {connection.host} timed out. (connect timeout={connection.timeout})"
        ) from exc
    except OSError as exc:
        raise urllib3.exceptions.NewConnectionError(connection, f"Failed to establish a new connection: {exc}") from exc


class _GuardedHTTPConnection(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        # Plain http: the rule is judged here, on the addresses this connection connects to.
        return _guarded_connection(self, plain_http=True)

    def getresponse(self) -> HTTPResponse:  # type: ignore[override]
        deadline.attach(self.sock)  # a call with a deadline (core.deadline) is cut off there
        return super().getresponse()


class _GuardedHTTPSConnection(HTTPSConnection):
    def _new_conn(self) -> socket.socket:
        return _guarded_connection(self, plain_http=False)

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


# Destinations whose connection pools a session keeps (requests' default, 10, would drop the pools of a worker
# that serves more receivers than that in turn, and reconnect to each every time).
POOLED_DESTINATIONS = 100


# Connections a session keeps per destination (requests' default); more for callers that send from several threads.
DEFAULT_POOL_SIZE = 10


def http_session(*, pool_size: int = DEFAULT_POOL_SIZE) -> requests.Session:
    """A session for outgoing HTTP: the address guard at connect time, no redirects, no proxies from env, no
    cookies (a session is shared by every call of a process or configuration: one partner's cookie must not
    travel with another call). Its adapter keeps one connection pool per destination (scheme, host, port)."""
    session = requests.Session()
    session.trust_env = False
    session.max_redirects = 0
    session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    adapter = _GuardedAdapter(max_retries=0, pool_connections=POOLED_DESTINATIONS, pool_maxsize=pool_size)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


_CHUNK_BYTES = 64 * 1024


def read_answer(response: requests.Response, max_bytes: int, *, truncate: bool = False) -> bytes:
    """The body of a streamed ``response``, at most ``max_bytes`` of it: AnswerTooLarge past that, or with
    ``truncate`` its first ``max_bytes``. An answer not read to its end has its connection closed."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(_CHUNK_BYTES):
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            response.close()
            if not truncate:
                raise AnswerTooLarge(f"the answer is larger than {max_bytes} bytes")
            return b"".join(chunks)[:max_bytes]
    return b"".join(chunks)


# --- one error mapping --------------------------------------------------------------------------------------


class FailureKind(StrEnum):
    """What went wrong with one outgoing call (``classify``, ``classify_transport``)."""

    REFUSED = "refused"  # the guard refused the destination (its address, plain http): nothing was sent
    TIMEOUT = "timeout"  # no answer in time (a connect or read timeout, the call's deadline)
    CONNECTION_REFUSED = "connection_refused"  # nothing listens there
    DROPPED = "dropped"  # the connection was closed or reset before an answer
    TLS = "tls"  # the TLS handshake failed (certificate not verified, or broken off)
    CONNECTION = "connection"  # no connection for another reason (no route, ...)
    CUT_OFF = "cut_off"  # the answer began and was broken off
    TOO_LARGE = "too_large"  # the answer is larger than the caller reads
    REDIRECT = "redirect"  # a redirect, which is never followed
    REQUEST = "request"  # anything else about the request (a malformed URL or header, ...)


@dataclass(frozen=True)
class Failure:
    """What went wrong with one outgoing call (``classify``)."""

    kind: FailureKind
    # For REFUSED and TOO_LARGE the reason in words (the guard's: it names the host and address); otherwise the
    # name of the exception's class (its text may quote the destination's answer or URL).
    detail: str
    retryable: bool  # under the spec's retry rule: a timeout or a refused connection
    unreachable: bool  # the destination itself failed (its circuit breaker counts it), not a refusal of this call
    status: int | None = None  # a redirect's status
    # No connection was made (refused, a connect timeout, no route or name, a TLS handshake broken off): a failure
    # of the host, whatever the path, before any request was sent.
    connecting: bool = False


_UNREACHABLE = frozenset(
    {
        FailureKind.TIMEOUT,
        FailureKind.CONNECTION_REFUSED,
        FailureKind.DROPPED,
        FailureKind.CONNECTION,
        FailureKind.CUT_OFF,
    }
)

# What ``classify`` takes: catch ``FAILURES`` around a call.
FAILURES: tuple[type[BaseException], ...] = (OutboundError, requests.RequestException)


# What requests raises for an answer broken off while it is read.
_BROKEN_ANSWER = (requests.exceptions.ChunkedEncodingError, requests.exceptions.ContentDecodingError)


def classify(exc: BaseException, *, expired: bool = False, answering: bool = False) -> Failure:
    """The failure ``exc`` (one of ``FAILURES``) says. ``expired``: the call's deadline (``core.deadline``)
    passed, so whatever broke, it is a timeout. ``answering``: the answer had begun (its status was read), so a
    broken connection cut the answer off."""
    name = type(exc).__name__
    if isinstance(exc, OutboundRefused):
        return _failure(FailureKind.REFUSED, str(exc))
    if isinstance(exc, AnswerTooLarge):
        return _failure(FailureKind.TOO_LARGE, str(exc))
    if expired or isinstance(exc, requests.Timeout) or _caused_by(exc, TimeoutError, _timeout):
        connecting = not expired and isinstance(exc, requests.ConnectTimeout)
        return replace(_failure(FailureKind.TIMEOUT, name), connecting=connecting)
    if isinstance(exc, requests.TooManyRedirects):
        status = exc.response.status_code if exc.response is not None else None
        return _failure(FailureKind.REDIRECT, name, status=status)
    if answering or isinstance(exc, _BROKEN_ANSWER):
        return _failure(FailureKind.CUT_OFF, name)
    if isinstance(exc, requests.exceptions.SSLError):
        # A certificate that is not verified is the destination's answer (as a 4xx is); a handshake broken off is
        # a dropped connection.
        verify_failed = _caused_by(exc, ssl.SSLCertVerificationError) or "certificate verify failed" in str(exc)
        return Failure(
            FailureKind.TLS, name, retryable=False, unreachable=not verify_failed, connecting=not verify_failed
        )
    if _caused_by(exc, ConnectionRefusedError):
        return replace(_failure(FailureKind.CONNECTION_REFUSED, name), connecting=True)
    if isinstance(exc, requests.ConnectionError):
        if _caused_by(exc, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError)):  # RemoteDisconnected too
            return _failure(FailureKind.DROPPED, name)
        text = repr(exc).lower()  # exceptions made up without a cause (a test double, a proxy's words)
        if "refused" in text:
            return replace(_failure(FailureKind.CONNECTION_REFUSED, name), connecting=True)
        if any(word in text for word in ("reset", "aborted", "remotedisconnected", "without response")):
            return _failure(FailureKind.DROPPED, name)
        new_connection = _caused_by(exc, urllib3.exceptions.NewConnectionError)
        return replace(_failure(FailureKind.CONNECTION, name), connecting=new_connection)
    return _failure(FailureKind.REQUEST, name)


def _failure(kind: FailureKind, detail: str, *, status: int | None = None) -> Failure:
    return Failure(
        kind,
        detail,
        retryable=kind in (FailureKind.TIMEOUT, FailureKind.CONNECTION_REFUSED),
        unreachable=kind in _UNREACHABLE,
        status=status,
    )


def classify_transport(exc: BaseException, *, connecting: bool = False, down: bool = False) -> Failure:
    """The failure a non-HTTP transport's error says (sockets, ``ftplib``, ``smtplib``, ``paramiko``: FTP, SFTP and
    e-mail deliveries), in the kinds ``classify`` uses.

    A timeout or a broken connection (``TimeoutError``, ``ConnectionError``, ``EOFError``) is the destination's
    failure at any stage; while ``connecting`` (TCP connect, TLS or SSH handshake, before the server spoke) any
    ``OSError`` is too. ``down``: the protocol's own word that the destination failed (an FTP server's temporary
    reply, an SSH handshake broken off, an SMTP relay that hung up), whatever the exception. ``connecting`` stays on
    the failure only for a failure of the destination (its host's breaker counts it). These transports have no
    retry rule of their own: ``retryable`` says what the web hooks' rule would."""
    unreachable = (
        down or isinstance(exc, TimeoutError | ConnectionError | EOFError) or (connecting and isinstance(exc, OSError))
    )
    kind = _transport_kind(exc, connecting=connecting)
    return Failure(
        kind,
        type(exc).__name__,
        retryable=kind in (FailureKind.TIMEOUT, FailureKind.CONNECTION_REFUSED),
        unreachable=unreachable,
        connecting=connecting and unreachable,
    )


def _transport_kind(exc: BaseException, *, connecting: bool) -> FailureKind:
    if isinstance(exc, TimeoutError):
        return FailureKind.TIMEOUT
    if isinstance(exc, ConnectionRefusedError):
        return FailureKind.CONNECTION_REFUSED
    if isinstance(exc, ConnectionError | EOFError):  # reset, aborted, a broken pipe, closed before a reply
        return FailureKind.DROPPED
    if isinstance(exc, ssl.SSLError):
        return FailureKind.TLS
    if connecting and isinstance(exc, OSError):  # no route, no such host, ...
        return FailureKind.CONNECTION
    return FailureKind.REQUEST


def _timeout(error: BaseException) -> bool:
    # urllib3's NewConnectionError is a ConnectTimeoutError for backwards compatibility: not a timeout.
    return isinstance(error, urllib3.exceptions.TimeoutError) and not isinstance(
        error, urllib3.exceptions.NewConnectionError
    )


def _caused_by(
    exc: BaseException,
    kinds: type[BaseException] | tuple[type[BaseException], ...],
    also: Callable[[BaseException], bool] | None = None,
) -> bool:
    """Whether an exception of ``kinds`` (or one ``also`` accepts) lies anywhere in the chain requests and urllib3
    wrap it in (causes, contexts, a MaxRetryError's ``reason``, arguments)."""
    stack: list[object] = [exc]
    seen: set[int] = set()
    while stack:
        error = stack.pop()
        if not isinstance(error, BaseException) or id(error) in seen:
            continue
        seen.add(id(error))
        if isinstance(error, kinds) or (also is not None and also(error)):
            return True
        stack.extend([error.__cause__, error.__context__, getattr(error, "reason", None), *error.args])
    return False


# --- one timeout policy -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timeouts:
    """How long one outgoing call may take (``timeouts``)."""

    connect: float  # to connect (for TLS, the handshake too)
    read: float  # each wait for the answer; for FTP, SFTP and SMTP each operation
    # The whole exchange, connecting to the answer's last byte (kept by ``core.deadline`` for HTTP; FTP, SFTP and
    # SMTP are bounded by their task's time limit instead).
    total: float
    # The served request's whole budget (``core.budget``) when what was left of it cut ``total``; else None.
    budget_seconds: float | None = None

    @property
    def per_operation(self) -> tuple[float, float]:
        """requests' ``timeout``: (connect, read)."""
        return (self.connect, self.read)


def timeouts(*, connect: float, read: float, total: float | None = None, left: float | None = None) -> Timeouts:
    """The one timeout policy of outgoing calls.

    ``connect`` and ``read`` are the destination's configured timeouts and ``total`` its configured time for the
    whole exchange (default ``connect + read``). ``left`` is what the caller's own budget has left: a delivery
    task's time limit (``EXPORT_TASK_SOFT_TIME_LIMIT``), so that a send never outlives its task. While a request
    is served under a budget (``core.budget``: the POS API's ``POS_INTEGRATION_BUDGET_SECONDS``) the call gets at
    most what is left of it too (recorded in ``Budget.grants``). No timeout is longer than the total."""
    whole = connect + read if total is None else total
    if left is not None:
        whole = min(whole, left)
    cut_by: float | None = None
    request_budget = budget.current()
    if request_budget is not None:
        granted = request_budget.grant(whole)
        if granted < whole:
            cut_by = request_budget.seconds
        whole = round(granted, 3)
    return Timeouts(connect=min(connect, whole), read=min(read, whole), total=whole, budget_seconds=cut_by)
