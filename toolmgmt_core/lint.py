"""Schema quality: findings about a tool that a model would trip over.

:func:`lint` checks one tool (names, descriptions, parameters, and what each provider would do
with it); :func:`lint_catalog` checks many and also compares siblings (two tools of one group whose
descriptions do not tell them apart). Every :class:`Finding` has a severity, a stable code, a
message and a fix hint::

    for finding in lint(tool):
        print(finding.severity, finding.code, finding.message, "->", finding.hint)

``toolmgmt lint [--catalog FILE]`` prints the findings of a catalog and exits 1 when any is an
error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from toolmgmt_core.providers import format_tools
from toolmgmt_core.providers.names import NAME_RULES
from toolmgmt_core.providers.openai import MAX_TOOLS as OPENAI_MAX_TOOLS
from toolmgmt_core.tool import Tool

__all__ = [
    "CATALOG",
    "CODES",
    "MAX_DESCRIPTION_CHARS",
    "Finding",
    "Severity",
    "lint",
    "lint_catalog",
]

Severity = Literal["error", "warning", "info"]

CATALOG = "(catalog)"
"""The ``tool`` of findings about the whole catalog."""

MAX_DESCRIPTION_CHARS = 1024
"""Longer descriptions cost tokens on every request; the limit warns above it."""

CODES: Mapping[str, str] = {
    "name-not-lowercase": "the name has upper-case letters",
    "name-not-verb-led": "the name does not start with a verb",
    "name-not-namespaced": "the name has no namespace and the tool no domain",
    "name-mapped": "a provider rejects the name; it will be renamed when sent",
    "description-missing": "no description",
    "description-vague": "the description is too short or generic",
    "description-no-when": "the description does not say when to use the tool",
    "description-too-long": "the description is very long",
    "description-sibling": "a similar sibling exists and the description does not set them apart",
    "parameter-no-description": "a parameter without a description",
    "parameter-unconstrained": "a parameter with a fixed set of values but no enum or pattern",
    "optional-no-default": "an optional parameter without a default",
    "required-missing": "an object schema without an explicit required list",
    "server-generated-field": "a field the model cannot know (a server-generated id)",
    "example-invalid": "an input example that does not match the tool's own schema",
    "anthropic-incompatible": "Anthropic cannot take this schema",
    "anthropic-rewritten": "the schema is rewritten for Anthropic",
    "openai-incompatible": "OpenAI cannot take this schema",
    "openai-not-strict": "the schema cannot use OpenAI strict mode",
    "openai-too-many-tools": "more tools than OpenAI accepts in one request",
    "gemini-incompatible": "Gemini cannot take this schema",
    "gemini-rewritten": "the schema loses something in Gemini's schema subset",
}
"""Every finding code and what it means."""


@dataclass(frozen=True)
class Finding:
    """One problem found in a tool."""

    tool: str
    """The tool's name."""
    severity: Severity
    """``error`` (a provider refuses it or the model cannot use it), ``warning``, or ``info``."""
    code: str
    """A stable code from :data:`CODES`."""
    message: str
    """What is wrong."""
    hint: str
    """How to fix it."""
    path: str = ""
    """Where in the parameters schema (``/filters/tag``), empty for the tool itself."""

    def to_dict(self) -> dict[str, Any]:
        """The finding as plain JSON."""
        return asdict(self)


