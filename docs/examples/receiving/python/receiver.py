"""Receives web hook exports and verifies their Standard Webhooks signature (the `standardwebhooks` package).

    pip install standardwebhooks
    WEBHOOK_SECRET=whsec_... PORT=8080 python receiver.py

Answers 204 to a verified export and 400 to anything else (a wrong signature, a changed body, a timestamp more
than 5 minutes away). Prints the element keys of each verified export.
"""

from __future__ import annotations

import json
import os
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks import Webhook, WebhookVerificationError

WEBHOOK = Webhook(os.environ["WEBHOOK_SECRET"])  # "whsec_" + base64, as the export queue shows it


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            WEBHOOK.verify(body, headers)  # the raw bytes, exactly as received
        except WebhookVerificationError as exc:
            self.send_response(400)
            self.end_headers()
            self.wfile.write(f"not verified: {exc}".encode())
            return
        # Verified. webhook-id is the same on every attempt of one delivery: drop one already processed.
        print(headers["webhook-id"], sorted(json.loads(body)), flush=True)
        self.send_response(204)
        self.end_headers()


if __name__ == "__main__":
    HTTPServer(("127.0.0.1", int(os.environ.get("PORT", "8080"))), Handler).serve_forever()
