"""Where a paragraph's text lies in its document's text, once lines were joined.

The structure reads lines stripped of their indentation and joins a wrapped line to the one
it goes on from (a space, or nothing where a hyphen broke a word), so a paragraph's text is
not a slice of the document's. A paragraph keeps the runs of it that are (`Placed`), and the
chunker maps a piece of the paragraph back to its span in the document through them.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property

__all__ = ["Placed", "Run", "joined_runs"]

Run = tuple[int, int, int]  # (offset in a paragraph, offset in the document, length)


@dataclass(frozen=True)
class Placed:
    """Where a paragraph's text lies in its document's text: the runs of it copied from the
    document unchanged, in order. Between two runs the paragraph has what joined two lines
    (a space, a line break, nothing for a mended hyphen) where the document has a line
    break, the lines' indentation, or the hyphen."""

    runs: tuple[Run, ...]

    @cached_property
    def _offsets(self) -> list[int]:
        return [run[0] for run in self.runs]

    def start(self, offset: int) -> int:
        """Where the paragraph's character at `offset` is in the document (a character
        between runs: where the next run starts)."""
        index = max(bisect_right(self._offsets, offset) - 1, 0)
        at, where, length = self.runs[index]
        if offset - at < length or index + 1 == len(self.runs):
            return where + min(max(offset - at, 0), length)
        return self.runs[index + 1][1]

    def end(self, offset: int) -> int:
        """Where the paragraph's text up to `offset` (excluded) ends in the document."""
        if offset <= 0:
            return self.start(0)
        at, where, length = self.runs[max(bisect_right(self._offsets, offset - 1) - 1, 0)]
        return where + min(offset - at, length)


def joined_runs(first: tuple[Run, ...], second: tuple[Run, ...], second_text: str,
                text: str) -> tuple[Run, ...]:
    """The runs of `text`: a first text (whose runs are `first`) and then `second_text` as
    its end (joined by a space or a line break, or a hyphen mended away): the first's runs
    cut where the second begins, the second's moved there."""
    shift = len(text) - len(second_text)
    kept = tuple((at, where, min(length, shift - at)) for at, where, length in first
                 if at < shift)
    return kept + tuple((at + shift, where, length) for at, where, length in second)
