"""The ``Tool`` model: one tool, from any source, in one shape."""

from __future__ import annotations

import copy
import inspect
import json
import re
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolmgmt_core._model.errors import InvalidToolError
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.schema_drafts import NORMALIZED_KEY, normalize_schema
from toolmgmt_core._model.schema_guard import check_schema_shape, check_tool_schema
from toolmgmt_core._model.signatures import function_schema

__all__ = [
    "CALL_TOOL",
    "DISCOVER_TOOLS",
    "EMPTY_PARAMETERS",
    "EXECUTE_TOOL",
    "GET_TOOL_SCHEMA",
    "LOAD_TOOL_SCHEMA",
    "META_TOOL_NAMES",
    "RUN_CODE",
    "TOOL_SEARCH",
    "Tool",
    "ToolAnnotations",
    "TruncationStrategy",
    "is_meta_tool",
    "one_line",
    "validate_parameters_schema",
]

TruncationStrategy = Literal["head", "tail", "smart"]

EMPTY_PARAMETERS: Mapping[str, Any] = {"type": "object", "properties": {}}

_SUMMARY_CHARS = 160

TOOL_SEARCH = "tool_search"
"""The search mode's meta-tool: finds tools by a request and answers with their definitions."""
DISCOVER_TOOLS = "discover_tools"
GET_TOOL_SCHEMA = "get_tool_schema"
EXECUTE_TOOL = "execute_tool"
"""The gateway mode's meta-tool that runs a tool by name, with its arguments."""
LOAD_TOOL_SCHEMA = "load_tool_schema"
CALL_TOOL = "call_tool"
"""The search mode's meta-tool that runs a tool the search found, by name."""
RUN_CODE = "run_code"
"""Code mode's meta-tool: runs a Python program that calls tools as functions."""

META_TOOL_NAMES: tuple[str, ...] = (
    TOOL_SEARCH,
    DISCOVER_TOOLS,
    GET_TOOL_SCHEMA,
    EXECUTE_TOOL,
    LOAD_TOOL_SCHEMA,
    CALL_TOOL,
    RUN_CODE,
)
"""Every meta-tool name (the modes of :mod:`toolmgmt_core._session.modes` define them); a catalog
tool of the same name is shadowed in the modes that use it."""


@dataclass(frozen=True)
class ToolAnnotations:
    """Hints about a tool's behaviour, as in MCP's ``ToolAnnotations``. ``None`` means unknown."""

    read_only: bool | None = None
    """The tool does not change its environment."""
    destructive: bool | None = None
    """The tool may destroy or overwrite data (meaningful when not read-only)."""
    idempotent: bool | None = None
    """Calling it again with the same arguments has no further effect."""
    open_world: bool | None = None
    """The tool reaches an open world (the web, other people), not a closed system."""
    title: str | None = None
    """A human-readable title."""

    def to_mcp(self) -> dict[str, Any]:
        """The annotations under MCP's camelCase names, leaving out unknown ones."""
        pairs = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        return {k: v for k, v in pairs.items() if v is not None}

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> ToolAnnotations:
        """Read annotations in snake_case or MCP camelCase form."""
        if not data:
            return cls()

        def pick(*keys: str) -> Any:
            for key in keys:
                if key in data:
                    return data[key]
            return None

        return cls(
            read_only=pick("read_only", "readOnlyHint", "readOnly"),
            destructive=pick("destructive", "destructiveHint"),
            idempotent=pick("idempotent", "idempotentHint"),
            open_world=pick("open_world", "openWorldHint"),
            title=pick("title"),
        )


def validate_parameters_schema(schema: Any, *, tool_name: str = "?") -> dict[str, Any]:
    """Check that ``schema`` is a JSON Schema for an object of arguments; return it as a dict.

    Beyond the meta-schema, a schema that could make validation do I/O (a remote ``$ref``),
    loop or hang is refused (see :mod:`toolmgmt_core._model.schema_guard`).

    Raises:
        InvalidToolError: naming the tool and what a valid parameters schema looks like.
    """
    return _checked_parameters(schema, tool_name)[0]


