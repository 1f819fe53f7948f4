"""The default offline ranking: graph-guided re-query through bridge entities.

A multi-hop question names its first entity but not the ones after it ("the son of Euler's
teacher": Euler is named, Johann Bernoulli is not). Dense search with the question alone finds
the first hop's passage and misses the rest. So we use the graph to guess the unnamed
"bridge" entities and search passages again with the question plus each bridge's name:

1. Candidate relations: the top relations by cosine to the question, plus every relation of
   the entities the question names (linked in `hopgraph.lexicon.link`).
2. Each candidate relation proposes its end that the question does not already name, scored
   by the relation's cosine, plus a bonus of ALPHA / |passages of the named end| when the
   other end is a linked entity: a rare named entity pins the first hop down far better than
   a hub ("Euro", "MTV") that touches hundreds of passages; plus ATTRIBUTE_BONUS when its
   predicate is an attribute the question asks for by name ("supplier": `attributes`).
3. The best few proposals are ranked again by their path: the proposal's score plus
   ONWARD_WEIGHT x the best question score among the bridge's other relations (a bridge whose
   own facts keep matching the question is the one the question goes through). The top B
   bridges (one more than the entities the question names: 2, or 3 when it names two or
   more; `bridge_count`), plus C neighbours of the best bridge (a third hop), each give a
   probe query "question + bridge name".
4. Every probe and the question itself search the passages (dense cosine + a small BM25
   term); a probe's scores are lowered by how much less confident its bridge is than the best
   one (GAMMA), and passages from the bridge's own relations get a small boost (BETA).
   A passage's final score is its best score over all searches (max merge).

Only names, counts and scores flow in here: no model and no Milvus. The searches that feed
it and use its probes live in `hopgraph.retrieve.default`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Set
from dataclasses import dataclass

import numpy as np
from rapidfuzz import fuzz

from hopgraph.graph import KnowledgeGraph
from hopgraph.identity import normalize
from hopgraph.ingest.mentions import is_code
from hopgraph.ingest.roles import person_like
from hopgraph.lexicon.link import is_value, is_version
from hopgraph.retrieve import attributes
from hopgraph.retrieve.posts import Holders

RELATION_POOL = 20  # K: relations taken from the question's relation search
BRIDGES = 2  # B: bridge entities re-queried (at least; `bridge_count`)
MAX_BRIDGES = 3  # bridges re-queried for a question that names two entities or more
CHAIN = 2  # C: neighbours of the best bridge re-queried (third hop)
CHAIN_SHORTLIST = 10  # neighbours whose onward relations are scored before choosing C
BRIDGE_SHORTLIST = 6  # proposals whose onward relations are scored before choosing B
ONWARD_WEIGHT = 0.3  # share of a proposal's best onward relation score in its path score
ANCHOR_BONUS = 0.5  # ALPHA: bonus / |passages of the linked anchor|
BRIDGE_BOOST = 0.05  # BETA: added to passages of the bridge's own relations
CONFIDENCE_SLOPE = 1.0  # GAMMA: probe penalty per unit of confidence below the best probe
NAMED_CUTOFF = 90.0  # partial fuzzy ratio at which a name counts as already in the question
COMMON_SHARE = 0.15  # share of the passages from which a named entity is the folder's own
MIN_COMMON_PASSAGES = 10  # and passages: in a small folder no name is that common
OWN_NAME_SHARE = 0.15  # share from which a named entity's longer names are not bridges
MIN_WORDS_LEFT = 3  # words a question must keep for its common names to be left out
PERSON_BONUS = 0.1  # path score of a person-like proposal when the question asks "Who ..., and"
ATTRIBUTE_BONUS = 0.15  # a relation whose predicate the question asks for (`attributes`)
HOLDER_BONUS = 0.3  # the holder of a post the question names, as a bridge (`posts`)

_DATE_OR_NUMBER = re.compile(
    r"^[\d\s,.\-–/]*((jan(uary)?|feb(ruary)?|mar(ch)?|apr(il)?|may|june?|july?|aug(ust)?"
    r"|sep(t(ember)?)?|oct(ober)?|nov(ember)?|dec(ember)?)\.?)?[\d\s,.\-–/]*$"
)


_FAMILY = re.compile(r"^[A-Za-z]+")
# "Who ..., and ...": a question that asks who, then asks on (about that person)
_WHO = re.compile(r"^\W*who(?:se|m)?\b.*,\s+and\b", re.IGNORECASE)
# "Who ..., and <what it asks on about that person>": the clause after the first ", and"
_ASKS_ON = re.compile(r"^\W*who\b.*?,\s+and\b\s*(?P<on>.*\w.*)$", re.IGNORECASE | re.DOTALL)


def code_family(name: str) -> str | None:
    """An identifier's family, its leading letters ("IR" of "IR-2341", "CA" of
    "CA-2025-029"); None for a name that is not an identifier (`is_code`)."""
    found = _FAMILY.match(name) if is_code(name) else None
    return found.group(0).upper() if found else None


def without_other_codes(graph: KnowledgeGraph, scores: dict[int, float], linked: set[int]
                        ) -> dict[int, float]:
    """The question's relations without those about another identifier of a family the
    question names. Asked about IR-2341, a relation of IR-2322 is about another incident,
    however alike an embedding model finds the two codes (it cuts both into the same
    pieces); the question's BM25 term does the same for passages."""
    families = {f for e in linked if (f := code_family(graph.entity_names[e])) is not None}
    if not families:
        return scores

    def other(entity: int) -> bool:
        return entity not in linked and code_family(graph.entity_names[entity]) in families

    return {r: s for r, s in scores.items()
            if not (other(int(graph.subjects[r])) or other(int(graph.objects[r])))}


