"""The lint's note on a schema written in an older JSON Schema draft, accepted once rewritten
to 2020-12 (:mod:`toolmgmt_core._model.schema_drafts`)."""

from __future__ import annotations

from collections.abc import Iterator

from toolmgmt_core._lint.findings import Finding
from toolmgmt_core._model.schema_drafts import NORMALIZED_KEY
from toolmgmt_core._model.tool import Tool

__all__ = ["lint_normalized"]


def lint_normalized(tool: Tool) -> Iterator[Finding]:
    """One ``schema-normalized`` finding listing what was rewritten, when anything was."""
    notes = tool.metadata.get(NORMALIZED_KEY)
    if not notes:
        return
    yield Finding(
        tool.name,
        "info",
        "schema-normalized",
        f"The parameters schema uses older JSON Schema draft forms, rewritten to 2020-12 when "
        f"the tool was added: {'; '.join(str(n) for n in notes)}.",
        "Publish JSON Schema 2020-12 (for zod: zod-to-json-schema's target 'jsonSchema2019-09' "
        "or later, or z.toJSONSchema) so what the model sees is what you wrote.",
    )
