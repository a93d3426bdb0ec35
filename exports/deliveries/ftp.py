"""FTP and FTPS delivery (spec: Events -> Delivery methods, "FTP"): pushes the rendered export to a file.

Configuration::

    {
        "type": "ftp",
        "host": "ftp.example.com",                              # required
        "port": 21,                                             # optional, 1..65535
        "username": "exports",                                  # required
        "password": "...",                                      # optional (default ""), a secret
        "tls": false,                                           # FTPS: explicit TLS (AUTH TLS) + PROT P
        "ca_certificate": "-----BEGIN CERTIFICATE-----...",     # optional PEM trusted for FTPS (self-signed)
        "path": "exports/{queue}/{date}/{delivery_id}.{ext}",   # optional template (render_path placeholders)
        "passive": true,                                        # optional, passive data connections
        "timeout": 30,                                          # optional seconds, 1..300
    }

A relative path is relative to the login directory; missing directories are created. The upload is atomic:
``STOR`` to ``.{name}.part`` in the target directory, then ``RNFR``/``RNTO`` to the final name (if the server
refuses to rename over an existing file, the old one is deleted first). The final name depends only on the
template and the delivery id, so delivering the same delivery again overwrites the same file.

FTPS certificates are always verified (system CAs, or ``ca_certificate`` for an integrator's self-signed
certificate) against ``host``; there is no switch to turn verification off. The host is resolved and checked
once by the outbound guard (``core.outbound.check_address``), and the connection goes to that checked
address; a passive-mode reply's address is ignored in favour of the control connection's peer (ftplib's
default), so the data connection cannot be pointed elsewhere.

Failures never raise: ``DeliveryResult(ok=False, error=...)``, never retryable (the spec's retry rule covers web
hooks only); the password never appears in an error message.
"""

from __future__ import annotations

import contextlib
import ftplib
import ssl
from datetime import UTC, datetime
from typing import Any

from core import destinations
from core.outbound import OutboundRefused, check_address, classify_transport
from exports.deliveries.base import (
    ConfigError,
    Delivery,
    DeliveryResult,
    RenderContext,
    Send,
    last_line,
    refuse_masked,
    render_path,
    short_sent,
)

DEFAULT_PATH = "exports/{queue}/{date}/{delivery_id}.{ext}"
# Uploads are read from the rendered output in blocks of this size (a cron batch may be a large file).
UPLOAD_BLOCK_BYTES = 256 * 1024
DEFAULT_TIMEOUT_SECONDS = 30
MAX_TIMEOUT_SECONDS = 300

SAMPLE_CONTEXT = RenderContext(
    queue={"id": 1, "name": "queue", "entity_type": "sale", "trigger": "real_time"},
    account={"identifier": "account", "name": "Account"},
    now=datetime(2000, 1, 1, tzinfo=UTC),
    delivery_id="00000000-0000-0000-0000-000000000000",
)


# Helpers shared with the SFTP delivery: configuration checks for a remote file destination.


def validate_host(config: dict[str, Any]) -> None:
    host = config.get("host")
    if not isinstance(host, str) or not host.strip():
        raise ConfigError("host", "a host name or address is required")
    if len(host) > 253 or any(ch.isspace() for ch in host) or "/" in host:
        raise ConfigError("host", "not a host name or address")


def validate_port(config: dict[str, Any]) -> None:
    port = config.get("port")
    if port is None:
        return
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ConfigError("port", "must be an integer from 1 to 65535")


def validate_timeout(config: dict[str, Any]) -> None:
    timeout = config.get("timeout")
    if timeout is None:
        return
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT_SECONDS:
        raise ConfigError("timeout", f"must be a number of seconds, more than 0 and at most {MAX_TIMEOUT_SECONDS}")


def validate_string(config: dict[str, Any], field: str, *, required: bool) -> None:
    value = config.get(field)
    if value is None and not required:
        return
    if not isinstance(value, str) or (required and not value):
        raise ConfigError(field, "is required" if required and value is None else "must be a non-empty string")


def validate_bool(config: dict[str, Any], field: str) -> None:
    if field in config and not isinstance(config[field], bool):
        raise ConfigError(field, "must be true or false")


