"""A post and the one person the graph says holds it.

A company's documents name a post where they mean its holder: a policy says "the Engineering
Manager decides", an action table gives an action to "Housing Officer (Wrenfield North)",
and a question asks "the depot where the Engineering Manager works". The profile that says
what the holder does is headed with the person's name ("Colin Mabbott — Engineering
Manager"), and the extractor relates the two as `Colin Mabbott | is | Engineering Manager`
when no other profile gives the post to someone else (`offline_records.sole_posts`). The
default method reads that fact two ways (`bridge.BridgeFinder`): a question that names a
post proposes its holder as a bridge, and a bridge that is a post is re-queried with its
holder's name too.
"""

from __future__ import annotations

import numpy as np

from hopgraph.graph import KnowledgeGraph
from hopgraph.ingest.offline_records import HOLDS
from hopgraph.ingest.roles import job_title, person_like
from hopgraph.retrieve.attributes import predicate


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
