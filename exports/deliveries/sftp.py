"""SFTP delivery: pushes the rendered export to a file over SSH (one of the spec's "further delivery methods").

Configuration::

    {
        "type": "sftp",
        "host": "sftp.example.com",                             # required
        "port": 22,                                             # optional, 1..65535
        "username": "exports",                                  # required
        "password": "...",                                      # a secret; or
        "private_key": "-----BEGIN OPENSSH PRIVATE KEY-----...", # a secret (PEM/OpenSSH text: Ed25519, ECDSA, RSA)
        "private_key_passphrase": "...",                        # optional, a secret
        "host_key": "ssh-ed25519 AAAA...",                      # required unless the next flag is true
        "insecure_accept_any_host_key": false,                  # explicit opt-out of host key checking
        "path": "exports/{queue}/{date}/{delivery_id}.{ext}",   # optional template (render_path placeholders)
        "timeout": 30,                                          # optional seconds, 1..300
    }

Host keys: an unknown host key is refused. ``host_key`` holds one or more lines in ``authorized_keys`` form
(``ssh-ed25519 AAAA... comment``) or ``known_hosts`` form (``host ssh-ed25519 AAAA...``); the connection is
accepted only when the server presents one of them (the key exchange asks for those key types first). Skipping
the check needs the explicit ``"insecure_accept_any_host_key": true`` - a man in the middle would then get the
password and the export.

Exactly one of ``password`` and ``private_key`` is required. A relative path is relative to the login
directory; missing directories are created. The upload is atomic: write ``.{name}.part`` in the target
directory, then rename it to the final name with ``posix-rename@openssh.com`` (which replaces an existing file)
when the server supports it, else remove the old file and rename. The same delivery id always gives the same
final name, so a redelivery overwrites it.

The host is resolved and checked once by the outbound guard (``core.outbound.check_address``) and the
socket connects to that checked address. Failures never raise: ``DeliveryResult(ok=False, error=...)``, never
retryable (the spec's retry rule covers web hooks only); passwords and keys never appear in error messages.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import socket
import stat
from typing import Any

import paramiko

from exports.deliveries.base import (
    ConfigError,
    Delivery,
    DeliveryResult,
    Send,
    short_answer,
)
from exports.deliveries.ftp import (
    UPLOAD_BLOCK_BYTES,
    RemoteRefused,
    redact,
    remote_address,
    remote_path,
    remote_sent,
    transfer_failed,
    validate_bool,
    validate_path,
    validate_remote,
    validate_string,
    validate_timeout,
)

_PRIVATE_KEY_CLASSES: tuple[type[paramiko.PKey], ...] = (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey)
# Host key algorithms to offer for a configured key type (an RSA key signs with SHA-2 nowadays).
_ALGORITHMS = {"ssh-rsa": ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa")}


class HostKeyMismatch(Exception):
    pass


def parse_host_keys(text: str) -> list[paramiko.PKey]:
    """The public keys in ``host_key``; ValueError for a line that is not a key."""
    keys: list[paramiko.PKey] = []
    for line in text.splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        # known_hosts lines start with the host pattern; authorized_keys-style lines with the key type.
        if len(fields) >= 3 and not fields[0].startswith(("ssh-", "ecdsa-")):
            fields = fields[1:]
        if len(fields) < 2:
            raise ValueError("expected 'key-type base64-key'")
        try:
            key_bytes = base64.b64decode(fields[1], validate=True)
            keys.append(paramiko.PKey.from_type_string(fields[0], key_bytes))
        except (binascii.Error, paramiko.SSHException, ValueError, TypeError) as exc:
            raise ValueError(f"not a public key of a supported type ({fields[0]}): {exc.__class__.__name__}") from None
    if not keys:
        raise ValueError("no host key given")
    return keys


def load_private_key(text: str, passphrase: str | None) -> paramiko.PKey:
    for key_class in _PRIVATE_KEY_CLASSES:
        try:
            return key_class.from_private_key(io.StringIO(text), password=passphrase)
        except paramiko.PasswordRequiredException:
            raise ValueError("the private key is encrypted and needs private_key_passphrase") from None
        except (paramiko.SSHException, ValueError, TypeError, IndexError):
            continue
    # Deliberately no detail: the parser's message could quote part of the key.
    raise ValueError("not a readable Ed25519, ECDSA or RSA private key (or wrong passphrase)")


class SftpDelivery(Delivery):
    code = "sftp"
    SECRET_KEYS = ("password", "private_key", "private_key_passphrase")

    def destination(self, config: dict[str, Any]) -> Any:
        return str(config.get("host") or "").strip().lower(), config.get("port") or 22

    def validate(self, config: dict[str, Any]) -> None:
        validate_remote(config, self.SECRET_KEYS)
        validate_string(config, "private_key", required=False)
        validate_string(config, "private_key_passphrase", required=False)
        validate_bool(config, "insecure_accept_any_host_key")
        validate_timeout(config)
        validate_path(config)
        has_password = bool(config.get("password"))
        has_key = bool(config.get("private_key"))
        if has_password == has_key:
            raise ConfigError("password", "give exactly one of password and private_key")
        if has_key:
            try:
                load_private_key(config["private_key"], config.get("private_key_passphrase") or None)
            except ValueError as exc:
                raise ConfigError("private_key", str(exc)) from None
        host_key = config.get("host_key")
        if host_key is None:
            if not config.get("insecure_accept_any_host_key"):
                raise ConfigError(
                    "host_key", "the server's host key is required (or insecure_accept_any_host_key: true)"
                )
        else:
            if not isinstance(host_key, str):
                raise ConfigError("host_key", "must be a string")
            try:
                parse_host_keys(host_key)
            except ValueError as exc:
                raise ConfigError("host_key", str(exc)) from None

    def send(self, job: Send) -> DeliveryResult:
        config = job.config
        secrets = [config.get("password"), config.get("private_key"), config.get("private_key_passphrase")]
        try:
            absolute, directories, name = remote_path(job)
            expected_keys, private_key = _keys(config)
            host, port, address, timeout = remote_address(job, default_port=22)
        except RemoteRefused as exc:
            return exc.result()
        sent = remote_sent("sftp", host, port, absolute, directories, name, job.rendered.size())
        at = _Stage()
        sock: socket.socket | None = None
        transport: paramiko.Transport | None = None
        try:
            sock = socket.create_connection((address, port), timeout=timeout)
            transport = paramiko.Transport(sock)
            _handshake(transport, expected_keys, timeout, at)
            at.name = "authentication"
            if private_key is not None:
                transport.auth_publickey(config["username"], private_key)
            else:
                transport.auth_password(config["username"], config["password"])
            at.name = "SFTP session"
            _upload(transport, job, (absolute, directories, name), timeout, at)
        except HostKeyMismatch as exc:
            return DeliveryResult(
                ok=False, error=f"SFTP host key check failed: {exc}", sent=sent, answer=_answer(transport)
            )
        except paramiko.AuthenticationException as exc:
            return DeliveryResult(
                ok=False,
                error=redact(f"SFTP {at.name} failed: {str(exc) or 'authentication failed'}", secrets),
                sent=sent,
                answer=_answer(transport),
            )
        except (OSError, EOFError, paramiko.SSHException) as exc:
            # A server that accepts the connection and never speaks fails the handshake (no SSH banner).
            connecting = at.name in ("connect", "SSH handshake")
            down = connecting and isinstance(exc, paramiko.SSHException)
            return transfer_failed(
                exc, f"SFTP {at.name}", secrets, connecting=connecting, down=down, sent=sent, answer=_answer(transport)
            )
        finally:
            if transport is not None:
                transport.close()
            elif sock is not None:
                sock.close()
        return DeliveryResult(ok=True, sent=sent, answer=_answer(transport))


class _Stage:
    """Where a send is, for the error that names it."""

    name = "connect"


def _handshake(
    transport: paramiko.Transport, expected_keys: list[paramiko.PKey] | None, timeout: float, at: _Stage
) -> None:
    """SSH's handshake, offering only the expected host keys' algorithms, then the key the server showed checked
    against them. Raises HostKeyMismatch."""
    transport.banner_timeout = timeout
    transport.handshake_timeout = timeout
    transport.auth_timeout = timeout
    if expected_keys is not None:
        offered: list[str] = []
        for key in expected_keys:
            for algorithm in _ALGORITHMS.get(key.get_name(), (key.get_name(),)):
                if algorithm not in offered:
                    offered.append(algorithm)
        transport.get_security_options().key_types = offered
    at.name = "SSH handshake"
    transport.start_client(timeout=timeout)
    server_key = transport.get_remote_server_key()
    if expected_keys is not None and not any(
        key.get_name() == server_key.get_name() and key.asbytes() == server_key.asbytes() for key in expected_keys
    ):
        raise HostKeyMismatch(f"unknown host key {server_key.get_name()} {server_key.fingerprint}; refused")


def _upload(
    transport: paramiko.Transport, job: Send, place: tuple[bool, list[str], str], timeout: float, at: _Stage
) -> None:
    """The file written under a temporary name in its directories (made when missing), then renamed over the
    final name, so a reader never sees half a file; the temporary one removed when that fails."""
    absolute, directories, name = place
    client = paramiko.SFTPClient.from_transport(transport)
    if client is None:
        raise paramiko.SSHException("the server refused the SFTP subsystem")
    channel = client.get_channel()
    if channel is not None:
        channel.settimeout(timeout)
    with client:
        at.name = "directory creation"
        _make_directories(client, absolute, directories)
        directory = ("/" if absolute else "") + "/".join(directories)
        final = f"{directory}/{name}" if directory not in ("", "/") else f"{directory}{name}"
        temporary = final[: len(final) - len(name)] + f".{name}.part"
        at.name = "upload"
        try:
            with client.open(temporary, "wb") as remote_file:
                remote_file.set_pipelined(True)
                source = job.rendered.open()
                while block := source.read(UPLOAD_BLOCK_BYTES):
                    remote_file.write(block)
            at.name = "rename"
            _rename_over(client, temporary, final)
        except (OSError, paramiko.SSHException):
            _remove_quietly(client, temporary)
            raise


def _answer(transport: paramiko.Transport | None) -> str:
    """What an attempt keeps of the server's answer: SFTP has no reply lines, so its SSH identification line
    (``SSH-2.0-OpenSSH_9.6``), once it sent one; a refusal's message is in the error."""
    return short_answer(transport.remote_version if transport is not None and transport.remote_version else "")


