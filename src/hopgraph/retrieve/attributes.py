"""Relations whose predicate is an attribute the question asks for by name.

A company's facts come from key–value lines and table columns: `IR-2330 | supplier | Keller
Polymers`, `Pennine Property Care | contract manager | Lisa Greenhalgh`. A question asks by
the same word ("the supplier of the material in incident IR-2330"), but a small embedding
model scores the relations of IR-2330 nearly alike: "IR-2330 reported by Coalville" came
before "IR-2330 supplier Keller Polymers". `BridgeFinder.bridges` adds
bridge.ATTRIBUTE_BONUS to a relation whose predicate is such an attribute: words alone, no
function word and no verb's past ("supplier", "contract manager", "owner"; not "published
by", "is a river of", "killed", which are sentences' words and read by their cosine as
before), every one of them written in the question where it does not describe a name that
follows it ("the Hong Kong duo Twins" asks for no duo).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import pairwise

from hopgraph.graph import KnowledgeGraph
from hopgraph.identity import normalize
from hopgraph.lexicon.bm25_terms import tokens

MAX_ATTRIBUTE_WORDS = 3  # "contract manager", "date of birth" is no attribute (a function word)

_WORD = re.compile(r"\w+")
_QUESTION_WORD = re.compile(r"[\w'’-]+")
_DESCRIPTION = re.compile(r"^\(.*?\)\s*")  # a table row's description (`layout_relations`)
# a verb's past ("killed", "located"): "X killed 48 people" says what X did, it names no
# attribute of X ("Which of the two tornado outbreaks killed the most people?")
_PAST = re.compile(r"\w{3,}ed")


def asked_words(question: str) -> frozenset[str]:
    """The question's content words (`bm25_terms.tokens`), but for those right before a
    capitalized word: "duo" in "the Hong Kong duo Twins" describes Twins."""
    asked: set[str] = set()
    for word, following in pairwise([*_QUESTION_WORD.findall(question), ""]):
        if not following[:1].isupper():
            asked.update(tokens(word))
    return frozenset(asked)


def attribute(graph: KnowledgeGraph, relation: int) -> tuple[str, ...]:
    """The attribute a relation's predicate names, as words ("contract manager" of
    "Pennine Property Care contract manager Lisa Greenhalgh"), without a table row's
    description before it or a role after a comma; () when the predicate holds a function
    word, a number or a verb's past (`_PAST`), or more than MAX_ATTRIBUTE_WORDS words, or
    cannot be told from the relation's text."""
    return _attribute(*_parts(graph, relation))


def predicate(graph: KnowledgeGraph, relation: int) -> str | None:
    """A relation's predicate as written: its text between its subject's and its object's
    names (the graph keeps only the whole text); None when the text is not written so."""
    return _predicate(*_parts(graph, relation))


def _parts(graph: KnowledgeGraph, relation: int) -> tuple[str, str, str]:
    return (graph.relation_texts[relation], graph.entity_names[int(graph.subjects[relation])],
            graph.entity_names[int(graph.objects[relation])])


def _predicate(text: str, subject: str, obj: str) -> str | None:
    if not (text.startswith(f"{subject} ") and text.endswith(f" {obj}")):
        return None
    return text[len(subject):len(text) - len(obj)].strip()


@lru_cache(maxsize=1 << 16)  # a hub's thousands of relations, read again by every question
def _attribute(text: str, subject: str, obj: str) -> tuple[str, ...]:
    written = _predicate(text, subject, obj)
    if written is None:
        return ()
    predicate = _DESCRIPTION.sub("", written).split(",")[0]
    words = _WORD.findall(normalize(predicate))
    content = tokens(predicate)
    if not content or len(content) != len(words) or len(content) > MAX_ATTRIBUTE_WORDS \
            or any(word.isdigit() or _PAST.fullmatch(word) for word in content):
        return ()
    return tuple(content)


def asked_for(graph: KnowledgeGraph, relations: list[int], asked: frozenset[str]
              ) -> list[bool]:
    """For each relation, whether its predicate is an attribute (`attribute`) all of whose
    words the question asks by (`asked_words`)."""
    found = []
    for relation in relations:
        words = attribute(graph, relation)
        found.append(bool(words) and all(word in asked for word in words))
    return found