def common_names(shares: list[float], passages: int) -> list[bool]:
    """Which of the question's names (`shares`: the share of the `passages` that can hold
    each) are the folder's own: found in at least COMMON_SHARE of the passages, and in
    MIN_COMMON_PASSAGES of them. In a small folder any name is in a large share of it
    (Euler in two of the demo's four passages), and its relations are what a question
    about it needs: such a folder has no common names."""
    return [share >= COMMON_SHARE and share * passages >= MIN_COMMON_PASSAGES
            for share in shares]


def without_common_names(question: str, common: list[str]) -> str:
    """The question as the relations are scored against it: without the `common` names it
    names (each as matched in the question; `common_names`).

    A company's folder names the company (or its home town) in every other passage. An
    embedding model still leans on a name it sees in a question, so the relations that
    merely repeat it ("Annual Review 2024 mentions Ashby Vale Packaging") outscore the
    ones the question asks about ("IR-2330 supplier Keller Polymers"). A name that common
    tells nothing about which fact is asked, as BM25's weight for it already says. The
    question is kept whole when too few words would be left to score anything by.
    """
    common = [text for text in common if text.strip()]
    if not common:
        return question
    pattern = re.compile("|".join(re.escape(t) for t in sorted(common, key=len, reverse=True)),
                         re.IGNORECASE)
    left = " ".join(pattern.sub(" ", question).split())
    return left if len(re.findall(r"\w+", left)) >= MIN_WORDS_LEFT else question


def own_names(linked: list[int], shares: list[float]) -> set[int]:
    """The linked entities (`shares`: the share of the passages that can hold each) whose
    longer names are no bridges (`BridgeFinder.is_named`)."""
    return {e for e, share in zip(linked, shares, strict=True) if share >= OWN_NAME_SHARE}


