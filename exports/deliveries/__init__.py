"""The registry of deliveries, keyed by the code stored in a queue's ``delivery["type"]``."""

from __future__ import annotations

from exports.deliveries.base import Delivery
from exports.deliveries.email import EmailDelivery
from exports.deliveries.ftp import FtpDelivery
from exports.deliveries.sftp import SftpDelivery
from exports.deliveries.webhook import WebhookDelivery

REGISTRY: dict[str, Delivery] = {d.code: d for d in (WebhookDelivery(), EmailDelivery(), FtpDelivery(), SftpDelivery())}
