"""Who may call a tool: the model directly, a program (code mode's ``run_code``, Anthropic's
code execution), or both.

The peers have the same choice: Anthropic's programmatic tool calling marks each tool with
``allowed_callers`` (``direct``, a code execution tool, or both), pydantic-ai selects the tools
its code mode may call by tool metadata. Here it is :class:`Callers`, patterns in the profiles'
language (names, globs, ``domain:``, ``destructive``...), read in order ``direct``, ``code``,
``both``; a tool none names follows its annotation, ``Tool.metadata["callers"]``; else the
mode's default (code mode: always-on tools and ``Code(direct=...)`` both, the rest code only;
every other mode: direct).

The choice is enforced when a tool runs, not only when it is listed: :func:`check_caller`
refuses a caller a tool's choice does not allow, asked by every way to a tool (a direct call,
``call_tool``, a program's call).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from toolmgmt_core._model.errors import ToolDeniedError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.profiles import ToolPattern, parse_patterns

__all__ = ["CALLER_CHOICES", "CallerChoice", "Callers", "annotated", "check_caller"]

CallerChoice = Literal["direct", "code", "both"]
"""``direct``: only the model calls it, as a tool of its own; ``code``: only a program;
``both``: either."""
CALLER_CHOICES: tuple[CallerChoice, ...] = ("direct", "code", "both")
ANNOTATION = "callers"
"""The ``Tool.metadata`` key a tool's own choice is read from."""


@dataclass(frozen=True)
class Callers:
    """Which tools the model calls directly, which only a program calls, which both.

    Usage::

        Code(callers=Callers(direct=["destructive", "send_*"], both=["crm_get_contact"]))
        catalog.add_function(export_all, metadata={"callers": "code"})   # by annotation

    Args:
        direct: patterns of tools only the model calls (listed; a program's call is refused
            and ``tool_search``'s signatures leave them out). For calls a human should see
            one by one: sending, paying, deleting.
        code: patterns of tools only a program calls (never listed, not even an always-on
            one; a direct call is refused). For tools whose results are large or raw.
        both: patterns of tools listed and callable from a program.

    A pattern is a tool name, a glob, or any form profiles take (``domain:crm``,
    ``destructive``, ``readonly``...); the first list that names a tool decides.
    """

    direct: tuple[str, ...] = ()
    code: tuple[str, ...] = ()
    both: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        parsed: list[tuple[CallerChoice, ToolPattern]] = []
        for choice in CALLER_CHOICES:
            patterns = getattr(self, choice)
            what = f"Callers({choice}=...)"
            for pattern in parse_patterns(patterns, what=what):
                parsed.append((choice, pattern))
            object.__setattr__(self, choice, tuple(p.text for c, p in parsed if c == choice))
        object.__setattr__(self, "_parsed", tuple(parsed))

    @property
    def _patterns(self) -> tuple[tuple[CallerChoice, ToolPattern], ...]:
        return self._parsed  # type: ignore[attr-defined,no-any-return]

    def names(self, tool: Tool) -> bool:
        """Whether a pattern of these lists names ``tool``."""
        return any(pattern.matches(tool) for _, pattern in self._patterns)

    def choice(self, tool: Tool, default: CallerChoice) -> CallerChoice:
        """Who may call ``tool``: the first list naming it, else its annotation, else
        ``default``."""
        for choice, pattern in self._patterns:
            if pattern.matches(tool):
                return choice
        return annotated(tool) or default

    def __repr__(self) -> str:
        parts = [f"{c}={list(getattr(self, c))!r}" for c in CALLER_CHOICES if getattr(self, c)]
        return f"Callers({', '.join(parts)})"


def annotated(tool: Tool) -> CallerChoice | None:
    """The choice ``tool`` declares in ``metadata["callers"]`` (None: none, or not one of
    :data:`CALLER_CHOICES`)."""
    value = tool.metadata.get(ANNOTATION) if tool.metadata else None
    return value if value in CALLER_CHOICES else None  # type: ignore[return-value]


def check_caller(tool: Tool, choice: CallerChoice, from_program: bool) -> None:
    """Refuse a caller ``choice`` does not allow: a direct call of a tool only programs call,
    a program's call of a tool only the model calls.

    Raises:
        ToolDeniedError: saying how the tool is called instead.
    """
    refusal = _refusal(tool.name, choice, from_program)
    if refusal is not None:
        raise ToolDeniedError(refusal, tool_name=tool.name)


def _refusal(name: str, choice: CallerChoice, from_program: bool) -> str | None:
    if from_program and choice == "direct":
        return (
            f"Tool {name!r} is called directly, not from a program: call {name} as a tool of "
            "its own (it is in your tool list), outside run_code."
        )
    if not from_program and choice == "code":
        return (
            f"Tool {name!r} is called from a program only: run_code with "
            f"`await {name}(...)` (tool_search(query={name!r}) gives its signature)."
        )
    return None
