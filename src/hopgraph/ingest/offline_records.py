"""The offline extractor's records: benchmark corpora ({"title", "text"} items) and raw
document chunks turned into passages with the triplets `offline_extractor.extract` finds."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from hopgraph.ingest import fields, spacy_names
from hopgraph.ingest.documents import Chunk
from hopgraph.ingest.heading_names import heading_post
from hopgraph.ingest.offline_extractor import OfflineReport, Rules, extract, vocabulary_of
from hopgraph.ingest.vocabulary import spaces_hyphens
from hopgraph.records import LoadReport, PassageRecord, Triplet

PROGRESS_EVERY = 16  # chunks between two progress calls: a stop waits for at most these
HOLDS = "is"  # the predicate of "person is post" (`sole_posts`)


def extract_corpus(items: Iterable[dict[str, str]], source: str, rules: Rules | None = None
                   ) -> tuple[LoadReport, OfflineReport]:
    """Records from `{"title", "text"}` items (a benchmark corpus): the passage is
    `title + "\\n" + text`, as the OpenIE files have it."""
    load, stats = LoadReport(path=source), OfflineReport()
    items = list(items)
    vocabulary = vocabulary_of(item["text"] for item in items
                               if isinstance(item.get("text"), str))
    spacy_names.prefetch((item["text"] for item in items if isinstance(item.get("text"), str)),
                         rules or Rules())
    for i, item in enumerate(items):
        title, text = item.get("title", ""), item.get("text", "")
        if not isinstance(text, str) or not text.strip():
            load.skip_row(f"{source}:[{i}]", "no text")
            continue
        passage = f"{title}\n{text}" if title else text
        own = replace(vocabulary, spaced_hyphens=spaces_hyphens([text]))  # its own hyphens
        load.records.append(PassageRecord(passage, extract(title, text, rules, stats, own),
                                          metadata={"title": title}, source=f"{source}:[{i}]"))
    return load, stats


_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def document_title(path: str, text: str) -> str:
    """A raw document's title: its first Markdown heading, else its first line when that is
    short and has no final full stop, else the file name without its suffix."""
    heading = _HEADING.search(text)
    if heading:
        return heading.group(1).strip()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if first and len(first) <= 80 and not first.endswith((".", "!", "?", ":")):
        return first
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def sole_posts(chunks: list[Chunk]) -> dict[str, Triplet]:
    """Profile headings of the chunks ("Priya Nair — Quality & Technical Manager") whose post
    no other heading gives to someone else, each with the fact "person is post".

    A company's documents name a post where they mean its holder ("Taken by the Quality &
    Technical Manager", "Responsible: Housing Officer (Wrenfield North)"); the profile
    says who holds it, and this fact is the graph's way from the post to the person. A
    post several people hold ("Account Manager") would make one hub of all of them, so
    those give none. A post no other text writes still gives its fact: it ties the profile
    to the person the other documents name ("Lewis Hay in our finance team will apply the
    credit"), whose profile text calls him "Lewis" or "he" and relates him to nothing.
    """
    found: dict[str, tuple[str, str]] = {}
    holders: dict[str, set[str]] = {}
    for chunk in chunks:
        held = heading_post(chunk.headings[-1]) if chunk.headings and chunk.title else None
        if held is None or held[0] != chunk.title:
            continue
        found[chunk.headings[-1]] = held
        holders.setdefault(held[1].lower(), set()).add(held[0])
    return {heading: Triplet(person, HOLDS, post) for heading, (person, post) in found.items()
            if len(holders[post.lower()]) == 1}


def legends(chunks: list[Chunk]) -> dict[str, dict[str, str]]:
    """Each document's legend, the codes its key–value lines say what they stand for
    ("Depot codes: LEE = Leeds, HUL = Hull"), each to the name it stands for (a name: a
    capital first; "SR = social rent" is not one)."""
    found: dict[str, dict[str, str]] = {}
    for chunk in chunks:
        if "=" not in chunk.text:
            continue  # (no legend: the layout is not read twice)
        for record in fields.split(chunk.text).records:
            for _, value in record.fields:
                found.setdefault(chunk.doc, {}).update(fields.coded_names(value))
    return {doc: codes for doc, codes in found.items() if codes}


def _decoded(triplets: list[Triplet], codes: dict[str, str]) -> list[Triplet]:
    """The triplets with each code of the document's legend written as what it stands for
    (`F205 | depot | Hull`, not `HUL`: the register of depots names Hull), but for the
    legend's own facts (`HUL | depot codes | Hull`), which keep the code a name to find."""
    if not codes:
        return triplets
    return [t if codes.get(t.subject) == t.object else
            Triplet(codes.get(t.subject, t.subject), t.predicate, codes.get(t.object, t.object))
            for t in triplets]


def extract_chunks(chunks: Iterable[Chunk], rules: Rules | None = None,
                   progress: Callable[[str, int, int], None] | None = None
                   ) -> tuple[LoadReport, OfflineReport]:
    """Records of raw-document chunks: each passage is the chunk's headings line and text
    (its document is the file it came from); triplets from the chunk's text, linked to its
    title when its heading names something; the common-words rule reads the whole ingest.
    `progress("extract", chunks done, chunks)` is called every PROGRESS_EVERY chunks (it may
    raise to stop)."""
    chunks = list(chunks)
    load, stats = LoadReport(path="offline extractor"), OfflineReport()
    vocabulary = vocabulary_of(chunk.text for chunk in chunks)  # the whole ingest's
    spacy_names.prefetch((chunk.text for chunk in chunks), rules or Rules())
    posts = sole_posts(chunks)
    codes = legends(chunks)
    texts: dict[str, list[str]] = {}
    for chunk in chunks:
        texts.setdefault(chunk.doc, []).append(chunk.text)
    # How a document writes its hyphens is its writer's habit, not the ingest's.
    own = {doc: replace(vocabulary, spaced_hyphens=spaces_hyphens(written))
           for doc, written in texts.items()}
    for done, chunk in enumerate(chunks):
        if progress is not None and done % PROGRESS_EVERY == 0:
            progress("extract", done, len(chunks))
        triplets = _decoded(extract(chunk.title, chunk.text, rules, stats, own[chunk.doc]),
                            codes.get(chunk.doc, {}))
        if chunk.headings and chunk.headings[-1] in posts:
            triplets.append(posts[chunk.headings[-1]])
        load.records.append(PassageRecord(
            chunk.passage, triplets, doc_id=chunk.doc,
            metadata=chunk.passage_metadata,
            source=chunk.id))
    if progress is not None and chunks:
        progress("extract", len(chunks), len(chunks))
    if stats.passages and stats.triplets == 0:
        stats.notes.append("no triplets found (text without capitalized names, e.g. Chinese or "
                           "Japanese): the passages still serve naive and lexical retrieval")
    return load, stats
