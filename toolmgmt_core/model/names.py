"""The one folding of tool names: every comparison of two names goes through it.

Lookup forgives what a model (or a person) gets wrong about a name that is still clearly the
same name: case, unicode compatibility forms (fullwidth letters, ligatures), invisible
characters (zero-width spaces, soft hyphens, variation selectors, the combining grapheme joiner:
every default-ignorable code point) and the choice of separator (``_``, ``-``, a dash, any
space, ``.``, ``/`` or ``:``, and a run of them, all fold to one ``_``). Whatever lookup
forgives, policy must forgive too, or a deny of ``files_delete`` would miss a tool registered as
``Files.Delete`` that lookup then runs as ``files_delete``. So one function decides, and
everything that compares names uses it:

- the catalog's lookup (:meth:`~toolmgmt_core.ToolCatalog.find`);
- policy and profile patterns (:func:`fold_pattern` folds a glob the same way, keeping its
  ``[...]`` sets), description overrides and ``explain``;
- closest-name suggestions.

A tool is also reached by the name a provider is sent (:func:`provider_safe`: each character a
provider refuses made ``_``, so ``files_deleteé`` is sent, and called, as ``files_delete``).
:func:`name_forms` gives every folded name a tool can be reached by; policy patterns match a tool
when they match any of them, and the catalog refuses a new tool sharing one with a tool it holds.

Separators at the ends are kept (``files_`` folds to ``files_``, not ``files``), so a glob such
as ``files_*`` still covers it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

__all__ = ["fold_name", "fold_pattern", "fold_prefix", "name_forms", "provider_safe"]

_SEPARATOR = "_"
_ASCII_SEPARATORS = str.maketrans(
    {c: _SEPARATOR for c in map(chr, range(128)) if c.isspace() or c in "-./:"}
)
_RUNS = re.compile("_{2,}")

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt), which NFKC keeps: what a
# renderer shows as nothing. Format characters (category Cf) are dropped too.
_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


def _ignorable(char: str) -> bool:
    point = ord(char)
    return unicodedata.category(char) == "Cf" or any(a <= point <= b for a, b in _IGNORABLE)


def _fold_char(char: str) -> str:
    """One character folded (may be empty for an invisible character, or several characters)."""
    if char.isspace() or char in "-./:" or unicodedata.category(char) == "Pd":
        return _SEPARATOR
    if _ignorable(char):
        return ""
    return char


@lru_cache(maxsize=65536)
def fold_name(name: str) -> str:
    """``name`` folded for comparison: NFKC, casefold, trimmed of spaces, invisible characters
    dropped, and each run of separators (``_ - . / :``, dashes, spaces) made one ``_``.

    Two names are the same name exactly when their folds are equal.
    """
    return _fold_text(name.strip())


def fold_prefix(prefix: str) -> str:
    """The start of a name (a gateway's tool prefix) folded as :func:`fold_name` folds names
    that start with it."""
    return _fold_text(prefix.lstrip())


def _fold_text(text: str) -> str:
    """Like :func:`fold_name`, without trimming (a glob's inner pieces keep their spaces as
    separators)."""
    if not text:
        return text
    if text.isascii():  # the common case, ten times faster
        folded = text.lower().translate(_ASCII_SEPARATORS)
    else:
        text = unicodedata.normalize("NFKC", text)
        text = "".join(c for c in text if not _ignorable(c))
        # NFKC(casefold(NFKC(x))): casefolding can leave a string that is not NFKC.
        text = unicodedata.normalize("NFKC", text.casefold())
        folded = "".join(_fold_char(c) for c in text)
    return _RUNS.sub(_SEPARATOR, folded) if "__" in folded else folded


PROVIDER_REFUSED = r"[^a-zA-Z0-9_-]"
"""One character that Anthropic, OpenAI and Gemini refuse in a function name."""


def provider_safe(name: str, refused: str = PROVIDER_REFUSED) -> str:
    """``name`` as a provider is sent it when it refuses some of its characters: each one made
    ``_``, runs of ``_`` collapsed, ``_`` trimmed from the ends (empty when nothing is left);
    ``name`` itself when every character is accepted. See :mod:`toolmgmt_core.providers.names`
    (the length limit, a leading letter, the hash suffix)."""
    cleaned = re.sub(refused, _SEPARATOR, name)
    if cleaned == name:
        return name
    return re.sub(r"_{2,}", _SEPARATOR, cleaned).strip(_SEPARATOR)


@lru_cache(maxsize=65536)
def name_forms(name: str) -> frozenset[str]:
    """Every folded name by which lookup reaches the tool called ``name``: its own fold, and
    the fold of each name a provider is sent for it (also with the ``_`` a provider that
    wants a letter first puts before a digit)."""
    forms = {fold_name(name)}
    safe = provider_safe(name)
    if safe and safe != name:
        forms.add(fold_name(safe))
    if safe and not (safe[0].isalpha() or safe[0] == _SEPARATOR):
        forms.add(fold_name(_SEPARATOR + safe))
    return frozenset(forms)


@lru_cache(maxsize=4096)
def fold_pattern(pattern: str) -> str:
    """A glob (``fnmatch``: ``*``, ``?``, ``[seq]``) folded as :func:`fold_name` folds names.

    Text outside ``[...]`` is folded like a name; inside a set each character is folded on its
    own and ``!`` and range dashes keep their meaning, so ``admin_[a-c]*`` stays a range.
    """
    pattern = pattern.strip()
    out: list[str] = []
    literal: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        end = _set_end(pattern, i) if char == "[" else -1
        if end < 0:
            literal.append(char)
            i += 1
            continue
        out.append(_fold_text("".join(literal)))
        literal = []
        out.append(_fold_set(pattern[i + 1 : end]))
        i = end + 1
    out.append(_fold_text("".join(literal)))
    return "".join(out)


def _set_end(pattern: str, start: int) -> int:
    """The index of the ``]`` closing the set opened at ``start`` (fnmatch's rules), or -1."""
    j = start + 1
    if j < len(pattern) and pattern[j] == "!":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    close = pattern.find("]", j)
    return close


def _fold_set(body: str) -> str:
    """The inside of a ``[...]`` set, each member folded, ``!`` and ranges kept."""
    negate = body.startswith("!")
    members = body[1:] if negate else body
    folded: list[str] = []
    for position, char in enumerate(members):
        is_range = char == "-" and 0 < position < len(members) - 1
        if is_range:
            folded.append(char)
            continue
        one = _fold_text(char) if char != " " else _SEPARATOR
        folded.append(one if len(one) == 1 else char.lower())
    return "[" + ("!" if negate else "") + "".join(folded) + "]"
