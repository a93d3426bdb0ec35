// Receives web hook exports and verifies their Standard Webhooks signature (the `standardwebhooks` package).
//
//     npm ci
//     WEBHOOK_SECRET=whsec_... PORT=8080 node receiver.js
//
// Answers 204 to a verified export and 400 to anything else (a wrong signature, a changed body, a timestamp more
// than 5 minutes away). Prints the element keys of each verified export.
"use strict";

const http = require("node:http");
const { Webhook } = require("standardwebhooks");

const webhook = new Webhook(process.env.WEBHOOK_SECRET); // "whsec_" + base64, as the export queue shows it

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8"); // the raw body, exactly as received
    let payload;
    try {
      payload = webhook.verify(body, req.headers); // Node gives the header names in lower case
    } catch (err) {
      res.writeHead(400).end(`not verified: ${err.message}`);
      return;
    }
    // Verified. webhook-id is the same on every attempt of one delivery: drop one already processed.
    console.log(req.headers["webhook-id"], Object.keys(payload).sort());
    res.writeHead(204).end();
  });
});

server.listen(Number(process.env.PORT || 8080), "127.0.0.1");
