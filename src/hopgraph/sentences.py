"""A passage's sentences: what the ingest embeds one by one beside the passage (the graph's
sentence collection) and the default method scores a passage by (`retrieve.sentences`).

Only a passage of several lines has sentences. Its first line is its context, not a
sentence of it: a document chunk's headings (`ingest.documents`) or a corpus passage's
title (`ingest.offline_records`). When two or more lines follow, the passage is a list of
separate facts (a profile's lines, a minute's items, key-value lines, table rows, an
e-mail's paragraphs), one of which may answer a question the passage as a whole is not
about; a single paragraph under its title is about one thing, and its own vector says so
(benchmarks/RESULTS.md, "A passage's best sentence, for passages of several lines"). Each
of those lines is cut into sentences by syntok (the splitter the benchmarks read gold
sentences with, `budget`); a piece of fewer than MIN_WORDS words (a list's marker, a lone
date, "Regards,") is no sentence. A line is never joined to the next: a chunk's lines are
its paragraphs, list items and table rows, already unwrapped.

A sentence row's id comes from its passage's id and its exact text (`identity.sentence_id`),
so what rows a passage has follows from its id and text alone: a query reads them by id, and
a row is never one of another text.
"""

from __future__ import annotations

from syntok import segmenter

from hopgraph.identity import sentence_id

MIN_WORDS = 3
MIN_LINES = 2  # lines after the first a passage needs to have sentences
# The sentences of one passage that get rows (a chunk holds far fewer; a passage given whole
# in a JSON file may hold more, and is scored by its first MAX_SENTENCES).
MAX_SENTENCES = 64


def sentences_of(text: str) -> list[str]:
    """The passage's sentences as written, in order, without repeats, at most
    MAX_SENTENCES; none unless MIN_LINES non-blank lines follow its first."""
    body = [line for line in text.split("\n")[1:] if line.strip()]
    if len(body) < MIN_LINES:
        return []
    found: dict[str, None] = {}
    for line in body:
        for paragraph in segmenter.analyze(line):
            for sentence in paragraph:
                piece = "".join(token.spacing + token.value for token in sentence).strip()
                if len(piece.split()) >= MIN_WORDS:
                    found[piece] = None
                    if len(found) == MAX_SENTENCES:
                        return list(found)
    return list(found)


def sentence_rows(passage_id: str, text: str) -> dict[str, str]:
    """A passage's sentence rows: id → sentence, in order."""
    return {sentence_id(passage_id, s): s for s in sentences_of(text)}
