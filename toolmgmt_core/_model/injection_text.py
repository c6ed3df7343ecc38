"""What injection matching reads besides the text as written, and the phrases of many languages.

:mod:`toolmgmt_core._model.injection`'s English rules match folded text
(:func:`~toolmgmt_core._model.names.fold_text`). An author hiding an instruction from them has
three easy ways out, each undone here before matching:

- **spacing**: ``i g n o r e   p r e v i o u s`` (letters apart, words apart by a wider gap, or
  by dots and dashes) is read as ``ignore previous`` (:func:`readings`);
- **encoding**: a base64 or hex run that decodes to text (``SWdub3JlIGFsbCBwcmV2aW91cw==``),
  percent-encoding (``%69%67%6E...``), HTML character references (``&#105;&#103;...``),
  ``\\u`` escapes and ROT13 are read decoded, two levels deep, at most :data:`MAX_DECODED`
  runs; text hidden in Unicode tag characters (U+E0020 to U+E007E, which a screen shows as
  nothing and a model reads) is decoded by :func:`hidden_text` and reported as hidden;
- **another language**: "Ignorez toutes les instructions précédentes", "忽略之前的所有指示",
  "Ignoriere alle vorherigen Anweisungen"... :func:`override_in_any_language` finds, in en, zh,
  es, fr, de, pt, ru, ja, ko, ar, hi and it, a verb of ignoring or forgetting near a word for
  "previous" (or "system") and a word for "instructions", in any order within a short window,
  which also catches English paraphrases ("disregard whatever guidance you were given
  earlier").

Each word list is folded as the text is, so accents, look-alikes and case never matter; the
words are stems (``precedent`` covers ``précédentes``), matched at the start of a word in
languages written with spaces, anywhere in Chinese and Japanese.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import re
import urllib.parse
from collections.abc import Iterator, Sequence

from toolmgmt_core._model.names import fold_text

__all__ = ["MAX_DECODED", "hidden_text", "override_in_any_language", "readings"]

MAX_DECODED = 16
"""Encoded runs decoded per text (the text's own size bounds the rest)."""

_IGNORE = (
    "ignore disregard forget override bypass "  # en
    "ignor oubli "  # fr, es, pt, it, de (ignorez, ignora, ignore, ignoriere)
    "olvid desconsider esquec esqueç dimentic trascur "  # es, pt, it
    "vergiss vergess missacht "  # de
    "игнор забуд забуть забыть пренебр "  # ru
    "무시 잊어 잊으 "  # ko
    "تجاهل انس "  # ar
    "अनदेखा नज़रअंदाज़ नजरअंदाज भूल "  # hi
).split() + ["haz caso omiso", "faites abstraction", "non tenere conto", "ne tenez pas compte"]
_IGNORE_CJK = "忽略 忽视 無視 无视 忘记 忘掉 忘れ 不要理会 不理会 別理 别理".split()

_PRIOR = (
    "previous prior preceding above earlier former original system "  # en
    "precedent anterieur ci-dessus systeme "  # fr
    "anterior previ sistema "  # es, pt, it
    "vorherig bisherig vorangegangen obig vorig fruher system "  # de
    "предыдущ прежн систем выше ранее "  # ru
    "이전 앞의 위의 시스템 기존 "  # ko
    "السابقة السابق النظام "  # ar
    "पिछल पहले सिस्टम ऊपर "  # hi
).split()
_PRIOR_CJK = "之前 以前 先前 上面 上述 前面 此前 原来 系统 系統 前の これまで 上記 システム".split()

_INSTRUCTIONS = (
    "instruction prompt rules directions guideline guidance directive "  # en
    "consigne regle "  # fr
    "instruccion indicacion directriz directrices regla norma "  # es
    "instruc diretriz diretrizes regra orientac "  # pt
    "istruzion direttiv regol "  # it
    "anweisung anleitung instruktion regel vorgabe richtlinie "  # de
    "инструкц указани правил команд "  # ru
    "지시 지침 명령 규칙 프롬프트 "  # ko
    "التعليمات تعليمات الأوامر الإرشادات "  # ar
    "निर्देश नियम आदेश "  # hi
).split()
_INSTRUCTIONS_CJK = "指示 指令 说明 說明 规则 規則 提示 命令 设定 ルール プロンプト".split()

_WINDOW = 64
"""At most this many characters between the first and the last of the three words."""


def _slot(words: Sequence[str], cjk: Sequence[str]) -> re.Pattern[str]:
    spaced = sorted({fold_text(w) for w in words}, key=len, reverse=True)
    anywhere = sorted({fold_text(w) for w in cjk}, key=len, reverse=True)
    body = "|".join(re.escape(w) for w in spaced)
    return re.compile(rf"(?<!\w)(?:{body})|" + "|".join(re.escape(w) for w in anywhere))


_SLOTS = (
    _slot(_IGNORE, _IGNORE_CJK),
    _slot(_PRIOR, _PRIOR_CJK),
    _slot(_INSTRUCTIONS, _INSTRUCTIONS_CJK),
)


def override_in_any_language(folded: str) -> str | None:
    """The span of ``folded`` (text folded by :func:`fold_text`) that tells the model to ignore
    its previous instructions, in any of the languages above, or None."""
    found: list[list[tuple[int, int]]] = []
    for slot in _SLOTS:  # most text has no verb of ignoring: one scan, and done
        found.append([(m.start(), m.end()) for m in slot.finditer(folded)])
        if not found[-1]:
            return None
    for start, end in found[0]:
        near = [
            [(s, e) for s, e in spans if abs(s - start) <= _WINDOW and s != start]
            for spans in found[1:]
        ]
        if all(near):
            spans = [(start, end), near[0][0], near[1][0]]
            low, high = min(s for s, _ in spans), max(e for _, e in spans)
            if high - low <= _WINDOW + 24:
                return folded[low:high]
    return None


# Letters apart: single characters separated by spaces (or . - _ *), four or more of them.
_SPACED = re.compile(r"(?<!\w)(?:\w[ \t.\-_*]{1,4}){3,}\w(?!\w)")
_WIDE_GAP = re.compile(r"[ \t.\-_*]{2,}")
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX = re.compile(r"(?:(?:\\x|0x)?[0-9A-Fa-f]{2}[ :]?){8,}")
_MAX_RUN = 8192
_WORDS = re.compile(
    r"ignore|disregard|forget|override|bypass|previous|prior|preceding|earlier|above|system|"
    r"instructions?|prompts?|rules|guidance|always|call|tool|first|before|all|your|the"
)


_TAGS = re.compile("[\U000e0020-\U000e007e]+")
_FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f")


def hidden_text(text: str) -> str | None:
    """The text ``text`` hides in Unicode tag characters (each U+E00xx read as the ASCII
    character xx), or None; the tags of a subdivision flag (🏴 and ``gbeng``) hide nothing."""
    if "\U000e0020" > max(text, default=" "):  # no character that high: the common case
        return None
    runs = _TAGS.findall(_FLAG.sub("", text))
    hidden = " ".join("".join(chr(ord(c) - 0xE0000) for c in run) for run in runs).strip()
    return hidden or None


# The rules' words in ROT13 (ignore, disregard, forget, previous, instruction, system...):
# only a text holding one is read in ROT13.
_ROT13_WORDS = re.compile(
    "|".join(
        codecs.encode(word, "rot13")
        for word in "ignore disregard forget previous instruction system assistant".split()
    ),
    re.IGNORECASE,
)
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2}){4,}")
_REFERENCES = re.compile(r"(?:&#?\w{1,8};){4,}")
_ESCAPES = re.compile(r"(?:\\u[0-9A-Fa-f]{4}){4,}")


