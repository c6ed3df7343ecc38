"""What is removed from a request before anything of it is learned: :func:`redact`.

A request a user typed may hold secrets and personal data. Learning keeps only terms, and
terms fewer principals than the threshold taught only as keyed digests
(:mod:`toolmgmt_core._learning.requests`); before that, :func:`redact` replaces what must never be
kept, even as a digest, by a placeholder that is never a learned term:

- URLs and e-mail addresses (``<url>``, ``<email>``);
- the secrets error text loses too (:func:`~toolmgmt_core._model.redaction.redact_secrets`:
  a connection string's password, keys and tokens of known prefixes, bearer tokens, the word
  after ``password``, ``pin``, ``cvv``, ``token``..., card numbers), and any long mixed token
  of letters and digits (``<secret>``);
- IBANs (``<iban>``), card numbers that pass the Luhn check (``<card>``), and numbers of
  :data:`LONG_DIGITS` digits or more, phone numbers among them (``<number>``);
- street addresses (a house number, words, a street word: ``<address>``) and names after a
  title or a common given name ("mr jones", "john smith": ``<name>``). Capitalised names inside
  a sentence are never learned either (:func:`~toolmgmt_core._learning.requests.learned_words`).
"""

from __future__ import annotations

import re

from toolmgmt_core._model.redaction import luhn_valid, redact_secrets

__all__ = ["LONG_DIGITS", "luhn_valid", "redact"]

LONG_DIGITS = 6
"""A number of this many digits or more (a phone, card or account number) is redacted."""

_URL = re.compile(r"\b(?:https?://|www\.)\S+|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io)/\S*", re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_MIXED = re.compile(r"\b(?=(?:[A-Za-z+/=]*\d){2})(?=(?:[\d+/=]*[A-Za-z]){4})[A-Za-z0-9+/=]{16,}")
"""A token of 16 characters or more of letters and at least two digits: a key, a hash."""
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b", re.I)
_NUMBER = re.compile(r"\+?\d[\d\s().\-/]{4,}\d")
_STREET = (
    r"street|st|road|rd|avenue|ave|lane|ln|drive|dr|boulevard|blvd|way|court|ct|place|pl|"
    r"square|sq|terrace|close|crescent|highway|hwy|parkway|alley|row|strasse|straße|rue|via"
)
_ADDRESS = re.compile(rf"\b\d+[a-z]?,?\s+(?:[a-z'-]+\s+){{0,3}}(?:{_STREET})\b\.?", re.I)
_TITLE = re.compile(
    r"\b(?:[Mm]rs?|[Mm]x|[Dd]r|[Pp]rof)\.?\s+[A-Za-z'-]+|\b(?:Ms|Miss|Sir|Madam)\.?\s+[A-Z][\w'-]+"
)
_GIVEN = (
    "james john jane robert michael william david richard joseph thomas charles christopher daniel "
    "matthew anthony donald steven paul andrew joshua kenneth kevin brian george timothy "
    "ronald jason edward jeffrey ryan jacob gary nicholas eric jonathan stephen larry justin "
    "scott brandon benjamin samuel gregory alexander patrick raymond dennis jerry "
    "tyler aaron jose adam henry nathan douglas zachary peter kyle noah ethan jeremy walter "
    "mary patricia jennifer linda elizabeth barbara susan jessica sarah karen lisa nancy betty "
    "sandra margaret ashley kimberly emily donna michelle carol amanda melissa deborah "
    "stephanie dorothy rebecca sharon laura cynthia amy kathleen angela shirley brenda emma "
    "anna pamela nicole samantha katherine christine helen debra rachel carolyn janet maria "
    "catherine heather diane olivia julie joyce ruth lauren christina "
    "joan evelyn judith andrea hannah megan cheryl jacqueline martha teresa gloria "
    "sara janice kathryn abigail frances alice judy isabella julia "
    "denise danielle marilyn beverly natalie theresa diana brittany doris kayla "
    "alexis lori marie mohammed muhammad ahmed fatima hiroshi yuki priya "
    "raj amit sanjay ivan olga hans klaus pierre luca giulia carlos juan sofia"
)
_NAME = re.compile(
    rf"\b(?:{'|'.join(sorted(set(_GIVEN.split()), key=len, reverse=True))})"
    r"\s+(?!(?:and|or|to|the|a|for|at|in|on|with|from|is|was)\b)[a-z'-]{2,}",
    re.I,
)


def _number(match: re.Match[str]) -> str:
    digits = "".join(c for c in match.group() if c.isdigit())
    if len(digits) < LONG_DIGITS:
        return match.group()
    return "<card>" if 13 <= len(digits) <= 19 and luhn_valid(digits) else "<number>"


def redact(text: str) -> str:
    """``text`` with secrets and personal data replaced by placeholders (see the module
    docstring).

    >>> redact("mail bob@example.com, call +1 415-555-0100 or see https://x.io/a?b=1")
    'mail <email>, call <number> or see <url>'
    >>> redact("refund john smith at 221b baker street london, key sk-live-4f9a8b7c6d5e")
    'refund <name> at <address> london, key <secret>'
    """
    text = redact_secrets(text)
    text = _URL.sub("<url>", text)
    text = _EMAIL.sub("<email>", text)
    text = _IBAN.sub(
        lambda m: "<iban>" if any(c.isdigit() for c in m.group()[4:]) else m.group(), text
    )
    text = _MIXED.sub("<secret>", text)
    text = _NUMBER.sub(_number, text)
    text = _ADDRESS.sub("<address>", text)
    text = _TITLE.sub("<name>", text)
    return _NAME.sub("<name>", text)
