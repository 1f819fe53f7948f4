"""What the MCP tools return, twice: JSON-able data (a tool's `structuredContent`, shaped as
the TypedDicts here, which the SDK publishes as the tool's output schema and checks every
result against) and text an agent reads (its `content`).

Both come from the records the rest of hopgraph returns (`Retrieval`, `Answer`, the entity
view of `serve.subgraph.around_entity`, document counts): nothing is computed here, only
translated. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

from typing import Any

# pydantic (which turns these into JSON schemas) needs typing_extensions' TypedDict before
# Python 3.12.
from typing_extensions import TypedDict

from hopgraph.records import Answer, Retrieval, passage_source, source_line

_VIA_SHOWN = 2  # relations shown under a passage in the text (all are in the data)


class SourceView(TypedDict):
    """Where a passage came from: its file (the document id), page (a number, a sheet's
    name, or null), headings, and span in the document's text (null when not known)."""

    file: str | None
    page: int | str | None
    headings: list[str]
    start: int | None
    end: int | None


class PassageView(TypedDict):
    """A retrieved passage: `relations` are the relations that led to it, `via` their ids,
    `source` where it came from."""

    id: str
    text: str
    score: float
    doc_id: str | None
    relations: list[str]
    via: list[str]
    source: SourceView | None


class RelationView(TypedDict):
    """A relation the retrieval stepped along, with its score."""

    id: str
    text: str
    score: float


class SearchView(TypedDict):
    """The result of `search`."""

    question: str
    method: str
    passages: list[PassageView]
    entities: list[dict[str, Any]]  # {id, name, matched, how, score}
    relations: list[RelationView]
    bridges: list[dict[str, Any]]  # {id, name, relation, confidence}
    notes: list[str]


class AnswerView(TypedDict):
    """The result of `ask`: the answer cites passages as [n], n counted from 1."""

    question: str
    answer: str
    method: str
    passages: list[PassageView]
    notes: list[str]
    usage: dict[str, int]


class EntityRef(TypedDict):
    """An entity, by id and name."""

    id: str
    name: str


class EntityRelation(TypedDict):
    """A relation of an entity and how many passages state it."""

    id: str
    text: str
    subject: EntityRef
    object: EntityRef
    passages: int


class EntityView(TypedDict):
    """The result of `entity`: the first relations (`total_relations` says how many there
    are) and the entities at their other ends."""

    id: str
    name: str
    relations: list[EntityRelation]
    total_relations: int
    neighbours: list[EntityRef]


class DocumentView(TypedDict):
    """A stored document and its passage count."""

    doc_id: str
    passages: int


class DocumentsView(TypedDict):
    """The result of `documents`."""

    documents: list[DocumentView]
    total_passages: int


def search_view(result: Retrieval) -> SearchView:
    """A retrieval as `search` returns it (its JSON view, less timings and LLM details)."""
    view = result.as_dict()
    return SearchView(question=view["question"], method=view["method"],
                      passages=view["passages"], entities=view["entities"],
                      relations=view["relations"], bridges=view["bridges"],
                      notes=view["notes"])


def search_text(view: SearchView) -> str:
    """The passages numbered from 1 with their documents and relations, then the entities
    and bridges that led there."""
    lines = [f"{_count(len(view['passages']), 'passage')} for: {view['question']} "
             f"(method {view['method']})"]
    lines += _passage_lines(view["passages"])
    if view["entities"]:
        lines.append("entities in the question: " + ", ".join(
            f"{e.get('name')} ({e.get('how')})" for e in view["entities"]))
    if view["bridges"]:
        lines.append("bridge entities: " + ", ".join(str(b.get("name"))
                                                     for b in view["bridges"]))
    lines += [f"note: {note}" for note in view["notes"]]
    return "\n".join(lines)


def answer_view(answer: Answer) -> AnswerView:
    """An answer as `ask` returns it."""
    view = answer.retrieval.as_dict()
    return AnswerView(question=answer.question, answer=answer.text, method=view["method"],
                      passages=view["passages"], notes=view["notes"],
                      usage=dict(answer.usage))


def answer_text(view: AnswerView) -> str:
    """The answer, then the passages its [n] citations point at."""
    lines = [view["answer"].strip(), "", "Sources:"]
    lines += _passage_lines(view["passages"])
    lines += [f"note: {note}" for note in view["notes"]]
    return "\n".join(lines)


def entity_view(found: dict[str, Any]) -> EntityView:
    """`serve.subgraph.around_entity`'s view, less the drawing (nodes and edges for a page,
    the same relations again)."""
    return EntityView(id=found["id"], name=found["name"], relations=found["relations"],
                      total_relations=found["total_relations"],
                      neighbours=found["neighbours"])


def entity_text(view: EntityView) -> str:
    """The entity's relations, one per line, then its neighbours."""
    shown = len(view["relations"])
    more = (f" (the first {shown} shown)" if shown < view["total_relations"] else "")
    lines = [f"{view['name']}: {_count(view['total_relations'], 'relation')}{more}"]
    lines += [f"- {r['text']} ({_count(r['passages'], 'passage')})" for r in view["relations"]]
    if view["neighbours"]:
        lines.append("neighbours: " + ", ".join(n["name"] for n in view["neighbours"]))
    return "\n".join(lines)


def documents_view(counts: dict[str, int]) -> DocumentsView:
    """Document passage counts, by document id, as `documents` returns them."""
    return DocumentsView(documents=[DocumentView(doc_id=doc, passages=n)
                                    for doc, n in sorted(counts.items())],
                         total_passages=sum(counts.values()))


def documents_text(view: DocumentsView) -> str:
    """One line per document."""
    lines = [f"{_count(len(view['documents']), 'document')}, "
             f"{_count(view['total_passages'], 'passage')}"]
    lines += [f"- {d['doc_id']} ({_count(d['passages'], 'passage')})"
              for d in view["documents"]]
    return "\n".join(lines)


def _passage_lines(passages: list[PassageView]) -> list[str]:
    lines = []
    for n, p in enumerate(passages, start=1):
        where = source_line(p["source"] or passage_source({}, p["doc_id"]))
        lines.append(f"[{n}] ({where or 'no document'}, score {p['score']:.3f}) "
                     f"{' '.join(p['text'].split())}")
        lines += [f"    via: {relation}" for relation in p["relations"][:_VIA_SHOWN]]
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
