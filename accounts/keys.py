"""API key material: generation, hashing, constant-time comparison. No database access here."""

from __future__ import annotations

import hashlib
import hmac
import secrets

KEY_LEAD = "rk_"
PREFIX_LENGTH = 8
# A fixed hash compared against when no key row matches, so a miss costs the same as a mismatch.
_DUMMY_HASH = hashlib.sha256(b"no-such-key").hexdigest()


def generate_key() -> tuple[str, str, str]:
    """A new key as ``(raw_key, prefix, key_hash)``. The raw key is shown once and never stored."""
    prefix = secrets.token_hex(PREFIX_LENGTH // 2)
    raw_key = f"{KEY_LEAD}{prefix}{secrets.token_urlsafe(32)}"
    return raw_key, prefix, hash_key(raw_key)


def hash_key(raw_key: str) -> str:
    # Keys carry 256 bits of entropy, so a fast hash is as safe as a slow one here.
    return hashlib.sha256(raw_key.encode("utf-8", "surrogatepass")).hexdigest()


def prefix_of(raw_key: str) -> str | None:
    if not raw_key.startswith(KEY_LEAD) or len(raw_key) < len(KEY_LEAD) + PREFIX_LENGTH + 16:
        return None
    return raw_key[len(KEY_LEAD) : len(KEY_LEAD) + PREFIX_LENGTH]


def matches(raw_key: str, key_hash: str | None) -> bool:
    """Constant-time comparison of a presented key with a stored hash (or with nothing)."""
    return hmac.compare_digest(hash_key(raw_key), key_hash or _DUMMY_HASH) and key_hash is not None
