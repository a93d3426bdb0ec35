"""The outbound address guard shared by every outgoing connection."""

from __future__ import annotations

import ipaddress

import pytest

from integrations.outbound import OutboundRefused, check_address, refusal


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
    ],
)
def test_non_public_addresses_are_refused(settings, address):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    assert refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_are_allowed(settings, address):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    assert refusal(ipaddress.ip_address(address)) is None


def test_an_allowed_network_lets_its_addresses_through(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    assert refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert refusal(ipaddress.ip_address("127.0.0.2")) is not None


def test_a_name_is_checked_after_resolution(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    with pytest.raises(OutboundRefused, match="not a public address"):
        check_address("localhost", 80)
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32", "::1/128"]
    assert "127.0.0.1" in check_address("localhost", 80)
