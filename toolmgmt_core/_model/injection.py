"""Tool text that addresses the model instead of describing the tool: prompt injection.

A tool's description (and its usage notes, and its parameters' descriptions) reaches the model
word for word, so a third party who writes one can write instructions there: "ignore previous
instructions", "always call this tool first", "do not tell the user", or a chat template's role
markers (``<|im_start|>system``, ``[INST]``, ``<<SYS>>``, a line starting ``system:``).
:func:`addresses_the_model` finds such text; the linter reports it (``description-addresses-
model``) and a policy step can keep such tools out of discovery until an operator allows them
(``Policy(quarantine=True, trusted=[...])``).

The phrases are matched on :func:`~toolmgmt_core._model.names.fold_text` (case, invisible
characters and unicode look-alikes folded, so ``ign0re prevіous`` with a digit zero and a
Cyrillic ``і`` is found too). They are chosen to be specific: a description that says "use this
tool to search contacts" is a description; "always call this tool before any other tool" is an
instruction to the model about other tools. On the demo catalog and the BFCL pools (3,231
tools) none is flagged (``tests/core/test_injection.py`` counts them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from toolmgmt_core._model.injection_text import hidden_text, override_in_any_language, readings
from toolmgmt_core._model.names import fold_text
from toolmgmt_core._model.tool import Tool

__all__ = ["addresses_the_model", "find_instruction"]

_SEP = r"[^\w\n]*\s[^\w\n]*"  # between two words: a space, maybe with punctuation around it


def _phrase(*parts: str) -> str:
    """A regex for words in sequence, each part an alternation (``a|b``), a leading ``~``
    making it optional (never the last); words apart by a space (and any punctuation)."""
    out = r"\b"
    for position, part in enumerate(parts):
        body = f"(?:{part.lstrip('~')})"
        if part.startswith("~"):
            out += f"(?:{body}{_SEP})?"
        else:
            out += body + (_SEP if position < len(parts) - 1 else "")
    return out + r"\b"


_TOOL = r"tool|function|action|plugin"
_CALL = r"call|calls|use|invoke|run|execute|trigger|select|choose|pick|prefer"
_MODEL = r"ai|assistant|llm|language model|chatbot|claude|gpt|chatgpt|gemini"

_RULES: tuple[tuple[str, str], ...] = (
    (
        "tells the model to ignore its instructions",
        _phrase(
            r"ignore|disregard|forget|override|bypass",
            r"~all|any|the|your|of",
            r"~all|the|your|of",
            r"previous|prior|preceding|above|earlier|former|other|existing|original|"
            r"system|developer|safety",
            r"instructions?|prompts?|rules|directions|guidelines|guidance|directives|"
            r"messages|constraints|policies",
        ),
    ),
    (
        "tells the model to ignore its instructions",
        "|".join(
            (
                _phrase(
                    r"forget|ignore|disregard|erase|drop",
                    r"everything|anything|all",
                    r"~that",
                    r"you'?ve|you",
                    r"~were|have|had|are|been",
                    r"~been|being",
                    r"told|given|taught|instructed|said|asked",
                ),
                _phrase(
                    r"forget|ignore|disregard|erase",
                    r"everything|anything|all|whatever",
                    r"~(?:that )?(?:was|is|you were|you have been) (?:said|written|stated|told)",
                    r"before|above|earlier|previously|so far|until now|up to now",
                ),
            )
        ),
    ),
    (
        "gives the model new instructions",
        _phrase(r"new|updated|real|actual|true", r"~system", r"instructions|directives") + r" ?:",
    ),
    (
        "re-assigns the model's role",
        _phrase(r"from", r"now", r"on") + r",? (?:you|always|only|call|run|use|invoke|execute)\b",
    ),
    (
        "tells the model to ignore its instructions",
        "|".join(
            (
                _phrase(
                    "pay no attention|pay no heed|do not follow|don't follow|stop following",
                    "~to",
                    "~all|any|the|your",
                    r"previous|prior|earlier|above|original|system|initial",
                ),
                _phrase(
                    r"previous|prior|earlier|above|original|initial",
                    r"instructions|rules|guidance|guidelines|prompts?",
                    r"are|is|were|no longer",
                    r"~now|hereby|no longer",
                    r"void|cancell?ed|obsolete|invalid|revoked|superseded|outdated|"
                    r"valid|apply|relevant",
                ),
            )
        ),
    ),
    (
        "tells the model to call this tool first",
        "|".join(
            (
                _phrase("always", _CALL, "this|the", _TOOL, "first|before|immediately"),
                _phrase(_CALL, "this", _TOOL, "~first", "before", "any|all|every|anything"),
                _phrase(
                    "this",
                    _TOOL,
                    "must|should|shall",
                    "~always",
                    "be",
                    "called|used|invoked|run",
                    "first|before",
                ),
                _phrase(
                    "before",
                    "calling|using|invoking|running|selecting|trying",
                    "any|every|all",
                    "other",
                    "tools?|functions?",
                ),
            )
        ),
    ),
    (
        "tells the model to avoid other tools",
        "|".join(
            (
                _phrase(
                    "do not|don't|never|must not|should not",
                    _CALL + "|trust|consider",
                    "~any",
                    "other",
                    "tools?|functions?",
                ),
                _phrase("instead of|rather than", "any|all|every", "other", "tools?|functions?"),
                _phrase("regardless of", "what|whatever", "~the", "user", "asks|says|wants"),
            )
        ),
    ),
    (
        "tells the model to keep something from the user",
        "|".join(
            (
                _phrase(
                    "do not|don't|never|must not|should not|without",
                    "tell|telling|inform|informing|mention|mentioning|notify|notifying|alert|"
                    "alerting|reveal|revealing|disclose|disclosing",
                    "~this|it|anything",
                    "~to",
                    "the",
                    "user|users|human",
                ),
                _phrase(
                    "keep|hide|conceal|withhold",
                    "this|it|these|that",
                    "~note|notes|message|instruction|instructions|information|text|part|step|"
                    "request|call|detail|details",
                    "~a",
                    "~secret|hidden|private|confidential",
                    "from",
                    "~the",
                    "user|users|human",
                ),
                _phrase("the", "user", "must|should", "not|never", "know|see|notice|be told"),
            )
        ),
    ),
    (
        "asks the model for its instructions",
        _phrase(
            "reveal|print|repeat|output|show|send|leak|disclose|include|append",
            "your|the",
            "~full|entire|whole",
            "system prompt|system message|initial instructions|hidden instructions|"
            "instructions above|conversation history|chat history",
        ),
    ),
    (
        "speaks to the model",
        "|".join(
            (
                _phrase("note|instructions?", "to|for", "~the", _MODEL),
                _phrase("dear|hey|hello|attention", _MODEL),
                _phrase("as an|as a", "ai|language model|llm|assistant", "you", "must|should"),
                _phrase(
                    "the",
                    r"ai|assistant|llm|language model",
                    "must|should|shall",
                    "always|never|not|first|ignore",
                ),
            )
        ),
    ),
    ("has a chat role line", r"(?:^|\n) ?(?:system|assistant|developer|human|user) ?:"),
)

# Chat-template markers, folded as the text they are looked for in is.
_MARKERS = (
    "<|im_start|>",
    "<|im_end|>",
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "[INST]",
    "[/INST]",
    "<<SYS>>",
    "<</SYS>>",
    "<system>",
    "</system>",
    "<important>",
    "</important>",
    "### system",
    "### instruction",
)
_MARKER = re.compile("|".join(re.escape(fold_text(marker)) for marker in _MARKERS))
_COMPILED = tuple((what, re.compile(pattern)) for what, pattern in _RULES)
_MARKER_NAMES = {fold_text(marker): marker for marker in _MARKERS}


@lru_cache(maxsize=65536)
def find_instruction(text: str) -> str | None:
    """Why ``text`` addresses the model (``"tells the model to ignore its instructions:
    'ignore previous instructions'"``), or None when it does not.

    The text is read as written, then its spaced-out letters joined and its base64 and hex
    runs decoded (:func:`~toolmgmt_core._model.injection_text.readings`)."""
    if not text:
        return None
    hidden = hidden_text(text)
    if hidden is not None:  # what a screen shows as nothing and a model reads
        shown = " ".join(hidden.split())[:120]
        return f"hides text in invisible Unicode tag characters: {shown!r}"
    found = _find(fold_text(text), text)
    if found is not None:
        return found
    for how, other in readings(text):
        folded = fold_text(other)
        found = _find(folded, other)
        if found is None and "joined" in how:  # spelt out letter by letter: hiding it
            spelt = _SPELT.search(folded)
            found = spelt and f"tells the model to ignore its instructions: {spelt.group(0)!r}"
        if found:
            return f"{found} ({how})"
    return None


_SPELT = re.compile(
    _phrase(
        r"ignore|disregard|forget|override|bypass",
        "~all|any|the|your",
        r"previous|prior|preceding|above|earlier|system",
    )
)


def _find(folded: str, text: str) -> str | None:
    marker = _MARKER.search(folded)
    if marker is not None:
        return f"has a chat-template marker: {_MARKER_NAMES[marker.group(0)]!r}"
    for what, pattern in _COMPILED:
        found = pattern.search(folded)
        if found is not None:
            return f"{what}: {' '.join(found.group(0).split())!r}"
    span = override_in_any_language(folded)
    if span is not None:  # a folded span of another script is unreadable: quote the text
        shown = span if span.isascii() else text[:80]
        return f"tells the model to ignore its instructions: {' '.join(shown.split())!r}"
    return None


def addresses_the_model(tool: Tool) -> str | None:
    """Where and how ``tool``'s text addresses the model (``"its description tells the model
    to call this tool first: 'always call this tool first'"``), or None.

    Reads what reaches the model: the description, the usage notes, the title, every string
    of the input and output schemas (descriptions, titles, enum and const values, defaults,
    examples, patterns, ``$comment``, ``x-*`` values, and the property names and other keys,
    their ``_`` and ``-`` read as spaces) and of the input examples.
    """
    for where, text in _texts(tool):
        found = find_instruction(text)
        if found is not None:
            return f"{where} {found}"
    return None


def _texts(tool: Tool) -> Iterator[tuple[str, str]]:
    yield "its description", tool.description
    if tool.usage_notes:
        yield "its usage notes", tool.usage_notes
    if tool.annotations.title:
        yield "its title", tool.annotations.title
    yield from _schema_texts(tool.parameters, "", "its parameters")
    if tool.output_schema:
        yield from _schema_texts(tool.output_schema, "", "its output schema")
    for index, example in enumerate(tool.input_examples):
        yield from _schema_texts(example, f"/{index}", "its input examples")


_SEPARATORS = str.maketrans("_-", "  ")


def _schema_texts(schema: Any, path: str, root: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """Every string in a schema, keys included, with where it sits (bounded depth: the schema
    guard already refused deeper ones)."""
    if depth > 100:
        return
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            here = f"{path}/{key}"
            if isinstance(key, str) and len(key) > 3:  # a property name, an x- key...
                yield f"the key {here} of {root}", key.translate(_SEPARATORS)
            if isinstance(value, str):
                if key in ("description", "title") and root == "its parameters":
                    yield f"the description of {path or root}", value
                else:
                    yield f"{here} of {root}", value
            elif isinstance(value, Mapping | list):
                yield from _schema_texts(value, here, root, depth + 1)
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            if isinstance(item, str):
                yield f"{path}/{index} of {root}", item
            else:
                yield from _schema_texts(item, f"{path}/{index}", root, depth + 1)