_VERBS = frozenset(
    """
    add analyze apply approve archive assign book build buy calc calculate call cancel check
    clear close compare compute convert copy count create delete deploy describe disable download
    draft draw edit email enable estimate evaluate execute export extract fetch filter find
    forward generate get import insert install invite list load lock log lookup make mark merge
    move notify open order parse patch pause pay ping plan play plot post predict preview print
    publish purchase put query read record refresh register reject remove rename render reply
    request reserve reset resolve restore retrieve run save scan schedule search send set share
    sort start stop submit subscribe summarize sync tag track transfer translate unsubscribe
    update upload validate verify view watch write solve convert identify detect recommend
    accept acknowledge activate allocate annotate append attach authenticate authorize backup
    batch block bulk capture charge checkout classify clone comment commit complete configure
    confirm connect deactivate decline decrypt dedupe deny detach diff disconnect dismiss
    dispatch duplicate encrypt enqueue enrich escalate expire flag follow forecast format grant
    hide index issue join label launch leave like link login logout mention migrate monitor mute
    normalize pin poll promote provision purge queue rank rate reassign reboot recalculate
    receive reconcile redeem redirect refund reindex release reload remind reopen reorder repair
    replace replay report rerun resend respond restart resume retry return revert review revoke
    rollback rotate route scale scrape select ship sign simulate snooze split stream suggest
    suspend swap tail terminate test transcribe trigger unarchive unblock unlink unlock unmute
    unpin unshare upsert void vote warn
    """.split()
)
_GENERIC = re.compile(
    r"^(a |an |the )?(tool|function|helper|utility|wrapper|api|method)\b|\b(todo|tbd|fixme)\b|"
    r"^(does|handles|manages) (stuff|things|it)\b",
    re.IGNORECASE,
)
_WHEN = re.compile(
    r"\b(use (this|it|when|for|to)|when(ever)?|if (you|the)|for (example|finding|getting)|"
    r"call (this|it)|only|instead|before|after|unless)\b",
    re.IGNORECASE,
)
_CHOICE_WORDS = re.compile(
    r"\b(one of|either|must be (one|either)|valid values|allowed values|possible values|"
    r"options are|can be '[^']+' or)\b|'[^']+'\s*(,|or)\s*'[^']+'|\"[^\"]+\"\s*(,|or)\s*\"",
    re.IGNORECASE,
)
_CHOICE_NAMES = frozenset(
    """
    status state kind mode unit units currency country country_code language lang sort order
    sort_by order_by direction priority level category severity visibility role period interval
    """.split()
)
_SERVER_NAMES = frozenset(
    {"created_at", "updated_at", "etag", "request_id", "trace_id", "revision_id", "uuid"}
)
_SERVER_TEXT = re.compile(
    r"\b(server[- ]generated|auto[- ]?generated|generated by the (server|system)|"
    r"assigned by the (server|system)|internal id)\b",
    re.IGNORECASE,
)
_SIMILAR = 0.5  # word overlap (Jaccard) from which two siblings read alike
_CREATE_VERBS = ("create", "add", "new", "insert", "register", "post", "make")


def _words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return [w.lower() for w in re.split(r"[^A-Za-z0-9]+", spaced) if w]


def _tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


@lru_cache(maxsize=16384)
def _profile(name: str, description: str) -> frozenset[str]:
    """The words that say what a tool is about: its name's and its description's."""
    return frozenset(_tokens(description) | set(_words(name)))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _action_words(tool: Tool) -> list[str]:
    """The words of the tool's name after its namespace and its own domain and group prefix.

    ``code_hosting_list_commits`` in domain ``code_hosting`` gives ``list, commits``: the prefix
    names where the tool lives, so the verb is the word after it. A prefix is only taken off
    while the words do not already start with a verb (``web_search_search_web`` in group
    ``search`` keeps ``search, web``).
    """
    words = _words(tool.name.rsplit(".", 1)[-1].rsplit("/", 1)[-1])
    for prefix in (tool.domain, tool.group):
        head = _words(prefix)
        if words and words[0] in _VERBS:
            break
        if head and len(words) > len(head) and words[: len(head)] == head:
            words = words[len(head) :]
    return words


