from __future__ import annotations

from typing import Any

import asyncssh
import pytest

from exports.deliveries.base import ConfigError, RenderContext, Rendered
from exports.deliveries.sftp import SftpDelivery
from tests.support.servers import SFTP_PASSWORD, SFTP_USER, SftpServer

pytestmark = pytest.mark.usefixtures("allow_loopback")


def config(server: SftpServer, **overrides: Any) -> dict[str, Any]:
    return {
        "type": "sftp",
        "host": "127.0.0.1",
        "port": server.port,
        "username": SFTP_USER,
        "password": SFTP_PASSWORD,
        "host_key": server.host_key_line,
        "timeout": 5,
        **overrides,
    }


def target(server: SftpServer, name: str = "dlv-1.csv") -> Any:
    return server.root / "exports" / "sales" / "2025-03-04" / name


def test_file_arrives_at_the_rendered_path_byte_for_byte(
    sftp_server: SftpServer, rendered: Rendered, context: RenderContext
) -> None:
    result = SftpDelivery().deliver(rendered, config=config(sftp_server), delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    assert target(sftp_server).read_bytes() == rendered.content
    assert sorted(p.name for p in target(sftp_server).parent.iterdir()) == ["dlv-1.csv"]


def test_redelivering_the_same_delivery_id_overwrites_the_file(
    sftp_server: SftpServer, rendered: Rendered, context: RenderContext
) -> None:
    delivery = SftpDelivery()
    delivery.deliver(rendered, config=config(sftp_server), delivery_id="dlv-1", context=context)
    second = Rendered(content=b"second version", content_type="text/csv", extension="csv")

    result = delivery.deliver(second, config=config(sftp_server), delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    assert target(sftp_server).read_bytes() == b"second version"
    assert sorted(p.name for p in target(sftp_server).parent.iterdir()) == ["dlv-1.csv"]


def test_private_key_authentication(sftp_server: SftpServer, rendered: Rendered, context: RenderContext) -> None:
    cfg = config(sftp_server, password=None, private_key=sftp_server.client_key_pem, path="/drop/{delivery_id}.{ext}")

    result = SftpDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    assert (sftp_server.root / "drop" / "dlv-1.csv").read_bytes() == rendered.content


def test_a_known_hosts_line_is_accepted_as_host_key(
    sftp_server: SftpServer, rendered: Rendered, context: RenderContext
) -> None:
    cfg = config(sftp_server, host_key=f"[127.0.0.1]:{sftp_server.port} {sftp_server.host_key_line}")

    result = SftpDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert result.ok, result.error


def test_an_unknown_host_key_is_refused_before_authenticating(
    sftp_server: SftpServer, rendered: Rendered, context: RenderContext
) -> None:
    stranger = asyncssh.generate_private_key("ssh-ed25519").export_public_key().decode()

    result = SftpDelivery().deliver(
        rendered, config=config(sftp_server, host_key=stranger), delivery_id="dlv-1", context=context
    )

    assert not result.ok
    assert "host key" in result.error and "refused" in result.error
    assert SFTP_PASSWORD not in result.error
    assert not (sftp_server.root / "exports").exists()


def test_any_host_key_only_with_the_explicit_insecure_flag(
    sftp_server: SftpServer, rendered: Rendered, context: RenderContext
) -> None:
    cfg = config(sftp_server, host_key=None, insecure_accept_any_host_key=True)

    result = SftpDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert result.ok, result.error


def test_no_host_key_and_no_flag_fails(sftp_server: SftpServer, rendered: Rendered, context: RenderContext) -> None:
    result = SftpDelivery().deliver(
        rendered, config=config(sftp_server, host_key=None), delivery_id="dlv-1", context=context
    )

    assert not result.ok
    assert result.error.startswith("host_key")


def test_wrong_password_fails_without_revealing_it(
    sftp_server: SftpServer, rendered: Rendered, context: RenderContext
) -> None:
    result = SftpDelivery().deliver(
        rendered, config=config(sftp_server, password="Wrong-Pass-123"), delivery_id="dlv-1", context=context
    )

    assert not result.ok
    assert not result.retryable
    assert "authentication" in result.error
    assert "Wrong-Pass-123" not in result.error


def test_a_loopback_destination_is_refused_by_default(
    settings: Any, sftp_server: SftpServer, rendered: Rendered, context: RenderContext
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []

    result = SftpDelivery().deliver(rendered, config=config(sftp_server), delivery_id="dlv-1", context=context)

    assert not result.ok
    assert result.error.startswith("destination refused: ")


def test_a_closed_port_is_a_failure_not_an_exception(rendered: Rendered, context: RenderContext) -> None:
    from tests.support.ports import free_port

    cfg = {
        "type": "sftp",
        "host": "127.0.0.1",
        "port": free_port(),
        "username": "u",
        "password": "p",
        "insecure_accept_any_host_key": True,
        "timeout": 5,
    }

    result = SftpDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert not result.ok
    assert "connect failed" in result.error


BASE = {"type": "sftp", "host": "sftp.example.com", "username": "u", "password": "p"}
HOST_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"host": None}, "host"),
        ({"port": 0}, "port"),
        ({"port": "22"}, "port"),
        ({"username": None}, "username"),
        ({"password": None}, "password"),
        ({"private_key": "-----BEGIN OPENSSH PRIVATE KEY-----\nxx\n"}, "password"),
        ({"password": None, "private_key": "garbage"}, "private_key"),
        ({"host_key": None}, "host_key"),
        ({"host_key": "ssh-ed25519 not-base64!"}, "host_key"),
        ({"host_key": "ssh-ed25519"}, "host_key"),
        ({"host_key": "# only a comment"}, "host_key"),
        ({"host_key": None, "insecure_accept_any_host_key": "yes"}, "insecure_accept_any_host_key"),
        ({"timeout": -1}, "timeout"),
        ({"path": "{delivery_id}.{extension}"}, "path"),
    ],
)
def test_validate_names_the_bad_field(overrides: dict[str, Any], field: str) -> None:
    cfg = {key: value for key, value in {**BASE, "host_key": HOST_KEY, **overrides}.items() if value is not None}

    with pytest.raises(ConfigError) as excinfo:
        SftpDelivery().validate(cfg)

    assert excinfo.value.field == field


def test_validate_accepts_key_authentication_and_the_insecure_flag(sftp_server: SftpServer) -> None:
    SftpDelivery().validate(
        {
            "type": "sftp",
            "host": "sftp.example.com",
            "port": 2222,
            "username": "u",
            "private_key": sftp_server.client_key_pem,
            "insecure_accept_any_host_key": True,
            "path": "/in/{queue}/{delivery_id}.{ext}",
        }
    )


def test_validate_error_never_quotes_the_private_key() -> None:
    secret_key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END OPENSSH PRIVATE KEY-----\n"
    )

    with pytest.raises(ConfigError) as excinfo:
        SftpDelivery().validate({**BASE, "password": None, "private_key": secret_key, "host_key": HOST_KEY})

    assert "c2VjcmV0" not in str(excinfo.value)
