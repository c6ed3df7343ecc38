"""Which tools can send data out of the deployment, and so gain nothing from learning unless
:attr:`~toolmgmt_core._learning.teaching.LearningOptions.outbound` opts in.

Learning lifts a tool for the words principals used before it; a tool that shares, sends,
exports, forwards, publishes or uploads is where a lift does most harm (three principals
teaching "read the file report.txt" to a share tool would put it first for the next user
reading a file). A tool can send data out (:func:`sends_data_out`) when:

- its annotations say it reaches an open world (``openWorldHint``: the web, other people);
- a word of its name is one of :data:`OUTBOUND_VERBS` (``files_share_file``,
  ``crm_export_contacts``), whatever its annotations say, since a name is what the model reads;
- it is not read-only and its description uses one of those verbs in any form ("Create a rule
  that labels, archives, forwards or deletes incoming mail"; a read-only tool's description
  may speak of what was shared without sending anything).

The words are English; a tool described in another language with no such annotation is not
recognised, and learns as any other tool.
"""

from __future__ import annotations

import re

from toolmgmt_core._model.tool import Tool

__all__ = ["OUTBOUND_VERBS", "sends_data_out"]

OUTBOUND_VERBS = frozenset(
    {"share", "send", "export", "forward", "publish", "upload", "post", "invite", "transfer"}
)
"""Verbs that name sending data out, in a tool's name (as a whole word) or description."""

_INFLECTED = re.compile(
    r"\b(?:shar(?:e|es|ed|ing)|sen(?:d|ds|t|ding)|export(?:s|ed|ing)?|forward(?:s|ed|ing)?"
    r"|publish(?:es|ed|ing)?|upload(?:s|ed|ing)?|post(?:s|ed|ing)?|invit(?:e|es|ed|ing)"
    r"|transfer(?:s|red|ring)?)\b",
    re.IGNORECASE,
)
_NAME_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def sends_data_out(tool: Tool) -> bool:
    """Whether ``tool`` can send data out (see the module docstring)."""
    if tool.annotations.open_world is True:
        return True
    if any(word.lower() in OUTBOUND_VERBS for word in _NAME_WORDS.findall(tool.name)):
        return True
    return tool.annotations.read_only is not True and bool(_INFLECTED.search(tool.description))
