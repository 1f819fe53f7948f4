"""`Query`: one retrieval request, every option in one typed, validated value.

The CLI, the Python API, the server (where it is also the answer cache's key) and `eval`
build a `Query` and hand it down; the retrieval methods read what they need from it. Adding
an option means a field here (with its check in `_check`) and the code that uses it; nothing
in between changes.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from typing import Any

from hopgraph.errors import UsageError
from hopgraph.retrieve import registry
from hopgraph.store import MAX_TOP_K
from hopgraph.where import Where

DEFAULT_TOP_K = 5
DEFAULT_DEGREE = 1
# Questions are sentences, not documents: linking a 100 kB "question" on MuSiQue took far too
# long (every n-gram is a fuzzy lookup; benchmarks/RESULTS.md, "Figures moved from code
# comments"). The same limit holds for the API, the CLI and the server.
MAX_QUESTION_CHARS = 4096


@dataclass(frozen=True)
class Query:
    """What to retrieve and how: checked when built (a bad value is a `UsageError` naming it).

    `method` is a name in the method registry (`hopgraph.METHODS`); `top_k` passages are
    returned; `degree` is the expansion degree of the methods that expand (`seed`, `llm`);
    `entities` are the query entities to start from instead of those linked from the
    question (an empty list means none given); `where` keeps only the passages it matches
    (a `Where`, or its JSON form; see `hopgraph.where`), and the graph steps only the
    relations with one of them. Equal queries are equal keys.
    """

    question: str
    method: str = registry.DEFAULT
    top_k: int = DEFAULT_TOP_K
    degree: int = DEFAULT_DEGREE
    entities: tuple[str, ...] | None = None
    where: Where | None = None

    def __post_init__(self) -> None:
        check_question(self.question)
        if self.method not in registry.names():
            raise UsageError(f"unknown method {self.method!r}",
                             fix=f"choose one of {', '.join(registry.names())}")
        top_k = _whole(self.top_k, "top_k")
        if not 1 <= top_k <= MAX_TOP_K:
            raise UsageError(f"top_k must be between 1 and {MAX_TOP_K}, got {top_k}")
        degree = _whole(self.degree, "degree")
        if degree < 1:
            raise UsageError(f"degree must be >= 1, got {degree}")
        object.__setattr__(self, "top_k", top_k)
        object.__setattr__(self, "degree", degree)
        object.__setattr__(self, "entities", _names(self.entities))
        object.__setattr__(self, "where", Where.parse(self.where))

    def with_options(self, **changes: Any) -> Query:
        """This query with some options changed (checked again)."""
        return replace(self, **changes)

    @property
    def given_entities(self) -> list[str] | None:
        """The entities given by the caller, as a list, or None to link them."""
        return list(self.entities) if self.entities else None


def as_query(query: str | Query | None, options: dict[str, Any] | None = None) -> Query:
    """A `Query` from what a caller of `retrieve`/`compare` passed: a Query (with `options`
    changing some of its fields), or a question with options by name (`question=` too).
    Anything else is a UsageError."""
    named = dict(options or {})
    if "question" in named:
        if query is not None:
            raise UsageError("the question is given twice (positionally and as question=)")
        query = named.pop("question")
    known = {f.name for f in fields(Query)} - {"question"}
    unknown = sorted(set(named) - known)
    if unknown:
        raise UsageError(f"unknown query option {unknown[0]!r}",
                         fix=f"options are {', '.join(sorted(known))}")
    if isinstance(query, Query):
        return query.with_options(**named) if named else query
    if query is None:
        raise UsageError("no question given")
    check_question(query)
    return Query(query, **named)


def check_question(question: object) -> None:
    """UsageError for a question that is not text, is empty, or is over MAX_QUESTION_CHARS."""
    if not isinstance(question, str):
        raise UsageError(f"the question must be text, got {type(question).__name__}")
    if not question.strip():
        raise UsageError("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(f"the question is {len(question)} characters long; the limit is "
                         f"{MAX_QUESTION_CHARS}", fix="ask a shorter question")


def _whole(value: object, name: str) -> int:
    """`value` as an int (numpy integers too), or a UsageError naming the option."""
    if isinstance(value, bool):
        raise UsageError(f"{name} must be a whole number, got {value!r}")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise UsageError(f"{name} must be a whole number, got {value!r}") from None


def _names(entities: Iterable[str] | None) -> tuple[str, ...] | None:
    """Given entity names as a tuple (hashable), None when none are given."""
    if entities is None:
        return None
    if isinstance(entities, str):
        raise UsageError("entities must be a list of names, got one string",
                         fix=f"entities=[{entities!r}]")
    names = tuple(entities)
    for name in names:
        if not isinstance(name, str) or not name.strip():
            raise UsageError(f"entities must be non-empty names, got {name!r}")
    return names or None
