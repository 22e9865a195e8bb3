"""Keep API keys out of messages and logs."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

_KEYLIKE = re.compile(r"\b(sk|pk|rk|key|api)[-_][A-Za-z0-9_\-]{8,}\b")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with each secret, and anything shaped like an API key, replaced by ``***``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
            # Providers echo keys truncated ("sk-abc...xyz"): hide any long prefix too.
            if len(secret) > 12:
                text = text.replace(secret[:12], "***")
    return _KEYLIKE.sub("***", text)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts the given secrets from every record it passes."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message, self.secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True