def readings(text: str) -> Iterator[tuple[str, str]]:
    """Other ways to read ``text``, each with how it was read (``"its letters joined"``,
    ``"decoded"``): its spaced-out letters joined, each base64, hex, percent-encoded, HTML
    character reference or ``\\u`` escape run decoded to text (and those decoded again, once),
    and the text in ROT13. Not folded."""
    yield from (("its letters joined", joined) for joined in _joined(text))
    if _ROT13_WORDS.search(text[:_MAX_RUN]):
        yield "read in ROT13", codecs.encode(text[:_MAX_RUN], "rot13")
    seen = 0
    queue = [(text, 0)]
    while queue and seen < MAX_DECODED:
        current, depth = queue.pop(0)
        for decoded in _decoded(current):
            seen += 1
            yield "decoded", decoded
            yield from (("decoded, its letters joined", joined) for joined in _joined(decoded))
            if depth == 0:
                queue.append((decoded, 1))
            if seen >= MAX_DECODED:
                return


def _joined(text: str) -> Iterator[str]:
    runs = [m.group(0) for m in _SPACED.finditer(text)]
    if not runs:
        return
    words = [
        " ".join(re.sub(r"[ \t.\-_*]", "", word) for word in _WIDE_GAP.split(run)) for run in runs
    ]
    yield " ".join(words)  # the runs' words, in order (a gap of one space joins letters)
    # letters all one space apart ("ignoreprevious"): the words of the rules set apart again
    joined = " ".join(re.sub(r"[ \t.\-_*]", "", run) for run in runs)
    yield _WORDS.sub(r" \g<0> ", joined.lower())


def _decoded(text: str) -> Iterator[str]:
    for pattern, decode in _UNESCAPES:
        for match in pattern.finditer(text):
            unescaped = decode(match.group(0)[:_MAX_RUN])
            if len(unescaped) >= 8 and " " in unescaped.strip():
                yield unescaped
    for match in _BASE64.finditer(text):
        run = match.group(0)[:_MAX_RUN]
        if run.isdigit() or run.isalpha() and run.islower():  # a number, a word: not base64
            continue
        try:
            raw = base64.b64decode(run + "=" * (-len(run) % 4), altchars=b"-_", validate=False)
        except (binascii.Error, ValueError):
            continue
        shown = _as_text(raw)
        if shown is not None:
            yield shown
    for match in _HEX.finditer(text):
        digits = re.sub(r"\\x|0x|[ :]", "", match.group(0))[:_MAX_RUN]
        try:
            shown = _as_text(bytes.fromhex(digits[: len(digits) // 2 * 2]))
        except ValueError:
            continue
        if shown is not None:
            yield shown


def _unescape(run: str) -> str:
    return re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m.group(1), 16)), run)


_UNESCAPES = (
    (_PERCENT, lambda run: urllib.parse.unquote(run, errors="replace")),
    (_REFERENCES, html.unescape),
    (_ESCAPES, _unescape),
)


def _as_text(raw: bytes) -> str | None:
    """``raw`` as text when it is mostly printable UTF-8 words, else None."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(c.isprintable() or c.isspace() for c in text)
    if len(text) < 8 or printable < 0.95 * len(text) or " " not in text.strip():
        return None
    return text