def _lint_name(tool: Tool) -> Iterator[Finding]:
    name = tool.name
    if name != name.lower():
        yield Finding(
            name,
            "warning",
            "name-not-lowercase",
            f"The name {name!r} has upper-case letters.",
            f"Use snake_case: {'_'.join(_words(name))!r}.",
        )
    words = _action_words(tool)
    if words and words[0] not in _VERBS and not (len(words) > 1 and words[1] in _VERBS):
        yield Finding(
            name,
            "info",
            "name-not-verb-led",
            f"The name {name!r} does not start with a verb.",
            "Lead with what the tool does: 'search_contacts', 'create_invoice'.",
        )
    namespaced = bool(re.search(r"[.:/]|__", name))
    if not namespaced and tool.domain == "general":
        yield Finding(
            name,
            "info",
            "name-not-namespaced",
            f"The name {name!r} has no namespace and the tool has no domain.",
            "Set domain= (and group=), or prefix the name ('crm.search_contacts').",
        )
    mapped = sorted({p for p, rules in NAME_RULES.items() if not rules.is_valid(name)})
    if mapped:
        yield Finding(
            name,
            "info",
            "name-mapped",
            f"{', '.join(mapped)} reject the name {name!r}; it is renamed when sent.",
            "Use only letters, digits, '_' and '-', at most 64 characters, starting with a letter.",
        )


def _lint_description(tool: Tool) -> Iterator[Finding]:
    text = tool.description.strip()
    if not text:
        yield Finding(
            tool.name,
            "error",
            "description-missing",
            "The tool has no description; a model can only guess from its name.",
            "Say what the tool does and when to use it, in one or two sentences.",
        )
        return
    if len(text) < 20 or len(text.split()) < 4 or _GENERIC.search(text):
        yield Finding(
            tool.name,
            "warning",
            "description-vague",
            f"The description {text[:60]!r} is too short or generic to choose the tool by.",
            "Name the action, the object and the result: 'Search CRM contacts by name or "
            "email; returns up to 20 matches.'",
        )
    if not _WHEN.search(text):
        yield Finding(
            tool.name,
            "info",
            "description-no-when",
            "The description does not say when to use the tool.",
            "Add a sentence such as 'Use this when ...' (and when not to).",
        )
    if len(text) > MAX_DESCRIPTION_CHARS:
        yield Finding(
            tool.name,
            "warning",
            "description-too-long",
            f"The description has {len(text)} characters; it is sent on every request.",
            f"Keep it under {MAX_DESCRIPTION_CHARS} characters; move details to usage_notes.",
        )


def _walk_properties(
    schema: Mapping[str, Any], path: str = ""
) -> Iterator[tuple[str, str, Mapping[str, Any], Mapping[str, Any]]]:
    """(path, name, property schema, parent schema) for every property, nested included."""
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, sub in properties.items():
            if isinstance(sub, Mapping):
                yield f"{path}/{name}", name, sub, schema
                yield from _walk_properties(sub, f"{path}/{name}")
                items = sub.get("items")
                if isinstance(items, Mapping):
                    yield from _walk_properties(items, f"{path}/{name}/items")
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key, ()) or ()):
            if isinstance(sub, Mapping):
                yield from _walk_properties(sub, f"{path}/{key}/{i}")
    defs = schema.get("$defs") or schema.get("definitions")
    if isinstance(defs, Mapping):
        for name, sub in defs.items():
            if isinstance(sub, Mapping):
                yield from _walk_properties(sub, f"{path}/$defs/{name}")


def _objects(schema: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Mapping[str, Any]]]:
    if isinstance(schema.get("properties"), Mapping) and schema["properties"]:
        yield path or "/", schema
    for sub_path, _, sub, _ in _walk_properties(schema, path):
        if isinstance(sub.get("properties"), Mapping) and sub["properties"]:
            yield sub_path, sub


