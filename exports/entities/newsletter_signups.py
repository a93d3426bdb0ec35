"""Newsletter signup events (spec: Events; payload "not shown", decided in the README).

Element key: ``"signup-<id>"``; the e-mail address is personal data and stays out of keys and file names.
"""

from __future__ import annotations

from core.outbox import EntityType
from exports.entities.documents import document_entity
from ledger.outbox import signup_key as element_key

ENTITY = document_entity(
    code=EntityType.NEWSLETTER_SIGNUPS,
    model_label="ledger.NewsletterSignup",
    element_key="signup-<id>",
    key_of=element_key,
)
