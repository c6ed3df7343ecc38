"""Schema quality: findings about a tool that a model would trip over.

:func:`lint` checks one tool (names, descriptions, parameters, and what each provider would do
with it); :func:`lint_catalog` checks many and also compares siblings (two tools of one group whose
descriptions do not tell them apart). Every :class:`Finding` has a severity, a stable code, a
message and a fix hint::

    for finding in lint(tool):
        print(finding.severity, finding.code, finding.message, "->", finding.hint)

``toolmgmt lint [--catalog FILE]`` prints the findings of a catalog and exits 1 when any is an
error.

The checks live in :mod:`.rules` (vocabulary in :mod:`.words`); :mod:`.findings` names the codes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from toolmgmt_core._embeddings.base import Embedder
from toolmgmt_core._lint.findings import CATALOG, CODES, MAX_DESCRIPTION_CHARS, Finding, Severity
from toolmgmt_core._lint.normalized import lint_normalized
from toolmgmt_core._lint.rules import (
    _lint_description,
    _lint_examples,
    _lint_injection,
    _lint_name,
    _lint_parameters,
    _lint_providers,
    _lint_shadows,
    _lint_siblings,
    _similar_siblings,
)
from toolmgmt_core._lint.semantic import InjectionNeighbours
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._providers.openai import MAX_TOOLS as OPENAI_MAX_TOOLS

__all__ = [
    "CATALOG",
    "CODES",
    "MAX_DESCRIPTION_CHARS",
    "Finding",
    "InjectionNeighbours",
    "Severity",
    "lint",
    "lint_catalog",
]


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
        *_lint_injection(tool),
        *_lint_parameters(tool),
        *lint_normalized(tool),
        *_lint_examples(tool),
        *_lint_providers(tool, providers),
    ]
    findings.extend(_lint_siblings(tool, siblings))
    return findings


def lint_catalog(
    tools: Iterable[Tool],
    *,
    providers: Sequence[str] = ("anthropic", "openai", "gemini"),
    embedder: Embedder | InjectionNeighbours | None = None,
) -> list[Finding]:
    """The findings of every tool in ``tools`` (a list or a catalog), siblings compared, and
    tools that shadow another domain's tool (``name-shadows-tool``).

    Args:
        tools: the tools.
        providers: whose incompatibilities to check.
        embedder: when set (an ``Embedder``, or :class:`InjectionNeighbours` for another
            threshold or phrases), text close in meaning to a known prompt injection is reported
            too (``description-resembles-injection``).
    """
    pool = list(tools)
    findings: list[Finding] = []
    similar = _similar_siblings(pool)
    for i, tool in enumerate(pool):
        findings.extend(lint(tool, siblings=similar.get(i, ()), providers=providers))
    findings.extend(_lint_shadows(pool))
    if embedder is not None:
        if not isinstance(embedder, InjectionNeighbours):
            embedder = InjectionNeighbours(embedder)
        flagged = {f.tool for f in findings if f.code == "description-addresses-model"}
        for name, why in embedder.find(t for t in pool if t.name not in flagged).items():
            findings.append(
                Finding(
                    name,
                    "warning",
                    "description-resembles-injection",
                    f"The tool's text may address the model: {why}.",
                    "Read it: describe what the tool does and when to use it, nothing more.",
                )
            )
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