def _lint_parameters(tool: Tool) -> Iterator[Finding]:
    first = _action_words(tool)[:1]
    creating = bool(first) and first[0] in _CREATE_VERBS
    for path, schema in _objects(tool.parameters):
        if "required" not in schema:
            yield Finding(
                tool.name,
                "warning",
                "required-missing",
                f"The object at {path} has no 'required' list.",
                "List the required fields explicitly (an empty list when all are optional).",
                path,
            )
    for path, name, prop, parent in _walk_properties(tool.parameters):
        required = name in (parent.get("required") or ())
        description = str(prop.get("description") or "")
        if not description.strip() and "$ref" not in prop:
            yield Finding(
                tool.name,
                "warning",
                "parameter-no-description",
                f"Parameter {path} has no description.",
                "Say what the value means, its unit and an example.",
                path,
            )
        constrained = {"enum", "const", "pattern", "format", "anyOf", "oneOf", "$ref"} & set(prop)
        if prop.get("type") == "string" and not constrained:
            if _CHOICE_WORDS.search(description):
                yield Finding(
                    tool.name,
                    "warning",
                    "parameter-unconstrained",
                    f"Parameter {path} lists its allowed values in prose only.",
                    "Put the values in an enum (or a pattern) so the model cannot misspell them.",
                    path,
                )
            elif name.lower() in _CHOICE_NAMES:
                yield Finding(
                    tool.name,
                    "info",
                    "parameter-unconstrained",
                    f"Parameter {path} usually takes a fixed set of values but has no enum.",
                    "If only some values are valid, list them in an enum (or give a pattern).",
                    path,
                )
        if not required and "default" not in prop and not _nullable(prop):
            yield Finding(
                tool.name,
                "info",
                "optional-no-default",
                f"Optional parameter {path} has no default.",
                "Give a default, or say in the description what happens when it is left out.",
                path,
            )
        server_name = name.lower() in _SERVER_NAMES or (name.lower() == "id" and creating)
        if server_name or _SERVER_TEXT.search(description):
            yield Finding(
                tool.name,
                "warning" if required else "info",
                "server-generated-field",
                f"Parameter {path} looks server-generated; a model cannot know its value.",
                "Let the server fill it and drop it from the schema (or make it optional).",
                path,
            )


def _nullable(prop: Mapping[str, Any]) -> bool:
    kind = prop.get("type")
    return kind == "null" or (isinstance(kind, list) and "null" in kind)


_PROVIDER_CODES = {
    "anthropic": ("anthropic-incompatible", "anthropic-rewritten"),
    "openai": ("openai-incompatible", "openai-not-strict"),
    "gemini": ("gemini-incompatible", "gemini-rewritten"),
}


def _lint_examples(tool: Tool) -> Iterator[Finding]:
    if not tool.input_examples:
        return
    validator = Draft202012Validator(tool.parameters)
    for index, example in enumerate(tool.input_examples, 1):
        try:
            error = best_match(validator.iter_errors(example))
        except Exception:  # a broken schema ($ref, regex) is reported by the provider checks
            return
        if error is None:
            continue
        path = "".join(f"/{p}" for p in error.absolute_path)
        yield Finding(
            tool.name,
            "warning",
            "example-invalid",
            f"Input example {index} does not match the schema: {path or '(arguments)'}: "
            f"{error.message[:200]}",
            "Fix or remove it: it teaches the model wrong arguments, and Anthropic leaves it out.",
            path,
        )


def _lint_providers(tool: Tool, providers: Sequence[str]) -> Iterator[Finding]:
    for provider in providers:
        bad, lossy = _PROVIDER_CODES[provider]
        report = format_tools([tool], provider, strict=provider == "openai")["report"]
        if tool.name in report.skipped:
            yield Finding(
                tool.name,
                "error",
                bad,
                f"{provider} cannot take this tool: {report.skipped[tool.name]}",
                "Simplify the schema: one object at the top level, local $refs only.",
            )
            continue
        if provider == "openai":
            if tool.name in report.strict_fallbacks:
                yield Finding(
                    tool.name,
                    "info",
                    lossy,
                    f"Not usable in OpenAI strict mode: {report.strict_fallbacks[tool.name]}",
                    "Give every value a type, every object its properties and every array its "
                    "items.",
                )
            continue
        for note in report.notes.get(tool.name, ()):
            if note.endswith("default moved to the description"):
                continue  # the default still reaches the model, in words
            yield Finding(
                tool.name,
                "warning" if provider == "anthropic" else "info",
                lossy,
                f"{provider}: {note}",
                "Prefer plain typed properties; see the provider's schema subset.",
            )


