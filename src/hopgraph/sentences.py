"""A passage's sentences: what the ingest embeds one by one beside the passage (the graph's
sentence collection) and the default method scores a passage by (`retrieve.sentences`).

The first line of a passage of several lines is its context, not a sentence of it: a
document chunk's headings (`ingest.documents`) or a corpus passage's title
(`ingest.offline_records`). Every other line is cut into sentences by syntok (the splitter
the benchmarks read gold sentences with, `budget`); a piece of fewer than MIN_WORDS words (a
list's marker, a lone date, "Regards,") is no sentence. A line is never joined to the next:
a chunk's lines are its paragraphs, list items and table rows, already unwrapped.

A sentence row's id is its passage's id and its place (`sentence_ids`), so what a passage's
rows are follows from its id and text alone: a query reads them by id.
"""

from __future__ import annotations

from syntok import segmenter

MIN_WORDS = 3
# The sentences of one passage that get rows (a chunk holds far fewer; a passage given whole
# in a JSON file may hold more, and is scored by its first MAX_SENTENCES).
MAX_SENTENCES = 64


def sentences_of(text: str) -> list[str]:
    """The passage's sentences as written, in order, at most MAX_SENTENCES."""
    lines = text.split("\n")
    found: list[str] = []
    for line in lines[1:] if len(lines) > 1 else lines:
        for paragraph in segmenter.analyze(line):
            for sentence in paragraph:
                piece = "".join(token.spacing + token.value for token in sentence).strip()
                if len(piece.split()) >= MIN_WORDS:
                    found.append(piece)
                    if len(found) == MAX_SENTENCES:
                        return found
    return found


def sentence_ids(passage_id: str, count: int) -> list[str]:
    """The ids of a passage's first `count` sentence rows."""
    return [f"{passage_id}#{n}" for n in range(count)]
