"""The one folding of tool names: every comparison of two names goes through it.

Lookup forgives what a model (or a person) gets wrong about a name that is still clearly the
same name: case, unicode compatibility forms (fullwidth letters, ligatures), invisible format
characters (zero-width spaces, soft hyphens) and the choice of separator (``-``, a dash or any
space for ``_``). Whatever lookup forgives, policy must forgive too, or a deny of
``files_delete`` would miss a tool registered as ``Files Delete`` that lookup then runs as
``files_delete``. So one function decides, and everything that compares names uses it:

- the catalog's lookup (:meth:`~toolmgmt_core.catalog.ToolCatalog.find`) and its refusal of a
  new name that folds to a name it already holds;
- policy and profile patterns (:func:`fold_pattern` folds a glob the same way, keeping its
  ``[...]`` sets), description overrides and ``explain``;
- closest-name suggestions.

Dots are not folded: ``math.gcd`` and ``math_gcd`` are different tools in real catalogs.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

__all__ = ["fold_name", "fold_pattern"]

_SEPARATOR = "_"
_ASCII_SEPARATORS = str.maketrans(
    {c: _SEPARATOR for c in map(chr, range(128)) if c.isspace() or c == "-"}
)


def _fold_char(char: str) -> str:
    """One character folded (may be empty for a format character, or several characters)."""
    if char.isspace() or char == "-" or unicodedata.category(char) == "Pd":
        return _SEPARATOR
    if unicodedata.category(char) == "Cf":  # zero-width space/joiner, soft hyphen, BOM...
        return ""
    return char


@lru_cache(maxsize=65536)
def fold_name(name: str) -> str:
    """``name`` folded for comparison: NFKC, casefold, trimmed, format characters dropped, and
    ``-``, dashes and spaces made ``_``.

    Two names are the same name exactly when their folds are equal.
    """
    if name.isascii():  # the common case, ten times faster
        return name.strip().lower().translate(_ASCII_SEPARATORS)
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf").strip()
    # NFKC(casefold(NFKC(x))): casefolding can leave a string that is not NFKC.
    text = unicodedata.normalize("NFKC", text.casefold())
    return "".join(_fold_char(c) for c in text)


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


def _fold_text(text: str) -> str:
    """Like :func:`fold_name`, without trimming (a glob's inner pieces keep their spaces as
    separators)."""
    if not text:
        return text
    if text.isascii():
        return text.lower().translate(_ASCII_SEPARATORS)
    text = unicodedata.normalize("NFKC", text)
    text = unicodedata.normalize("NFKC", text.casefold())
    return "".join(_fold_char(c) for c in text)


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
