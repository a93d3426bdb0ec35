"""Real servers on 127.0.0.1 for the delivery tests: SMTP (aiosmtpd), FTP/FTPS (pyftpdlib), SFTP (asyncssh); their
fixtures (``smtp_server``, ``ftp_server``, ``ftps_server``, ``sftp_server``) are registered for every test by the
root conftest.

The SMTP server is ``tests.support.smtp``'s. Each server runs in a thread on a free port and is stopped when the
test ends. Readiness is awaited by condition: pyftpdlib listens once constructed, aiosmtpd's ``start()`` and
asyncssh's ``listen()`` return once the socket accepts connections.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncssh
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pyftpdlib.authorizers import DummyAuthorizer
from pyftpdlib.handlers import FTPHandler, TLS_FTPHandler
from pyftpdlib.servers import FTPServer

from tests.support.smtp import SmtpServer, running_smtp

FTP_USER = "exporter"
FTP_PASSWORD = "ftp-Secret-9f2c"
SFTP_USER = "exporter"
SFTP_PASSWORD = "sftp-Secret-41aa"


# --- SMTP (tests.support.smtp) -----------------------------------------------------------------------------


@pytest.fixture
def smtp_server(settings: Any) -> Iterator[SmtpServer]:
    with running_smtp(settings) as server:
        yield server


# --- FTP / FTPS --------------------------------------------------------------------------------------------


@dataclass
class FtpServer:
    port: int
    root: Path


def _run_ftp_server(handler: type[FTPHandler], root: Path) -> Iterator[FtpServer]:
    logging.getLogger("pyftpdlib").setLevel(logging.WARNING)
    authorizer = DummyAuthorizer()
    authorizer.add_user(FTP_USER, FTP_PASSWORD, str(root), perm="elradfmwMT")
    handler.authorizer = authorizer
    server = FTPServer(("127.0.0.1", 0), handler)  # listening from here on
    port = int(server.socket.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            server.serve_forever(timeout=0.05, blocking=False, handle_exit=False)
        server.close_all()

    thread = threading.Thread(target=serve, name="test-ftp-server", daemon=True)
    thread.start()
    try:
        yield FtpServer(port=port, root=root)
    finally:
        stop.set()
        thread.join(timeout=10)


@pytest.fixture
def ftp_server(tmp_path: Path) -> Iterator[FtpServer]:
    handler = type("TestFTPHandler", (FTPHandler,), {})
    root = tmp_path / "ftp-root"
    root.mkdir()
    yield from _run_ftp_server(handler, root)


@dataclass(frozen=True)
class Certificate:
    cert_pem: str
    certfile: Path
    keyfile: Path


def _self_signed(directory: Path, name: str) -> Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    certfile = directory / f"{name}.crt"
    keyfile = directory / f"{name}.key"
    certfile.write_text(cert_pem)
    keyfile.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return Certificate(cert_pem=cert_pem, certfile=certfile, keyfile=keyfile)


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    return _self_signed(tmp_path_factory.mktemp("tls"), "ftps-test")


@pytest.fixture(scope="session")
def other_certificate(tmp_path_factory: pytest.TempPathFactory) -> Certificate:
    return _self_signed(tmp_path_factory.mktemp("tls-other"), "someone-else")


@pytest.fixture
def ftps_server(tmp_path: Path, certificate: Certificate) -> Iterator[FtpServer]:
    handler = type(
        "TestTLSFTPHandler",
        (TLS_FTPHandler,),
        {
            "certfile": str(certificate.certfile),
            "keyfile": str(certificate.keyfile),
            "tls_control_required": True,
            "tls_data_required": True,
        },
    )
    root = tmp_path / "ftps-root"
    root.mkdir()
    yield from _run_ftp_server(handler, root)


# --- SFTP --------------------------------------------------------------------------------------------------


@dataclass
class SftpServer:
    port: int
    root: Path
    host_key_line: str  # "ssh-ed25519 AAAA..." as the integrator would hand it over
    client_key_pem: str  # an OpenSSH private key the server accepts for SFTP_USER


class _SshServer(asyncssh.SSHServer):
    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return username == SFTP_USER and password == SFTP_PASSWORD


@pytest.fixture(scope="session")
def ssh_keys() -> tuple[asyncssh.SSHKey, asyncssh.SSHKey]:
    return asyncssh.generate_private_key("ssh-ed25519"), asyncssh.generate_private_key("ssh-ed25519")


@pytest.fixture
def sftp_server(tmp_path: Path, ssh_keys: tuple[asyncssh.SSHKey, asyncssh.SSHKey]) -> Iterator[SftpServer]:
    host_key, client_key = ssh_keys
    root = tmp_path / "sftp-root"
    root.mkdir()
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="test-sftp-server", daemon=True)
    thread.start()

    async def start() -> asyncssh.SSHAcceptor:
        return await asyncssh.listen(
            "127.0.0.1",
            0,
            server_factory=_SshServer,
            server_host_keys=[host_key],
            authorized_client_keys=asyncssh.import_authorized_keys(client_key.export_public_key().decode()),
            sftp_factory=lambda chan: asyncssh.SFTPServer(chan, chroot=str(root).encode()),
            allow_scp=False,
        )

    acceptor = asyncio.run_coroutine_threadsafe(start(), loop).result(timeout=10)
    port = int(acceptor.sockets[0].getsockname()[1])

    async def stop() -> None:
        acceptor.close()
        await acceptor.wait_closed()

    try:
        yield SftpServer(
            port=port,
            root=root,
            host_key_line=host_key.export_public_key().decode().strip(),
            client_key_pem=client_key.export_private_key("openssh").decode(),
        )
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        loop.close()
