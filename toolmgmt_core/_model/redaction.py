"""Secrets removed from text that leaves the process: :func:`redact_secrets`.

A tool's failure message is untrusted text that may carry what the tool held: a connection
string with its password, an API key, a bearer token, a card number. The core reads every
exception message of a tool or an upstream through
:func:`~toolmgmt_core._model.errors.exception_message`, and a tool's reported error through the
call's execution, and both pass it here before it reaches the model, a log or a span, at every
integration and in programs. What learning keeps goes through the same rules and more
(:func:`~toolmgmt_core._learning.redaction.redact` adds personal data).

Replaced by ``<secret>`` (``<card>`` for a card number):

- the password of a URL or connection string (``postgresql://admin:<secret>@db/x``);
- keys and tokens with a known prefix (``sk-``, ``pk_``, ``ghp_``, ``github_pat_``, ``xox?-``,
  ``AKIA``, ``AIza``, JWTs);
- what follows ``Bearer``, ``Basic`` or ``Authorization:``;
- the word after ``password``, ``pin``, ``cvv``, ``token``, ``api key``, ``secret``... when it
  follows ``is``, ``=`` or ``:`` or holds a digit;
- numbers of 13 to 19 digits that pass the Luhn check.

Not recognised: a key without a known prefix or a keyword before it (learning also removes any
long mixed token of letters and digits; error text keeps them, as ids and paths look alike).
"""

from __future__ import annotations

import re

__all__ = ["luhn_valid", "redact_line", "redact_secrets"]

CONNECTION_PASSWORD = re.compile(r"\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)(?=@)", re.I)
"""A URL's ``user:password@``: the password is group 2."""
KEY = re.compile(
    r"\b(?:sk|pk|rk)[-_](?:live|test|proj)?[-_]?[\w-]{8,}"
    r"|\b(?:ghp|gho|ghu|ghs|ghr)_\w{8,}|\bgithub_pat_\w{8,}"
    r"|\bxox[abposr]-[\w-]{6,}|\b(?:AKIA|ASIA)[0-9A-Z]{12,}|\bAIza[\w-]{20,}"
    r"|\beyJ[\w-]{8,}\.[\w-]{8,}(?:\.[\w-]+)?",
    re.I,
)
"""Keys and tokens with a known prefix."""
BEARER = re.compile(
    r"\b(authorization\s*[:=]\s*(?:(?:bearer|basic)\s+)?|(?:bearer|basic)\s+)"
    r"(?!<secret>|(?:bearer|basic)\b)[^\s,;\"']{6,}",
    re.I,
)
"""A credential after ``Bearer``, ``Basic`` or ``Authorization:``."""
SECRET_WORD = re.compile(
    r"\b(?:password|passwd|pwd|passcode|passphrase|pin|cvv|cvc|cvv2|security code|token|"
    r"api[ _-]?key|secret)\b(?:\s*(?:is|was|=|:)\s*[^\s,;]+|\s+(?=\S*\d)[^\s,;]+)",
    re.I,
)
"""The word after ``password``, ``pin``... when it follows ``is``, ``=`` or ``:`` or holds a
digit ("password hunter2", "cvv 123"); "reset my password for gmail" keeps its words."""
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (card numbers do)."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        d = int(char)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(match: re.Match[str]) -> str:
    digits = "".join(c for c in match.group() if c.isdigit())
    return "<card>" if luhn_valid(digits) else match.group()


def redact_secrets(text: str) -> str:
    """``text`` with its secrets replaced (see the module docstring).

    >>> redact_secrets("connect postgresql://admin:S3cr3t@db/x failed (key sk-live-4f9a8b7c6d)")
    'connect postgresql://admin:<secret>@db/x failed (key <secret>)'
    """
    text = CONNECTION_PASSWORD.sub(r"\1<secret>", text)
    text = KEY.sub("<secret>", text)
    text = BEARER.sub(r"\1<secret>", text)
    text = SECRET_WORD.sub(lambda m: m.group().split()[0] + " <secret>", text)
    return _CARD.sub(_card, text)


def redact_line(line: str, previous: str = "") -> str:
    """One line of a stream (an upstream's stderr) with its secrets replaced, a credential
    whose keyword ended the ``previous`` line included: a log wrapped at its width may put
    ``Authorization: Bearer`` on one line and the token on the next.

    >>> redact_line("    tok3n-9f8e7d6c5b4a, sent", previous="  (Authorization: Bearer")
    '    <secret> sent'
    """
    line = redact_secrets(line)
    context, words = " ".join(previous.split()[-2:]), line.split(maxsplit=1)
    if not context or not words:
        return line
    if words[0] in redact_secrets(f"{context} {words[0]}"):
        return line
    return line.replace(words[0], "<secret>", 1)