def bridge_count(named: int, identifier: bool = False) -> int:
    """How many bridges to re-query for a question that names `named` entities: one more
    than it names, at least BRIDGES and at most MAX_BRIDGES; an identifier in the question
    (`rank.has_identifier`) counts as one name more. A question that names two things (a
    comparison; "the supplier Priya Castell called about RB-118") has a first hop from
    each, and each may need its own bridge; a third bridge for a question that names one
    cost MuSiQue's 200-word recall more than it gained at 800 (benchmarks/RESULTS.md, "A
    third bridge"). A code names a record ("Who supplied the part in incident IR-2314?"),
    whose header relates it to a dozen things under as many keys (`IR-2314 | supplier |
    Keller Polymers`, `IR-2314 | line | Line 3`, `IR-2314 | reported by | ...`), and a
    small embedding model scores them nearly alike: the next hop is less often among the
    first two (benchmarks/RESULTS.md, "A question naming a code gets a third bridge")."""
    return min(MAX_BRIDGES, max(BRIDGES, named + 1 + int(identifier)))


@dataclass(frozen=True)
class Probe:
    """One re-query: a bridge entity, the query text, and how confident the graph is in it."""

    entity: int
    text: str
    confidence: float
    relation: int  # the relation through which the bridge was reached


def asked_on(question: str) -> str | None:
    """What a question that asks who, and then asks on, asks about that person: "in which
    part of the armed forces had he served?" of "Who was the site representative at the
    BRCGS audit in report NCS-25-0614, and in which part of the armed forces had he
    served?"; None for any other question.

    The probe "question + Tom Barraclough" embeds mostly as the question, whose first part
    (the audit) every chunk of the audit report matches; his profile, which answers the
    second part, came twentieth. "Tom Barraclough in which part of the armed forces had he
    served?" asks what the profile says. Only "Who": "Whose approval did ... need, and who
    holds that post?" asks on about a post, not about the person its first part finds.
    """
    found = _ASKS_ON.match(question)
    return found.group("on").strip() if found else None


def can_bridge(name: str) -> bool:
    """Proper-noun-like names bridge; common nouns, numbers and dates do not. A weekday or a
    month named alone is a date too ("Tuesday", "July", "Wednesday 25th"): a company's
    e-mails and logs write them everywhere, and each would join everything said on it."""
    key = normalize(name)
    if is_version(key):
        return True  # "4.12.3": a release, named as an identifier is
    first = name[:1]
    if not first.isalpha() or first.islower():
        return False
    dated = bool(_DATE_OR_NUMBER.match(key)) and any(ch.isdigit() for ch in key)
    return not (dated or is_value(key.replace(",", " ").split()))


