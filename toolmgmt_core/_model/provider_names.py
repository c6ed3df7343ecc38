"""Tool names as each provider accepts them, and the way back.

Providers restrict function names: Anthropic and OpenAI accept ``^[a-zA-Z0-9_-]{1,64}$``;
Gemini also wants the first character to be a letter or an underscore. toolmgmt keeps any name in
its catalog, so names are mapped when formatting:

- a name the provider accepts is sent unchanged;
- otherwise each rejected character (a dot, a space, a slash, an accented letter...) becomes
  ``_`` and runs of ``_`` collapse;
- a name still too long is cut and ends with ``_`` plus an 8-character hash of the original name,
  so two long names sharing a prefix never collide;
- when two tools of one request would still map to the same name, the mapped ones get the hash
  suffix too.

The mapping is reversible: :class:`NameMap` holds it for one request, and
:func:`resolve_provider_name` finds the original name of a provider-form name among candidates
without any stored state (the session's ``_resolve`` uses it when a model calls a tool by the name
it was sent).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from toolmgmt_core._model.names import PROVIDER_REFUSED, provider_safe

__all__ = [
    "NAME_RULES",
    "NameMap",
    "NameRules",
    "build_name_map",
    "provider_name",
    "resolve_provider_name",
]

_HASH_CHARS = 8


@dataclass(frozen=True)
class NameRules:
    """What one provider accepts as a function name."""

    max_length: int
    """Longest name accepted."""
    invalid_chars: str
    """A regex character class matching one character the provider rejects."""
    must_start_with: str | None = None
    """A regex character class the first character must match, or None for any valid char."""

    def is_valid(self, name: str) -> bool:
        """Whether the provider accepts ``name`` unchanged."""
        if not name or len(name) > self.max_length or re.search(self.invalid_chars, name):
            return False
        return self.must_start_with is None or bool(re.match(self.must_start_with, name))


_PLAIN = NameRules(max_length=64, invalid_chars=PROVIDER_REFUSED)

NAME_RULES: Mapping[str, NameRules] = {
    "anthropic": _PLAIN,
    "openai": _PLAIN,
    "openai-responses": _PLAIN,
    "gemini": NameRules(64, PROVIDER_REFUSED, must_start_with="[a-zA-Z_]"),
}
"""Name rules per provider."""


def _rules(provider: str | NameRules) -> NameRules:
    if isinstance(provider, NameRules):
        return provider
    try:
        return NAME_RULES[provider]
    except KeyError:
        valid = ", ".join(sorted(NAME_RULES))
        raise ValueError(f"Unknown provider {provider!r}; valid providers: {valid}.") from None


def _name_hash(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:_HASH_CHARS]


def _sanitize(name: str, rules: NameRules) -> str:
    cleaned = provider_safe(name, rules.invalid_chars) or "tool"
    if rules.must_start_with is not None and not re.match(rules.must_start_with, cleaned):
        cleaned = "_" + cleaned
    return cleaned


def _with_hash(base: str, original: str, rules: NameRules) -> str:
    suffix = "_" + _name_hash(original)
    head = base[: rules.max_length - len(suffix)].rstrip("_") or "t"
    return head + suffix


def provider_name(name: str, provider: str | NameRules = "openai", *, hashed: bool = False) -> str:
    """The name sent to ``provider`` for a tool called ``name``, on its own.

    Args:
        name: The tool's name in the catalog.
        provider: A provider key (``anthropic``, ``openai``, ``openai-responses``, ``gemini``)
            or explicit :class:`NameRules`.
        hashed: Force the hash suffix (used to break a collision inside one request).

    Returns:
        ``name`` itself when the provider accepts it (and ``hashed`` is false); otherwise a valid
        name derived from it.
    """
    rules = _rules(provider)
    if rules.is_valid(name) and not hashed:
        return name
    base = _sanitize(name, rules)
    if hashed or len(base) > rules.max_length:
        return _with_hash(base, name, rules)
    return base


@dataclass
class NameMap:
    """The names of one request: provider name <-> original name."""

    to_provider: dict[str, str] = field(default_factory=dict)
    """Original name -> name sent to the provider."""
    to_original: dict[str, str] = field(default_factory=dict)
    """Name sent to the provider -> original name."""

    def provider_name(self, name: str) -> str:
        """The provider-form name of the tool called ``name`` (itself when not mapped)."""
        return self.to_provider.get(name, name)

    def original(self, provider_name: str) -> str:
        """The original name of a name the model used (itself when not mapped)."""
        return self.to_original.get(provider_name, provider_name)

    @property
    def renamed(self) -> dict[str, str]:
        """Only the names that changed: provider name -> original name."""
        return {p: o for p, o in self.to_original.items() if p != o}


def build_name_map(names: Iterable[str], provider: str | NameRules = "openai") -> NameMap:
    """Map every name of one request to a distinct name ``provider`` accepts.

    Names the provider accepts keep their names; a mapped name that collides with another name of
    the request gets the hash suffix (hashes of distinct names differ, so the result is unique).

    Raises:
        ValueError: when ``names`` holds the same name twice.
    """
    rules = _rules(provider)
    originals = list(names)
    if len(set(originals)) != len(originals):
        seen: set[str] = set()
        dupes = sorted({n for n in originals if n in seen or seen.add(n)})  # type: ignore[func-returns-value]
        raise ValueError(f"Duplicate tool names in one request: {', '.join(dupes)}.")
    first = {n: provider_name(n, rules) for n in originals}
    counts: dict[str, int] = {}
    for mapped in first.values():
        counts[mapped] = counts.get(mapped, 0) + 1
    result = NameMap()
    for original, mapped in first.items():
        if mapped != original and counts[mapped] > 1:
            mapped = provider_name(original, rules, hashed=True)
        result.to_provider[original] = mapped
        result.to_original[mapped] = original
    return result


_DISTINCT_RULES = tuple(dict.fromkeys(NAME_RULES.values()))
_HASHED = re.compile(rf"_[0-9a-f]{{{_HASH_CHARS}}}$")


def _forms(name: str, *, hashed: bool) -> set[str]:
    forms = set()
    for rules in _DISTINCT_RULES:
        forms.add(provider_name(name, rules))
        if hashed:
            forms.add(provider_name(name, rules, hashed=True))
    return forms


def resolve_provider_name(name: str, candidates: Iterable[str]) -> str | None:
    """The original name among ``candidates`` that ``name`` is the provider form of.

    Works without stored state: each candidate's provider forms (for every provider, plain and
    hashed) are computed and compared with ``name``.

    Args:
        name: A name as a model used it (``crm_search_contacts`` for ``crm.search contacts``).
        candidates: The names it may stand for (the session's visible tools).

    Returns:
        The one matching candidate; ``name`` itself when it is a candidate; None when nothing
        matches or more than one candidate does without a hash telling them apart.
    """
    pool = list(candidates)
    if name in pool:
        return name
    hashed = bool(_HASHED.search(name))  # only then can it be a hashed form
    matches = [c for c in pool if name in _forms(c, hashed=hashed)]
    if len(matches) == 1:
        return matches[0]
    return None
