"""What a formatting call did: tools left out, strict fallbacks, lossy rewrites, names."""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

__all__ = ["FormatReport"]

_T = TypeVar("_T")


class _Entry(Generic[_T]):
    """A field of :class:`FormatReport`: an attribute that is a key of the report (a dict)."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self.key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name

    @overload
    def __get__(self, report: None, owner: type) -> _Entry[_T]: ...
    @overload
    def __get__(self, report: FormatReport, owner: type) -> _T: ...
    def __get__(self, report: FormatReport | None, owner: type) -> Any:
        return self if report is None else report[self.key]

    def __set__(self, report: FormatReport, value: _T) -> None:
        report[self.key] = value


class FormatReport(dict[str, Any]):
    """The side notes of one :func:`~toolmgmt_core.format_tools` call.

    A dict of plain JSON (so ``json.dumps`` takes :func:`~toolmgmt_core.format_tools`'s whole
    answer) whose keys are also its attributes: ``report.skipped`` is ``report["skipped"]``.
    """

    provider: _Entry[str] = _Entry("The provider the tools were formatted for.")
    skipped: _Entry[dict[str, str]] = _Entry(
        "Original name -> why the tool was left out of the request."
    )
    strict_fallbacks: _Entry[dict[str, str]] = _Entry(
        "Original name -> why the tool was sent non-strict although strict mode was asked for."
    )
    notes: _Entry[dict[str, list[str]]] = _Entry(
        "Original name -> lossy but valid rewrites (a keyword moved into a description, ...)."
    )
    name_map: _Entry[dict[str, str]] = _Entry(
        "Name sent to the provider -> original name, for every tool sent."
    )
    deferred: _Entry[list[str]] = _Entry("Original names of the tools sent with deferred loading.")
    cached: _Entry[bool] = _Entry("Whether the result came from the formatting cache.")

    def __init__(
        self,
        provider: str,
        skipped: dict[str, str] | None = None,
        strict_fallbacks: dict[str, str] | None = None,
        notes: dict[str, list[str]] | None = None,
        name_map: dict[str, str] | None = None,
        deferred: list[str] | None = None,
        cached: bool = False,
    ) -> None:
        super().__init__(
            provider=provider,
            skipped={} if skipped is None else skipped,
            strict_fallbacks={} if strict_fallbacks is None else strict_fallbacks,
            notes={} if notes is None else notes,
            name_map={} if name_map is None else name_map,
            deferred=[] if deferred is None else deferred,
            cached=cached,
        )

    def __repr__(self) -> str:
        return f"FormatReport({dict.__repr__(self)})"

    def replace(self, **changes: Any) -> FormatReport:
        """A copy with ``changes`` (its other fields shared, as ``dataclasses.replace``)."""
        return FormatReport(**{**self, **changes})

    def note(self, name: str, text: str) -> None:
        """Record a lossy rewrite of tool ``name``."""
        bucket = self.notes.setdefault(name, [])
        if text not in bucket:
            bucket.append(text)

    def original_name(self, provider_name: str) -> str:
        """The original name of a tool the model called by ``provider_name``."""
        return self.name_map.get(provider_name, provider_name)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON (a copy)."""
        return {
            "provider": self.provider,
            "skipped": dict(self.skipped),
            "strict_fallbacks": dict(self.strict_fallbacks),
            "notes": {k: list(v) for k, v in self.notes.items()},
            "name_map": dict(self.name_map),
            "deferred": list(self.deferred),
            "cached": self.cached,
        }