class BridgeFinder:
    """Chooses bridge entities for a question from scored candidate relations."""

    def __init__(self, graph: KnowledgeGraph, question: str, linked: set[int],
                 common: Set[int] = frozenset()) -> None:
        """`common`: the linked entities found in at least OWN_NAME_SHARE of the passages
        (`own_names`)."""
        self.graph = graph
        self.question = question
        self.question_key = normalize(question)
        self.linked = linked
        self._named: dict[int, bool] = {}
        self._own = tuple(normalize(graph.entity_names[e]) + " " for e in common)
        self._asked = attributes.asked_words(question)
        self._asked_on = asked_on(question)
        self._holders = Holders(graph)

    def is_named(self, entity: int) -> bool:
        """Whether the question already names this entity: linked, nearly in its text, or
        a longer name of a name found all over the folder.

        A question says "Harrowgate" of a company whose folder names it in a fifth of the
        passages; "Harrowgate Cold Chain" and "Harrowgate House" then take bridge places,
        and their probes find what the question itself finds. For names that are not that
        common this does not hold: a question may link "Wellington" and need "Wellington
        Regional Stadium" as its bridge (benchmarks/RESULTS.md, "The folder's own name is no
        bridge")."""
        if entity not in self._named:
            key = normalize(self.graph.entity_names[entity])
            self._named[entity] = (
                entity in self.linked or len(key) < 2
                or fuzz.partial_ratio(key, self.question_key) >= NAMED_CUTOFF
                or key.startswith(self._own)
            )
        return self._named[entity]

    def usable(self, entity: int) -> bool:
        """Not already named and proper-noun-like."""
        return not self.is_named(entity) and can_bridge(self.graph.entity_names[entity])

    def bridges(self, relation_scores: dict[int, float], limit: int | None = None
                ) -> list[Probe]:
        """The `limit` (default BRIDGES) best bridges proposed by the candidate relations."""
        limit = BRIDGES if limit is None else limit
        if not relation_scores or limit <= 0:
            return []
        rels = np.fromiter(relation_scores, dtype=np.int64, count=len(relation_scores))
        scores = np.fromiter(relation_scores.values(), dtype=np.float64, count=len(rels))
        subjects, objects = self.graph.subjects[rels], self.graph.objects[rels]
        # Each relation proposes both ends in turn: (bridge, anchor) = (subject, object), then
        # (object, subject), in the order the scores came.
        bridges = np.column_stack([subjects, objects]).reshape(-1)
        anchors = np.column_stack([objects, subjects]).reshape(-1)
        totals = np.repeat(scores, 2)
        totals[np.repeat(attributes.asked_for(self.graph, rels.tolist(), self._asked), 2)] \
            += ATTRIBUTE_BONUS
        for anchor in set(anchors.tolist()) & self.linked:
            totals[anchors == anchor] += ANCHOR_BONUS / max(
                1, len(self.graph.passages_of_entity(anchor)))
            held = self._holders.of(anchor)
            if held is not None:  # a post the question names: its holder ("posts")
                totals[(anchors == anchor) & (bridges == held[0])
                       & (np.repeat(rels, 2) == held[1])] += HOLDER_BONUS
        ranked = self._first_usable(*best_per_entity(bridges, totals, np.repeat(rels, 2)), limit)
        return [self.probe(e, conf, r) for e, conf, r in ranked]

    def by_path(self, proposals: list[Probe], onward: dict[int, float],
                limit: int | None = None) -> list[Probe]:
        """The `limit` (default BRIDGES) best proposals by path score: the proposal's own score
        plus ONWARD_WEIGHT x `onward[e]`, the best question score among the bridge's other
        relations (ties keep the proposals' order).

        A proposal's own relation often shares no word with the question ("IR-2330 supplier
        Keller Polymers" for "the flake whose lot caused IR-2330"), while the bridge's next
        relation does; a hub reached through a relation that merely repeats the question's
        words has no such onward fact. The probe keeps its own confidence: the path score only
        chooses.

        A question that asks who, and then asks on ("Who issued the permit for the job of
        HS-2025-014, and where did he work before?"), goes through that person: a
        person-like proposal (two to four capitalized words, no digit: `roles.person_like`)
        gets PERSON_BONUS. Asking only who ("Who was the first president of the association
        that published ...?"), the question goes through something else (the association),
        which the same words may name ("American Psychological Association").
        """
        limit = BRIDGES if limit is None else limit
        person = PERSON_BONUS if _WHO.match(self.question) else 0.0

        def path(p: Probe) -> float:
            own = person if person and person_like(self.graph.entity_names[p.entity]) else 0.0
            return p.confidence + ONWARD_WEIGHT * onward.get(p.entity, 0.0) + own

        return sorted(proposals, key=lambda p: -path(p))[:limit]

    def chain_candidates(self, first: Probe, rels: np.ndarray, scores: np.ndarray,
                         taken: set[int], inner: set[int]) -> list[tuple[int, float, int]]:
        """Neighbours of the best bridge, one hop further: (entity, score, relation), best first.

        `rels` are the relations of `inner` (the bridge and the entities named inside its
        name), `scores` their question scores (parallel arrays: a hub brings tens of
        thousands). Only the CHAIN_SHORTLIST best by connecting relation are kept.
        """
        keep = rels != first.relation
        rels, scores = rels[keep], scores[keep]
        subjects, objects = self.graph.subjects[rels], self.graph.objects[rels]
        inner_ids = np.fromiter(inner, dtype=np.int64, count=len(inner))
        # The far end from the bridge (or from an entity named inside its name).
        others = np.where(np.isin(objects, inner_ids), subjects, objects)
        excluded = np.fromiter(inner | taken, dtype=np.int64, count=len(inner | taken))
        keep = ~np.isin(others, excluded)
        return self._first_usable(
            *best_per_entity(others[keep], scores[keep], rels[keep]), CHAIN_SHORTLIST)

    def _first_usable(self, entities: np.ndarray, scores: np.ndarray, relations: np.ndarray,
                      limit: int) -> list[tuple[int, float, int]]:
        """The first `limit` usable entities of a ranking, with their score and relation."""
        found: list[tuple[int, float, int]] = []
        for e, score, r in zip(entities.tolist(), scores.tolist(), relations.tolist(),
                               strict=True):
            if len(found) == limit:
                break
            if self.usable(e):
                found.append((e, score, r))
        return found

    def chain(self, first: Probe, candidates: list[tuple[int, float, int]],
              onward: dict[int, float], limit: int | None = None) -> list[Probe]:
        """The `limit` (default CHAIN) best chain candidates by path score: connecting
        relation + best onward.

        `onward[e]` is the best question score among e's other relations: a third-hop
        entity is worth re-querying when the path through it keeps matching the question
        ("the son of Euler's teacher" -> Daniel Bernoulli, whose own relations mention the
        "contribution" asked about), not just when its link to the bridge does.
        """
        limit = CHAIN if limit is None else limit
        ranked = sorted(candidates, key=lambda c: -(c[1] + onward.get(c[0], 0.0)))[:limit]
        # A chained probe is only as sure as the bridge it hangs from.
        return [self.probe(e, first.confidence, r) for e, _, r in ranked]

    def probe(self, entity: int, confidence: float, relation: int) -> Probe:
        """The re-query for one bridge: the question followed by the bridge's name (and, for
        a post one person holds, the holder's name: `posts`); for a person-like bridge of a
        question that asks who and then asks on about that person, the name followed by
        what it asks on (`asked_on`)."""
        name = self.graph.entity_names[entity]
        if self._asked_on and person_like(name):
            return Probe(entity, f"{name} {self._asked_on}", confidence, relation)
        held = self._holders.of(entity)
        if held is not None:  # a post: its holder's profile is headed with their name
            name = f"{name} {self.graph.entity_names[held[0]]}"
        return Probe(entity, f"{self.question} {name}", confidence, relation)