def lint(
    tool: Tool,
    *,
    siblings: Iterable[Tool] = (),
    providers: Sequence[str] = ("anthropic", "openai", "gemini"),
) -> list[Finding]:
    """Every finding about ``tool``.

    Args:
        tool: The tool to check.
        siblings: Other tools of the catalog; those of the same domain and group with a similar
            name or description must be told apart by the description.
        providers: Which providers' incompatibilities to check (``anthropic``, ``openai``,
            ``gemini``).
    """
    findings = [
        *_lint_name(tool),
        *_lint_description(tool),
        *_lint_parameters(tool),
        *_lint_examples(tool),
        *_lint_providers(tool, providers),
    ]
    findings.extend(_lint_siblings(tool, siblings))
    return findings


def _lint_siblings(tool: Tool, siblings: Iterable[Tool]) -> Iterator[Finding]:
    mine = _profile(tool.name, tool.description)
    text = tool.description.lower()
    for other in siblings:
        if other.name == tool.name or (other.domain, other.group) != (tool.domain, tool.group):
            continue
        if _jaccard(mine, _profile(other.name, other.description)) < _SIMILAR:
            continue
        if other.name.lower() in text or re.search(r"\b(instead|rather than|not for)\b", text):
            continue
        yield Finding(
            tool.name,
            "warning",
            "description-sibling",
            f"{tool.name!r} and {other.name!r} read alike; a model may pick the wrong one.",
            f"Say when to use {tool.name!r} rather than {other.name!r} (and when not to).",
        )


def _similar_siblings(pool: Sequence[Tool]) -> dict[int, list[Tool]]:
    """For each tool (by index), the tools of its group that read alike (an inverted index
    over the words, so a large catalog is not compared pair by pair)."""
    profiles = [_profile(t.name, t.description) for t in pool]
    postings: dict[tuple[str, str, str], list[int]] = {}
    for i, (tool, words) in enumerate(zip(pool, profiles, strict=True)):
        for word in words:
            postings.setdefault((tool.domain, tool.group, word), []).append(i)
    similar: dict[int, list[Tool]] = {}
    for i, (tool, words) in enumerate(zip(pool, profiles, strict=True)):
        shared: dict[int, int] = {}
        for word in words:
            for j in postings[(tool.domain, tool.group, word)]:
                if j != i:
                    shared[j] = shared.get(j, 0) + 1
        for j, count in sorted(shared.items()):  # catalog order, not the hash-seeded set's
            if count / (len(words) + len(profiles[j]) - count) >= _SIMILAR:
                similar.setdefault(i, []).append(pool[j])
    return similar


def lint_catalog(
    tools: Iterable[Tool], *, providers: Sequence[str] = ("anthropic", "openai", "gemini")
) -> list[Finding]:
    """The findings of every tool in ``tools`` (a list or a catalog), siblings compared."""
    pool = list(tools)
    findings: list[Finding] = []
    similar = _similar_siblings(pool)
    for i, tool in enumerate(pool):
        findings.extend(lint(tool, siblings=similar.get(i, ()), providers=providers))
    if "openai" in providers and len(pool) > OPENAI_MAX_TOOLS:
        findings.append(
            Finding(
                CATALOG,
                "info",
                "openai-too-many-tools",
                f"The catalog has {len(pool)} tools; OpenAI accepts {OPENAI_MAX_TOOLS} per "
                "request, so it cannot be sent flat.",
                "Use a ToolManager session (search or gateway mode), or "
                "format_tools(..., 'openai-responses', native=True) to defer the rest.",
            )
        )
    return findings