def _keys(config: dict[str, Any]) -> tuple[list[paramiko.PKey] | None, paramiko.PKey | None]:
    """The host keys the server may present (None: any, when explicitly allowed) and the private key to log in
    with (None: the password). Raises RemoteRefused for a configuration that cannot work."""
    try:
        expected_keys = parse_host_keys(config["host_key"]) if config.get("host_key") else None
        private_key = (
            load_private_key(config["private_key"], config.get("private_key_passphrase") or None)
            if config.get("private_key")
            else None
        )
    except ValueError as exc:
        raise RemoteRefused(f"configuration: {exc}") from None
    if expected_keys is None and not config.get("insecure_accept_any_host_key"):
        raise RemoteRefused("host_key: the server's host key is required")
    return expected_keys, private_key


def _make_directories(client: paramiko.SFTPClient, absolute: bool, directories: list[str]) -> None:
    current = "/" if absolute else ""
    for directory in directories:
        current = f"{current}{directory}"
        try:
            attributes = client.stat(current)
        except FileNotFoundError:
            try:
                client.mkdir(current)
            except OSError:
                # Made concurrently by another delivery, or a real failure: the stat below tells.
                attributes = client.stat(current)
                if attributes.st_mode is None or not stat.S_ISDIR(attributes.st_mode):
                    raise
        else:
            if attributes.st_mode is not None and not stat.S_ISDIR(attributes.st_mode):
                raise NotADirectoryError(f"{current} exists and is not a directory")
        current = f"{current}/"


def _rename_over(client: paramiko.SFTPClient, temporary: str, final: str) -> None:
    try:
        client.posix_rename(temporary, final)
        return
    except OSError:
        pass  # posix-rename@openssh.com not supported: fall back to remove + rename
    with contextlib.suppress(FileNotFoundError):
        client.remove(final)
    client.rename(temporary, final)


def _remove_quietly(client: paramiko.SFTPClient, name: str) -> None:
    with contextlib.suppress(OSError, paramiko.SSHException):
        client.remove(name)