def best_per_entity(entities: np.ndarray, scores: np.ndarray, relations: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each distinct entity once, with its best score and the relation that gave it, ranked
    by best score (descending), ties by where the entity first appears.

    The same choice as walking the pairs in order, keeping an entity's first strictly better
    score, then a stable sort of the entities by score: vectorized, because a hub brings
    tens of thousands of relations.
    """
    if len(entities) == 0:
        return entities, scores, relations
    position = np.arange(len(entities))
    order = np.lexsort((position, -scores, entities))  # entity, best score, first pair
    grouped = entities[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    best = order[starts]
    first_seen = np.minimum.reduceat(position[order], starts)
    ranking = best[np.lexsort((first_seen, -scores[best]))]
    return entities[ranking], scores[ranking], relations[ranking]


@dataclass
class Scored:
    """A passage's best score so far and the probe that gave it (None: the question)."""

    score: float
    probe: Probe | None


def merge_searches(
    question_hits: dict[str, float],
    probe_hits: list[tuple[Probe, dict[str, float]]],
    bridge_passages: Mapping[int, Set[str]],
) -> dict[str, Scored]:
    """Max-merge the question's and the probes' passage scores, with confidence and boost."""
    merged = {pid: Scored(score, None) for pid, score in question_hits.items()}
    if not probe_hits:
        return merged
    top_confidence = max(probe.confidence for probe, _ in probe_hits)
    for probe, hits in probe_hits:
        offset = CONFIDENCE_SLOPE * (probe.confidence - top_confidence)
        boosted = bridge_passages.get(probe.entity, set())
        for pid, score in hits.items():
            total = score + offset + (BRIDGE_BOOST if pid in boosted else 0.0)
            current = merged.get(pid)
            if current is None or total > current.score:
                merged[pid] = Scored(total, probe)
    return merged