def _checked_parameters(
    schema: Any, tool_name: str, notes: list[str] | None = None
) -> tuple[dict[str, Any], int]:
    """:func:`validate_parameters_schema`, and the schema's length as JSON, which a catalog's
    :class:`~toolmgmt_core.ToolLimits` compares without measuring it again; what older drafts'
    forms were rewritten (:mod:`~toolmgmt_core._model.schema_drafts`) goes into ``notes``."""
    if not isinstance(schema, Mapping):
        raise InvalidToolError(
            f"Tool {tool_name!r}: parameters must be a JSON Schema object (a dict such as "
            f'{{"type": "object", "properties": {{...}}}}), got {type(schema).__name__}.'
        )
    problem = check_schema_shape(schema)  # before deepcopy and json.dumps recurse into it
    if problem is not None:
        raise InvalidToolError(f"Tool {tool_name!r}: parameters {problem}.")
    # A deep copy: the tool owns its schema, so the caller editing its dict later changes nothing.
    schema = copy.deepcopy(dict(schema))
    rewritten = normalize_schema(schema)  # what real servers publish in draft 4, as 2020-12
    if notes is not None:
        notes.extend(rewritten)
    kind = schema.get("type", "object")
    if kind != "object" and not (isinstance(kind, list) and "object" in kind):
        raise InvalidToolError(
            f'Tool {tool_name!r}: parameters must describe an object ("type": "object"), '
            f"got type {kind!r}."
        )
    text = json.dumps(schema, sort_keys=True, default=repr)
    problem = _schema_problem(text)
    if problem is not None:
        raise InvalidToolError(f"Tool {tool_name!r}: parameters {problem}")
    return schema, len(text)


@lru_cache(maxsize=4096)
def _schema_problem(schema_json: str) -> str | None:
    # Checking against the meta-schema costs ~2 ms; catalogs rebuilt from the same definitions
    # (a demo catalog per test, an MCP refresh) check each distinct schema once.
    schema = json.loads(schema_json)
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.path) or "(root)"
        return f"are not a valid JSON Schema at {where}: {exc.message}"
    except RecursionError:
        return "nest too deeply to be checked; flatten the schema."
    return check_tool_schema(schema)


def one_line(text: str, limit: int = _SUMMARY_CHARS) -> str:
    """The first sentence or line of ``text``, at most ``limit`` characters."""
    text = " ".join(text.strip().split())
    match = re.match(r"(.+?(?<!\be\.g)(?<!\bi\.e)[.!?])(\s|$)", text)  # not at "e.g. "
    first = match.group(1) if match else text
    if len(first) > limit:
        first = first[: limit - 1].rstrip() + "…"
    return first


