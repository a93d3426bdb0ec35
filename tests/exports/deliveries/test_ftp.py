from __future__ import annotations

from typing import Any

import pytest

from exports.deliveries.base import ConfigError, RenderContext, Rendered
from exports.deliveries.ftp import FtpDelivery
from tests.support.servers import FTP_PASSWORD, FTP_USER, Certificate, FtpServer

pytestmark = pytest.mark.usefixtures("allow_loopback")


def config(server: FtpServer, **overrides: Any) -> dict[str, Any]:
    return {
        "type": "ftp",
        "host": "127.0.0.1",
        "port": server.port,
        "username": FTP_USER,
        "password": FTP_PASSWORD,
        "timeout": 5,
        **overrides,
    }


def test_file_arrives_at_the_rendered_path_byte_for_byte(
    ftp_server: FtpServer, rendered: Rendered, context: RenderContext
) -> None:
    result = FtpDelivery().deliver(rendered, config=config(ftp_server), delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    target = ftp_server.root / "exports" / "sales" / "2025-03-04" / "dlv-1.csv"
    assert target.read_bytes() == rendered.content


def test_no_temporary_file_is_left_behind(ftp_server: FtpServer, rendered: Rendered, context: RenderContext) -> None:
    FtpDelivery().deliver(rendered, config=config(ftp_server), delivery_id="dlv-1", context=context)

    directory = ftp_server.root / "exports" / "sales" / "2025-03-04"
    assert sorted(p.name for p in directory.iterdir()) == ["dlv-1.csv"]


def test_missing_directories_are_created_for_an_absolute_path(
    ftp_server: FtpServer, rendered: Rendered, context: RenderContext
) -> None:
    cfg = config(ftp_server, path="/in/{account}/{queue_id}/{time}-{delivery_id}.{ext}")

    result = FtpDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    assert (ftp_server.root / "in" / "acme" / "7" / "050607-dlv-1.csv").read_bytes() == rendered.content


def test_redelivering_the_same_delivery_id_overwrites_the_file(
    ftp_server: FtpServer, rendered: Rendered, context: RenderContext
) -> None:
    delivery = FtpDelivery()
    delivery.deliver(rendered, config=config(ftp_server), delivery_id="dlv-1", context=context)
    second = Rendered(content=b"second version", content_type="text/csv", extension="csv")

    result = delivery.deliver(second, config=config(ftp_server), delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    directory = ftp_server.root / "exports" / "sales" / "2025-03-04"
    assert sorted(p.name for p in directory.iterdir()) == ["dlv-1.csv"]
    assert (directory / "dlv-1.csv").read_bytes() == b"second version"


def test_active_mode_upload_works(ftp_server: FtpServer, rendered: Rendered, context: RenderContext) -> None:
    result = FtpDelivery().deliver(
        rendered, config=config(ftp_server, passive=False), delivery_id="dlv-1", context=context
    )

    assert result.ok, result.error
    assert (ftp_server.root / "exports" / "sales" / "2025-03-04" / "dlv-1.csv").read_bytes() == rendered.content


def test_wrong_password_fails_without_revealing_it(
    ftp_server: FtpServer, rendered: Rendered, context: RenderContext
) -> None:
    cfg = config(ftp_server, password="Wrong-Pass-123")

    result = FtpDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert not result.ok
    assert not result.retryable
    assert "login" in result.error
    assert "Wrong-Pass-123" not in result.error and FTP_PASSWORD not in result.error


def test_a_loopback_destination_is_refused_by_default(
    settings: Any, ftp_server: FtpServer, rendered: Rendered, context: RenderContext
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []

    result = FtpDelivery().deliver(rendered, config=config(ftp_server), delivery_id="dlv-1", context=context)

    assert not result.ok
    assert result.error.startswith("destination refused: ")
    assert not (ftp_server.root / "exports").exists()


def test_ftps_upload_with_the_servers_self_signed_certificate(
    ftps_server: FtpServer, certificate: Certificate, rendered: Rendered, context: RenderContext
) -> None:
    cfg = config(ftps_server, tls=True, ca_certificate=certificate.cert_pem)

    result = FtpDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    directory = ftps_server.root / "exports" / "sales" / "2025-03-04"
    assert sorted(p.name for p in directory.iterdir()) == ["dlv-1.csv"]
    assert (directory / "dlv-1.csv").read_bytes() == rendered.content


def test_ftps_refuses_a_certificate_it_does_not_trust(
    ftps_server: FtpServer, other_certificate: Certificate, rendered: Rendered, context: RenderContext
) -> None:
    cfg = config(ftps_server, tls=True, ca_certificate=other_certificate.cert_pem)

    result = FtpDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert not result.ok
    assert "TLS negotiation failed" in result.error and "certificate verify failed" in result.error
    assert not (ftps_server.root / "exports").exists()


def test_plain_ftp_to_a_server_requiring_tls_fails(
    ftps_server: FtpServer, rendered: Rendered, context: RenderContext
) -> None:
    result = FtpDelivery().deliver(rendered, config=config(ftps_server), delivery_id="dlv-1", context=context)

    assert not result.ok
    assert FTP_PASSWORD not in result.error


def test_a_path_that_renders_unsafe_fails_without_connecting(rendered: Rendered, context: RenderContext) -> None:
    cfg = {"type": "ftp", "host": "192.0.2.1", "username": "u", "path": "exports/{queue}/../{ext}"}

    result = FtpDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert not result.ok
    assert result.error.startswith("path: ")


BASE = {"type": "ftp", "host": "ftp.example.com", "username": "u", "password": "p"}


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"host": None}, "host"),
        ({"host": ""}, "host"),
        ({"host": "ftp example.com"}, "host"),
        ({"port": 0}, "port"),
        ({"port": 70000}, "port"),
        ({"port": "21"}, "port"),
        ({"port": True}, "port"),
        ({"username": None}, "username"),
        ({"password": 5}, "password"),
        ({"tls": "yes"}, "tls"),
        ({"passive": 1}, "passive"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": 1000}, "timeout"),
        ({"path": "exports/{nope}.{ext}"}, "path"),
        ({"path": "exports/{queue"}, "path"),
        ({"path": "exports/"}, "path"),
        ({"path": "exports/../{delivery_id}.{ext}"}, "path"),
        ({"path": ""}, "path"),
        ({"tls": True, "ca_certificate": "not a certificate"}, "ca_certificate"),
        ({"ca_certificate": "x"}, "ca_certificate"),
    ],
)
def test_validate_names_the_bad_field(overrides: dict[str, Any], field: str) -> None:
    cfg = {key: value for key, value in {**BASE, **overrides}.items() if value is not None}

    with pytest.raises(ConfigError) as excinfo:
        FtpDelivery().validate(cfg)

    assert excinfo.value.field == field


def test_validate_accepts_a_full_configuration(certificate: Certificate) -> None:
    FtpDelivery().validate(
        {
            **BASE,
            "port": 990,
            "tls": True,
            "ca_certificate": certificate.cert_pem,
            "passive": False,
            "timeout": 12.5,
            "path": "/upload/{account}/{date}/{time}-{delivery_id}.{ext}",
        }
    )
