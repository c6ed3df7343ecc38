"""The checks of one tool: its name, description, parameters, examples, what each provider
would do with it, and whether its siblings can be told apart from it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from toolmgmt_core._lint.findings import MAX_DESCRIPTION_CHARS, Finding
from toolmgmt_core._lint.words import (
    _CHOICE_NAMES,
    _CHOICE_WORDS,
    _CREATE_VERBS,
    _GENERIC,
    _SERVER_NAMES,
    _SERVER_TEXT,
    _SIMILAR,
    _VERBS,
    _WHEN,
    _action_words,
    _jaccard,
    _profile,
    _words,
)
from toolmgmt_core._model.injection import addresses_the_model
from toolmgmt_core._model.provider_names import NAME_RULES
from toolmgmt_core._model.schema_validator import example_errors
from toolmgmt_core._model.shadowing import find_shadows
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._providers import format_tools

__all__ = []


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


def _lint_injection(tool: Tool) -> Iterator[Finding]:
    found = addresses_the_model(tool)
    if found is not None:
        yield Finding(
            tool.name,
            "error",
            "description-addresses-model",
            f"The tool's text addresses the model: {found}. It reaches the model word for word "
            "(prompt injection).",
            "Describe what the tool does and when to use it, nothing more; a policy step with "
            "quarantine=True (a gateway's [policy] quarantine = true) keeps such tools out of "
            "discovery until trusted.",
        )


def _lint_shadows(pool: Sequence[Tool]) -> Iterator[Finding]:
    for name, why in find_shadows(pool).items():
        yield Finding(
            name,
            "warning",
            "name-shadows-tool",
            f"The tool shadows another domain's tool: {why}. Search shows them side by side "
            "and a model may pick the copy.",
            "Rename it or rewrite its description; a policy step with quarantine_shadowing=True "
            "(a gateway's [policy] quarantine_shadowing = true) keeps such tools out until "
            "trusted.",
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
        required = schema.get("required")
        for name in required if isinstance(required, list) else ():
            if isinstance(name, str) and name not in schema["properties"]:
                yield Finding(
                    tool.name,
                    "error",
                    "required-unknown",
                    f"The object at {path} requires {name!r}, which is not among its "
                    f"properties ({', '.join(map(repr, schema['properties']))}).",
                    "Add the property, or take the name out of 'required' (a model cannot "
                    "send a field it is not shown, so every call would fail validation).",
                    path,
                )
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
    try:
        errors = example_errors(tool.parameters, list(tool.input_examples))
    except Exception:  # a broken schema (a regex) is reported by the provider checks
        return
    for index, error in enumerate(errors, 1):
        if error is None:
            continue
        path = "".join(f"/{p}" for p in error[0])
        yield Finding(
            tool.name,
            "warning",
            "example-invalid",
            f"Input example {index} does not match the schema: {path or '(arguments)'}: "
            f"{error[1][:200]}",
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