@dataclass(frozen=True)
class Tool:
    """One tool in the catalog, whatever its source.

    Tools are immutable; use :meth:`replace` to derive a changed copy (a description override,
    another domain).
    """

    name: str
    """Unique name within a catalog. Any string; providers' limits are applied when formatting."""
    description: str = ""
    """What the tool does and when to use it."""
    parameters: Mapping[str, Any] = field(default_factory=lambda: dict(EMPTY_PARAMETERS))
    """A JSON Schema object describing the arguments."""
    domain: str = "general"
    """Top level of the catalog tree (for example ``crm``, or an MCP server's name)."""
    group: str = "general"
    """Second level of the tree, within a domain (for example ``contacts``)."""
    keywords: tuple[str, ...] = ()
    """Extra search terms (synonyms, product names)."""
    profiles: tuple[str, ...] = ()
    """Names of profiles the tool belongs to."""
    defer_loading: bool | None = None
    """True: never listed until loaded; False: always listed; None: the manager decides."""
    max_result_tokens: int | None = None
    """Budget for one result of this tool; None uses the manager's default."""
    truncation: TruncationStrategy | None = None
    """How results over budget are cut; None uses the manager's default."""
    annotations: ToolAnnotations = field(default_factory=ToolAnnotations)
    """Behaviour hints (read-only, destructive, idempotent, open-world)."""
    input_examples: tuple[Mapping[str, Any], ...] = ()
    """Example argument objects, sent with the schema."""
    output_schema: Mapping[str, Any] | None = None
    """Optional JSON Schema of the result."""
    usage_notes: str | None = None
    """Longer guidance sent only with the full schema, never in a listing."""
    handler: Callable[..., Any] | None = field(default=None, compare=False, repr=False)
    """Sync or async callable run with the arguments as keyword arguments."""
    timeout: float | None = None
    """Seconds a call may take; None uses the manager's default."""
    metadata: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """Free-form data for integrations (the source object, an upstream name, ...)."""
    max_concurrency: int | None = None
    """Calls of a sync handler running at once, each on a thread of the tool's own; None uses
    :data:`~toolmgmt_core._calls.threads.DEFAULT_TOOL_CONCURRENCY`."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise InvalidToolError(
                f"Tool name must be a non-empty string, got {self.name!r}. Use a short "
                "verb-led name such as 'search_contacts'."
            )
        if self.name != self.name.strip():
            raise InvalidToolError(
                f"Tool name {self.name!r} has surrounding whitespace; use {self.name.strip()!r}."
            )
        if not fold_name(self.name) or any(unicodedata.category(c) == "Cc" for c in self.name):
            raise InvalidToolError(
                f"Tool name {self.name!r} holds a control character or nothing visible; use "
                "letters, digits and '_' such as 'search_contacts'."
            )
        if not isinstance(self.description, str):
            raise InvalidToolError(f"Tool {self.name!r}: description must be a string.")
        notes: list[str] = []
        parameters, size = _checked_parameters(self.parameters, self.name, notes)
        object.__setattr__(self, "parameters", parameters)
        if notes:  # kept where a copy of the tool (dataclasses.replace) keeps it too
            object.__setattr__(self, "metadata", {**self.metadata, NORMALIZED_KEY: notes})
        object.__setattr__(self, "_parameters_chars", size)  # not a field: measured, kept
        if self.handler is not None and not callable(self.handler):
            raise InvalidToolError(
                f"Tool {self.name!r}: handler must be callable (a function or coroutine "
                f"function), got {type(self.handler).__name__}."
            )
        if self.truncation not in (None, "head", "tail", "smart"):
            raise InvalidToolError(
                f"Tool {self.name!r}: truncation must be 'head', 'tail' or 'smart', "
                f"got {self.truncation!r}."
            )
        if self.max_concurrency is not None and (
            isinstance(self.max_concurrency, bool)
            or not isinstance(self.max_concurrency, int)
            or self.max_concurrency < 1
        ):
            raise InvalidToolError(
                f"Tool {self.name!r}: max_concurrency must be a positive whole number, got "
                f"{self.max_concurrency!r}."
            )
        if self.max_result_tokens is not None and self.max_result_tokens <= 0:
            raise InvalidToolError(
                f"Tool {self.name!r}: max_result_tokens must be a positive number of tokens."
            )
        for attr in ("keywords", "profiles", "input_examples"):
            value = getattr(self, attr)
            if isinstance(value, str | Mapping):
                value = (value,)
            object.__setattr__(self, attr, tuple(value))
        if isinstance(self.annotations, Mapping):
            object.__setattr__(self, "annotations", ToolAnnotations.from_mapping(self.annotations))
        if not self.domain or not isinstance(self.domain, str):
            raise InvalidToolError(f"Tool {self.name!r}: domain must be a non-empty string.")
        if not self.group or not isinstance(self.group, str):
            raise InvalidToolError(f"Tool {self.name!r}: group must be a non-empty string.")

    @property
    def summary(self) -> str:
        """The description's first sentence, for listings and search hits."""
        return one_line(self.description)

    @property
    def is_async(self) -> bool:
        """Whether the handler is a coroutine function."""
        return self.handler is not None and inspect.iscoroutinefunction(self.handler)

    @property
    def required(self) -> tuple[str, ...]:
        """The names of required arguments."""
        return tuple(self.parameters.get("required", ()))

    def replace(self, **changes: Any) -> Tool:
        """A copy with ``changes`` applied (validated again)."""
        return replace(self, **changes)

    def to_dict(self, *, full: bool = True) -> dict[str, Any]:
        """A JSON-compatible definition: name, description, parameters.

        With ``full``, also the usage notes, input examples, output schema and annotations
        when the tool has them (what a schema request returns).
        """
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": dict(self.parameters),
        }
        if full:
            if self.usage_notes:
                data["usage_notes"] = self.usage_notes
            if self.input_examples:
                data["input_examples"] = [dict(e) for e in self.input_examples]
            if self.output_schema:
                data["output_schema"] = dict(self.output_schema)
            annotations = self.annotations.to_mcp()
            if annotations:
                data["annotations"] = annotations
        return data

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        **fields: Any,
    ) -> Tool:
        """A tool whose schema comes from ``fn``'s type hints and docstring."""
        fn_name, fn_description, parameters = function_schema(fn)
        return cls(
            name=name or fn_name,
            description=description if description is not None else fn_description,
            parameters=parameters,
            handler=fn,
            **fields,
        )


def is_meta_tool(tool: Tool) -> bool:
    """Whether ``tool`` is one of toolmgmt's meta-tools (marked, and named like one)."""
    return bool(tool.metadata.get("meta")) and tool.name in META_TOOL_NAMES