def validate_path(config: dict[str, Any]) -> None:
    template = config.get("path", DEFAULT_PATH)
    if not isinstance(template, str) or not template.strip():
        raise ConfigError("path", "must be a non-empty path template")
    path = render_path(template, context=SAMPLE_CONTEXT, delivery_id=SAMPLE_CONTEXT.delivery_id, extension="json")
    try:
        split_remote_path(path)
    except ValueError as exc:
        raise ConfigError("path", str(exc)) from None


def validate_remote(config: dict[str, Any], secret_keys: tuple[str, ...]) -> None:
    """What an FTP and an SFTP configuration both need: no masked secret, a host, a port, a user name, an
    optional password."""
    refuse_masked(config, secret_keys)
    validate_host(config)
    validate_port(config)
    validate_string(config, "username", required=True)
    validate_string(config, "password", required=False)


def remote_path(job: Send) -> tuple[bool, list[str], str]:
    """The configured path template rendered and checked: (absolute, directories, file name). Raises
    RemoteRefused with the reason."""
    try:
        path = render_path(
            job.config.get("path") or DEFAULT_PATH,
            context=job.context,
            delivery_id=job.delivery_id,
            extension=job.rendered.extension,
        )
        return split_remote_path(path)
    except ConfigError as exc:
        raise RemoteRefused(f"path: {exc.message}") from None
    except ValueError as exc:
        raise RemoteRefused(f"path: {exc}") from None


def remote_address(job: Send, *, default_port: int) -> tuple[str, int, str, float]:
    """(host, port, the address the outbound guard checked, the timeout of each operation in seconds). Raises
    RemoteRefused when the guard refuses the host."""
    host: str = job.config["host"]
    port = int(job.config.get("port") or default_port)
    try:
        address = check_address(host, port)[0]
    except OutboundRefused as exc:
        raise RemoteRefused(f"destination refused: {exc}") from None
    # Per operation (core.outbound.timeouts); the task's soft time limit bounds the whole upload.
    return host, port, address, job.within(float(job.config.get("timeout") or DEFAULT_TIMEOUT_SECONDS))


def remote_sent(scheme: str, host: str, port: int, absolute: bool, directories: list[str], name: str, size: int) -> str:
    """What an upload sends, in short: the server, the remote file (relative to the login directory unless it
    starts with ``/``) and its size, as ``ftp://host:21 exports/x.json, 1,234 bytes``."""
    path = ("/" if absolute else "") + "/".join([*directories, name])
    return short_sent(f"{scheme}://{host}:{port} {path}, {size:,} bytes")


class RemoteRefused(Exception):
    """A send refused before connecting (its path, its configuration, its destination): the error to return."""

    def result(self) -> DeliveryResult:
        return DeliveryResult(ok=False, error=str(self))


def split_remote_path(path: str) -> tuple[bool, list[str], str]:
    """``(absolute, directories, file name)`` of a rendered remote path; ValueError for one that is unsafe."""
    if any(ch in path for ch in "\r\n\x00"):
        raise ValueError("the path must not contain line breaks or NUL")
    # A Windows server takes "\\" (and what reads as it) for a separator: "..\\x" would leave the directory.
    if found := destinations.lookalike(path, allowed="@"):
        raise ValueError(f"the path must not contain {destinations.describe(found)}: it reads as \\ or @")
    absolute = path.startswith("/")
    parts = path.strip("/").split("/") if path.strip("/") else []
    if not parts or path.endswith("/"):
        raise ValueError("the path must end with a file name")
    for part in parts:
        if part in ("", ".", ".."):
            raise ValueError(f"the path must not contain an empty, '.' or '..' segment: {path!r}")
    return absolute, parts[:-1], parts[-1]


def redact(message: str, secrets: list[Any]) -> str:
    for secret in secrets:
        if isinstance(secret, str) and secret:
            message = message.replace(secret, "***")
    return message


def transfer_failed(
    exc: BaseException, stage: str, secrets: list[Any], *, connecting: bool, down: bool, sent: str, answer: str
) -> DeliveryResult:
    """A file transfer that failed with ``exc`` at ``stage`` (``FTP upload``, ``SFTP connect``): the error as the
    attempt records it, secrets redacted, and whether the server was unreachable (``classify_transport``)."""
    failure = classify_transport(exc, connecting=connecting, down=down)
    return DeliveryResult(
        ok=False,
        error=redact(f"{stage} failed: {str(exc) or exc.__class__.__name__}", secrets),
        unreachable=failure.unreachable,
        connecting=failure.connecting,
        sent=sent,
        answer=answer,
    )


