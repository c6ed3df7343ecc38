"""What a program prints, kept within a limit: its head and its tail, and how much was cut
between them (:class:`ProgramOutput`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

__all__ = ["ProgramOutput"]

_CUT_HERE = "\n[... printed output cut here ...]\n"


class ProgramOutput:
    """A program's printed output: the first half of ``limit`` characters and the last half,
    with a line where the rest was cut and one at the end saying how much, so its last
    ``print`` always arrives and the model knows what it missed.

    Usage::

        output = ProgramOutput(200_000)
        output.write("stdout", text)   # the sandbox's print callback
        output.text()
    """

    def __init__(self, limit: int, before: Iterable[str] = ()) -> None:
        self.head_room = limit - limit // 2
        self.tail_room = limit // 2
        self.head: list[str] = []
        self.head_chars = 0
        self.tail: deque[str] = deque()
        self.tail_chars = 0
        self.printed = 0
        """Characters printed in all."""
        for text in before:
            self.write("stdout", text)

    def write(self, stream: str, text: str) -> None:
        """Keep ``text`` (the sandbox's print callback: ``stream`` is stdout or stderr)."""
        self.printed += len(text)
        room = self.head_room - self.head_chars
        if room > 0:
            kept = text[:room]
            self.head.append(kept)
            self.head_chars += len(kept)
            text = text[room:]
        if not text:
            return
        self.tail.append(text)
        self.tail_chars += len(text)
        while self.tail and self.tail_chars - len(self.tail[0]) >= self.tail_room:
            self.tail_chars -= len(self.tail.popleft())

    def parts(self) -> list[str]:
        """The kept output in order, with a line where it was cut (what a paused program
        keeps: :meth:`text` adds how much was cut)."""
        tail = self._tail()
        if self.printed - self.head_chars - len(tail) <= 0:
            return [*self.head, tail] if tail else list(self.head)
        return [*self.head, _CUT_HERE, tail]

    def text(self) -> str:
        """The kept output as one string, ending with a line saying how much was cut when some
        was (the end survives when the result budget cuts the middle again)."""
        tail = self._tail()
        cut = self.printed - self.head_chars - len(tail)
        if cut <= 0:
            return "".join(self.parts())
        return "".join(self.parts()).rstrip("\n") + (
            f"\n[{cut:,} characters of printed output were cut at '{_CUT_HERE.strip()}': the "
            f"program printed {self.printed:,}; the first {self.head_chars:,} and the last "
            f"{len(tail):,} are kept]"
        )

    def _tail(self) -> str:
        tail = "".join(self.tail)
        return tail[len(tail) - self.tail_room :] if len(tail) > self.tail_room else tail
