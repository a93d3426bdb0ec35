<?php
// Receives web hook exports and verifies their Standard Webhooks signature, written by hand after the
// specification (https://www.standardwebhooks.com/): no Composer package needed.
//
//     WEBHOOK_SECRET=whsec_... php -S 127.0.0.1:8080 receiver.php
//
// Answers 204 to a verified export and 400 to anything else (a wrong signature, a changed body, a timestamp more
// than 5 minutes away). Logs the element keys of each verified export.

// True when one of the signatures is HMAC-SHA256 over "id.timestamp.body" with the secret's bytes.
function verify_webhook(string $secret, string $body, string $id, string $timestamp, string $signatures): bool
{
    if ($id === '' || !ctype_digit($timestamp) || abs(time() - (int) $timestamp) > 300) {
        return false;
    }
    $key = base64_decode(preg_replace('/^whsec_/', '', $secret), true);
    if ($key === false) {
        return false;
    }
    $expected = base64_encode(hash_hmac('sha256', "$id.$timestamp.$body", $key, true));
    foreach (explode(' ', $signatures) as $signature) {
        [$version, $value] = array_pad(explode(',', $signature, 2), 2, '');
        if ($version === 'v1' && hash_equals($expected, $value)) {
            return true;
        }
    }
    return false;
}

$body = file_get_contents('php://input'); // the raw body, exactly as received
$verified = verify_webhook(
    getenv('WEBHOOK_SECRET') ?: '', // "whsec_" + base64, as the export queue shows it
    $body,
    $_SERVER['HTTP_WEBHOOK_ID'] ?? '',
    $_SERVER['HTTP_WEBHOOK_TIMESTAMP'] ?? '',
    $_SERVER['HTTP_WEBHOOK_SIGNATURE'] ?? ''
);
if (!$verified) {
    http_response_code(400);
    echo 'not verified';
    return;
}
// Verified. webhook-id is the same on every attempt of one delivery: drop one already processed.
error_log($_SERVER['HTTP_WEBHOOK_ID'] . ' ' . implode(',', array_keys(json_decode($body, true))));
http_response_code(204);