def _tls_context(config: dict[str, Any]) -> ssl.SSLContext:
    ca_certificate = config.get("ca_certificate")
    if ca_certificate:
        return ssl.create_default_context(cadata=ca_certificate)
    return ssl.create_default_context()


class FtpDelivery(Delivery):
    code = "ftp"
    SECRET_KEYS = ("password",)

    def destination(self, config: dict[str, Any]) -> Any:
        return str(config.get("host") or "").strip().lower(), config.get("port") or 21

    def validate(self, config: dict[str, Any]) -> None:
        validate_remote(config, self.SECRET_KEYS)
        validate_bool(config, "tls")
        validate_bool(config, "passive")
        validate_timeout(config)
        validate_path(config)
        if config.get("ca_certificate") is not None:
            if not config.get("tls"):
                raise ConfigError("ca_certificate", "only used with tls")
            try:
                _tls_context(config)
            except (ssl.SSLError, ValueError, TypeError):
                raise ConfigError("ca_certificate", "not a PEM certificate") from None

    def send(self, job: Send) -> DeliveryResult:
        config = job.config
        secrets = [config.get("password")]
        try:
            absolute, directories, name = remote_path(job)
            host, port, address, timeout = remote_address(job, default_port=21)
        except RemoteRefused as exc:
            return exc.result()
        tls = bool(config.get("tls"))
        sent = remote_sent("ftps" if tls else "ftp", host, port, absolute, directories, name, job.rendered.size())
        # Plain FTP is what many integrators run; FTPS ("tls": true) is offered and verified.
        client: ftplib.FTP = (
            ftplib.FTP_TLS(context=_tls_context(config), timeout=timeout)  # noqa: S321
            if tls
            else ftplib.FTP(timeout=timeout)  # noqa: S321
        )
        temporary = f".{name}.part"
        stage = "connect"
        reply = ""
        try:
            client.connect(address, port, timeout=timeout)
            if isinstance(client, ftplib.FTP_TLS):
                # Connected to the checked address; the certificate is verified against the configured name.
                client.host = host
                stage = "TLS negotiation"
                client.auth()
            stage = "login"
            client.login(config["username"], config.get("password") or "")
            if isinstance(client, ftplib.FTP_TLS):
                client.prot_p()
            client.set_pasv(config.get("passive", True))
            stage = "directory creation"
            if absolute:
                client.cwd("/")
            for directory in directories:
                # It exists already (or cannot be made: the cwd below says so).
                with contextlib.suppress(ftplib.error_perm):
                    client.mkd(directory)
                client.cwd(directory)
            stage = "upload"
            client.storbinary(f"STOR {temporary}", job.rendered.open(), blocksize=UPLOAD_BLOCK_BYTES)
            stage = "rename"
            try:
                reply = client.rename(temporary, name)
            except ftplib.error_perm:
                # Some servers refuse to rename over an existing file: replace it.
                with contextlib.suppress(ftplib.error_perm):
                    client.delete(name)
                reply = client.rename(temporary, name)
        except ftplib.all_errors as exc:
            if stage in ("upload", "rename"):
                _remove_quietly(client, temporary)
            # The server's reply that refused (an ftplib error is its reply line); none when the connection failed.
            answer = last_line(redact(str(exc), secrets)) if isinstance(exc, ftplib.Error) else ""
            return transfer_failed(
                exc,
                f"FTP {stage}",
                secrets,
                # Connecting until the server spoke: an ftplib error is its reply.
                connecting=stage == "connect" and not isinstance(exc, ftplib.Error),
                down=isinstance(exc, ftplib.error_temp),  # a temporary reply (4xx): the server cannot take it now
                sent=sent,
                answer=answer,
            )
        finally:
            _close(client)
        return DeliveryResult(ok=True, sent=sent, answer=last_line(redact(reply, secrets)))


def _remove_quietly(client: ftplib.FTP, name: str) -> None:
    with contextlib.suppress(*ftplib.all_errors):
        client.delete(name)


def _close(client: ftplib.FTP) -> None:
    try:
        if client.sock is not None:
            client.quit()
    except ftplib.all_errors:
        pass
    finally:
        client.close()
