"""Every delivery that connects to an integrator (web hook, FTP, SFTP) goes through the outbound guard, which
judges an IPv6 address by the IPv4 address it carries: a real server listens on 127.0.0.1 and none of its IPv6
forms reaches it unless 127.0.0.1 is allowed."""

from __future__ import annotations

from typing import Any

import pytest

from exports.deliveries.base import RenderContext, Rendered
from exports.deliveries.ftp import FtpDelivery
from exports.deliveries.sftp import SftpDelivery
from exports.deliveries.webhook import WebhookDelivery
from tests.support.rebinding import LOOPBACK, NAME, PUBLIC, Network, record_connections
from tests.support.receivers import Receiver
from tests.support.servers import FTP_PASSWORD, FTP_USER, SFTP_PASSWORD, SFTP_USER, FtpServer, SftpServer

# Each form carries 127.0.0.1 (Teredo: as its client address, behind a public server).
FORMS = ["::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::", "2001:0:808:808::80ff:fffe"]


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every TCP connection a delivery opens (the guard's and the FTP/SFTP deliveries' own)."""
    return record_connections(monkeypatch)


@pytest.fixture
def nothing_allowed(settings: Any) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []


@pytest.mark.usefixtures("nothing_allowed")
@pytest.mark.parametrize("address", FORMS)
def test_a_web_hook_to_an_ipv6_form_of_loopback_is_refused_without_connecting(
    receiver: Receiver, connections: list[Any], rendered: Rendered, context: RenderContext, address: str
) -> None:
    port = receiver.url.split(":")[2].split("/")[0]
    config = {"type": "webhook", "url": f"https://[{address}]:{port}/hook"}

    result = WebhookDelivery().deliver(rendered, config=config, delivery_id="dlv-1", context=context)

    assert not result.ok and not result.retryable
    assert result.error.startswith("destination refused:") and "127.0.0.1" in result.error
    assert connections == [] and receiver.received == []


@pytest.mark.usefixtures("nothing_allowed")
@pytest.mark.parametrize("address", FORMS)
def test_an_ftp_upload_to_an_ipv6_form_of_loopback_is_refused_without_connecting(
    ftp_server: FtpServer, connections: list[Any], rendered: Rendered, context: RenderContext, address: str
) -> None:
    config = {"type": "ftp", "host": address, "port": ftp_server.port, "username": FTP_USER, "password": FTP_PASSWORD}

    result = FtpDelivery().deliver(rendered, config=config, delivery_id="dlv-1", context=context)

    assert result.error.startswith("destination refused:") and "127.0.0.1" in result.error
    assert connections == [] and list(ftp_server.root.iterdir()) == []


@pytest.mark.usefixtures("nothing_allowed")
@pytest.mark.parametrize("address", FORMS)
def test_an_sftp_upload_to_an_ipv6_form_of_loopback_is_refused_without_connecting(
    sftp_server: SftpServer, connections: list[Any], rendered: Rendered, context: RenderContext, address: str
) -> None:
    config = {
        "type": "sftp",
        "host": address,
        "port": sftp_server.port,
        "username": SFTP_USER,
        "password": SFTP_PASSWORD,
        "host_key": sftp_server.host_key_line,
    }

    result = SftpDelivery().deliver(rendered, config=config, delivery_id="dlv-1", context=context)

    assert result.error.startswith("destination refused:") and "127.0.0.1" in result.error
    assert connections == [] and list(sftp_server.root.iterdir()) == []


@pytest.mark.usefixtures("allow_loopback")
def test_a_web_hook_over_plain_http_reaches_the_ipv4_mapped_form_of_an_allowed_address(
    receiver: Receiver, rendered: Rendered, context: RenderContext
) -> None:
    config = {"type": "webhook", "url": receiver.url.replace("127.0.0.1", "[::ffff:127.0.0.1]")}

    result = WebhookDelivery().deliver(rendered, config=config, delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    assert len(receiver.received) == 1


@pytest.mark.usefixtures("allow_loopback")
def test_a_web_hook_to_a_name_rebound_to_a_public_address_goes_to_the_address_plain_http_was_judged_on(
    receiver: Receiver, rendered: Rendered, context: RenderContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Inside the allowed networks at the first look-up, public at the next: one look-up, judged and connected to.
    network = Network(monkeypatch, [LOOPBACK, PUBLIC])
    config = {"type": "webhook", "url": receiver.url.replace(LOOPBACK, NAME), "headers": {"Authorization": "t0k"}}

    result = WebhookDelivery().deliver(rendered, config=config, delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    assert (network.lookups, network.connected) == ([LOOPBACK], [LOOPBACK])
    assert [r.headers["Authorization"] for r in receiver.received] == ["t0k"]


@pytest.mark.usefixtures("allow_loopback")
def test_a_web_hook_over_plain_http_to_a_name_resolving_to_a_public_address_is_refused_without_connecting(
    receiver: Receiver, rendered: Rendered, context: RenderContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    network = Network(monkeypatch, [PUBLIC, LOOPBACK])
    config = {"type": "webhook", "url": receiver.url.replace(LOOPBACK, NAME)}

    result = WebhookDelivery().deliver(rendered, config=config, delivery_id="dlv-1", context=context)

    assert (result.ok, result.retryable, result.unreachable) == (False, False, False)
    assert result.error.startswith("destination refused: plain http is only allowed inside OUTBOUND_ALLOWED_NETWORKS")
    assert (network.lookups, network.connected) == ([PUBLIC], [])
    assert receiver.received == []
