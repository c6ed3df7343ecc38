"""What a program prints, kept within a limit: its head and its tail, and how much was cut
between them (:class:`ProgramOutput`)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

__all__ = ["ProgramOutput"]


class ProgramOutput:
    """A program's printed output: the first half of ``limit`` characters and the last half,
    with a line saying how many were cut between them, so its last ``print`` always arrives.

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
        """The kept output in order, with the line saying what was cut where it was cut."""
        tail = "".join(self.tail)
        tail = tail[len(tail) - self.tail_room :] if len(tail) > self.tail_room else tail
        cut = self.printed - self.head_chars - len(tail)
        if cut <= 0:
            return [*self.head, tail] if tail else list(self.head)
        marker = (
            f"\n[... {cut:,} characters of printed output cut here: the program printed "
            f"{self.printed:,}, the first and last {self.head_chars + len(tail):,} are kept ...]\n"
        )
        return [*self.head, marker, tail]

    def text(self) -> str:
        """The kept output as one string."""
        return "".join(self.parts())
