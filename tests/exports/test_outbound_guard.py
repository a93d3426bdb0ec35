"""The outbound address guard shared by every outgoing connection."""

from __future__ import annotations

import ipaddress

import pytest

from core.outbound import OutboundRefused, check_address, inside_allowed_networks, refusal


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


# Every IPv6 form that carries an IPv4 address is judged by that address (and a plain IPv6 address by itself):
# (address, form, refused with no allowed network, refused when 127.0.0.1/32 is allowed).
FORMS = [
    ("::ffff:127.0.0.1", "IPv4-mapped loopback", True, False),
    ("::ffff:10.0.0.1", "IPv4-mapped private", True, True),
    ("::ffff:8.8.8.8", "IPv4-mapped public", False, False),
    ("::127.0.0.1", "IPv4-compatible loopback", True, False),
    ("::10.0.0.1", "IPv4-compatible private", True, True),
    ("::8.8.8.8", "IPv4-compatible public", False, False),
    ("64:ff9b::7f00:1", "NAT64 loopback", True, False),
    ("64:ff9b::a9fe:a9fe", "NAT64 link-local (metadata service)", True, True),
    ("64:ff9b::808:808", "NAT64 public", False, False),
    ("64:ff9b:1::7f00:1", "NAT64 local-use, /96 reading loopback", True, True),
    ("64:ff9b:1:7f00:0:1::", "NAT64 local-use, /48 reading loopback", True, True),
    ("64:ff9b:1:808:8:808:808:808", "NAT64 local-use, public in every reading", False, False),
    ("2002:7f00:1::", "6to4 loopback", True, False),
    ("2002:c0a8:101::1", "6to4 private", True, True),
    ("2002:808:808::1", "6to4 public", False, False),
    ("2001:0:808:808::80ff:fffe", "Teredo, client 127.0.0.1", True, False),
    ("2001:0:a00:1::f7f7:f7f7", "Teredo, server 10.0.0.1", True, True),
    ("2001:0:808:808::fefe:fefe", "Teredo, public server and client", False, False),
    ("fec0::1", "site-local", True, True),
    ("feff::1", "site-local, top of the block", True, True),
    ("4000::1", "reserved (unassigned)", True, True),
    ("::1", "loopback", True, True),
    ("::", "unspecified", True, True),
    ("fe80::1", "link-local", True, True),
    ("fc00::1", "unique local", True, True),
    ("ff02::1", "multicast", True, True),
    ("2606:4700:4700::1111", "public", False, False),
]


@pytest.mark.parametrize(
    ("address", "refused_by_default", "refused_with_loopback_allowed"),
    [pytest.param(address, default, loopback, id=form) for address, form, default, loopback in FORMS],
)
def test_every_ipv6_form_is_judged_by_the_ipv4_address_it_carries(
    settings, address: str, refused_by_default: bool, refused_with_loopback_allowed: bool
):
    ip = ipaddress.ip_address(address)

    settings.OUTBOUND_ALLOWED_NETWORKS = []
    assert (refusal(ip) is not None) is refused_by_default, refusal(ip)
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    assert (refusal(ip) is not None) is refused_with_loopback_allowed, refusal(ip)


def test_the_refusal_names_the_form_and_the_ipv4_address(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []

    assert refusal(ipaddress.ip_address("64:ff9b::7f00:1")) == "NAT64 address of 127.0.0.1: not a public address"
    assert refusal(ipaddress.ip_address("2001:0:808:808::80ff:fffe")) == (
        "Teredo client address of 127.0.0.1: not a public address"
    )


def test_an_allowed_ipv6_network_does_not_open_the_way_to_an_ipv4_address_it_carries(settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["::/0", "64:ff9b::/96"]

    assert refusal(ipaddress.ip_address("::ffff:10.0.0.1")) is not None
    assert refusal(ipaddress.ip_address("64:ff9b::a00:1")) is not None
    assert refusal(ipaddress.ip_address("fd00::1")) is None  # a plain IPv6 address inside ::/0 is allowed


@pytest.mark.parametrize(
    ("address", "inside"),
    [("::ffff:127.0.0.1", True), ("64:ff9b::7f00:1", True), ("::ffff:127.0.0.2", False), ("::1", False)],
)
def test_plain_http_is_allowed_to_an_ipv6_form_of_an_allowed_ipv4_address(settings, address: str, inside: bool):
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]

    assert inside_allowed_networks(ipaddress.ip_address(address)) is inside
