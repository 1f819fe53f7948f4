"""A post and the one person the graph says holds it.

A company's documents name a post where they mean its holder: a policy says "the Engineering
Manager decides", an action table gives an action to "Housing Officer (Wrenfield North)",
and a question asks "the depot where the Engineering Manager works". The profile that says
what the holder does is headed with the person's name ("Colin Mabbott — Engineering
Manager"), and the extractor relates the two as `Colin Mabbott | is | Engineering Manager`
when no other profile gives the post to someone else (`offline_records.sole_posts`). The
default method reads that fact three ways: a question that names a post proposes its holder
as a bridge, and a bridge that is a post is re-queried with its holder's name too
(`bridge.BridgeFinder`); and when a question asks for a person ("Who decides ...", "Whose
approval ...", "by name"), the passages that state the holder of a post named in the best
passages, or the post of a person named there, follow right after the passage that names
it (`holders_after`). The policy clause
"repairs over £2,500 must be approved by the Finance Director" is what the question finds;
the profile "Claire Whitworth — Finance Director" shares none of its words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.ingest.offline_records import HOLDS
from hopgraph.ingest.roles import job_title, person_like
from hopgraph.retrieve.attributes import predicate

POST_PASSAGES = 5  # best passages whose posts' holders are brought in (`holders_after`)
HOLDER_STEP = 1e-6  # how far below the passage naming the post its holder's passage ranks

# A question that asks for a person: "who", "whom", or "by name" anywhere; "whose" only where
# it asks ("Whose approval ...", "To whose depot ...", "..., and whose ...")
_ASKS_PERSON = re.compile(
    r"\bwhom?\b|\bby name\b"
    r"|(?:^\W*(?:(?:to|for|with|by|from|of|in|on|at)\s+)?|[,;:]\s*(?:and\s+)?|\band\s+)whose\b",
    re.IGNORECASE)


def asks_for_person(question: str) -> bool:
    """Whether a question asks who or whom, for a name ("Who, by name, ..."), or whose
    something is. A "whose" after a noun only says which thing is meant ("the organisation
    whose lead auditor was ...", "the plant whose compressor tripped"): it asks for no
    person, and the profiles of the posts the best passages name would only push out what
    the question asks for."""
    return _ASKS_PERSON.search(question) is not None


class Holders:
    """The holders of the posts of one graph, looked up once per post."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph
        self._found: dict[int, tuple[int, int] | None] = {}

    def of(self, post: int) -> tuple[int, int] | None:
        """(holder, the relation "holder is post") for a post held by one person-like name;
        None for an entity that is no post (`roles.job_title`), or a post the graph gives
        to nobody or to several."""
        if post not in self._found:
            self._found[post] = self._look_up(post)
        return self._found[post]

    def post_of(self, person: int) -> tuple[int, int] | None:
        """(post, the relation "person is post") for a person-like name that is the one
        holder of a post (`of`); None otherwise."""
        graph = self.graph
        if not person_like(graph.entity_names[person]):
            return None
        for relation in graph.relations_of(np.array([person])).tolist():
            post = int(graph.objects[relation])
            if int(graph.subjects[relation]) == person and predicate(graph, relation) == HOLDS \
                    and self.of(post) == (person, relation):
                return post, relation
        return None

    def stated(self, entity: int) -> tuple[int, int] | None:
        """(post, the relation "holder is post") for a post one person holds (`of`) or a
        person who is the one holder of a post (`post_of`); None for any other entity."""
        held = self.of(entity)
        return (entity, held[1]) if held is not None else self.post_of(entity)

    def _look_up(self, post: int) -> tuple[int, int] | None:
        graph = self.graph
        name = graph.entity_names[post]
        if job_title(name) is None:
            return None
        found = []
        for relation in graph.relations_of(np.array([post])).tolist():
            person = int(graph.subjects[relation])
            if int(graph.objects[relation]) == post and person_like(graph.entity_names[person]) \
                    and predicate(graph, relation) == HOLDS:
                found.append((person, relation))
        return found[0] if len(found) == 1 else None


def holders_after(graph: KnowledgeGraph, ranked: Sequence[tuple[str, float]]
                  ) -> list[tuple[str, float, int, int]]:
    """The passages to rank after each of the POST_PASSAGES best of `ranked` (passage ids
    and scores, best first): for each post that passage names (an entity of its relations)
    and one person holds (`Holders.of`), and for each person it names who is the one
    holder of a post (`Holders.post_of`: "Daniel accepted the risk", then "Daniel Okafor —
    Chief Technology Officer"), the passages of the relation "holder is post", each scored
    HOLDER_STEP below the one before it. As (passage, score, post, relation "holder is
    post"); none for such a passage ranked at or above the passage naming the post or the
    person."""
    holders = Holders(graph)
    place = {pid: rank for rank, (pid, _) in enumerate(ranked)}
    found: list[tuple[str, float, int, int]] = []
    taken: set[str] = set()
    for rank, (pid, score) in enumerate(ranked[:POST_PASSAGES]):
        index = graph.passage_index.get(pid)
        if index is None:
            continue
        named = graph.entities_of(graph.citing(np.array([index], dtype=np.int64)))
        for entity in named.tolist():
            fact = holders.stated(entity)
            if fact is None:
                continue
            post, holds = fact
            for holder_pid in graph.passages_of(holds):
                if place.get(holder_pid, len(ranked)) <= rank or holder_pid in taken:
                    continue
                taken.add(holder_pid)
                found.append((holder_pid, score - HOLDER_STEP * (len(found) + 1), post,
                              holds))
    return found
