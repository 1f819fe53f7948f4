"""The retrieval methods, by name: one registry that everything else reads.

A method is one function `run(ctx, query, qvec, clock) -> Retrieval` in a module of its own,
and one `register` line (the built-in ones in `retrieve.methods`, which the package imports
first). The CLI's `--method` choices, the REST schema's enum, `eval`'s method list,
`hopgraph.METHODS` and the table in docs/methods.md (checked by a test) all come from here,
in registration order. This module imports no method, so `Query` can check names against it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hopgraph.errors import UsageError
from hopgraph.records import Retrieval

# run(ctx: retrieve.context.Context, query: hopgraph.Query, qvec: the question's embedding,
# clock: retrieve.context.Clock). Spelled loosely: `Query` checks method names here, so
# this module names neither.
Run = Callable[..., Retrieval]
DEFAULT = "default"  # the method of a query that names none (and of `eval`'s table)


@dataclass(frozen=True)
class Method:
    """A retrieval method: its name, the function that runs it, whether it needs an LLM,
    and what it does in one line (shown in the docs and the CLI's help)."""

    name: str
    run: Run
    needs_llm: bool
    summary: str


_METHODS: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add a method under its name (a name may be registered once)."""
    if method.name in _METHODS:
        raise UsageError(f"a retrieval method named {method.name!r} is registered already")
    _METHODS[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove a registered method (for plugins and tests; the built-in ones stay put)."""
    _METHODS.pop(name, None)


def get(name: str) -> Method:
    """The method of this name, or a UsageError listing the known ones."""
    method = _METHODS.get(name)
    if method is None:
        raise UsageError(f"unknown method {name!r}", fix=f"choose one of {', '.join(names())}")
    return method


def names() -> tuple[str, ...]:
    """Every method's name, in registration order."""
    return tuple(_METHODS)


def offline_names() -> tuple[str, ...]:
    """The methods that need no LLM."""
    return tuple(name for name, method in _METHODS.items() if not method.needs_llm)


def default_for(has_llm: bool) -> str:
    """The method used when a caller names none: `llm` with an LLM, else `default`."""
    return "llm" if has_llm and "llm" in _METHODS else DEFAULT


def markdown_table() -> str:
    """The methods as the docs' table (docs/methods.md holds exactly this)."""
    rows = ["| method | needs an LLM | what it does |", "|---|---|---|"]
    rows += [f"| `{m.name}` | {'yes' if m.needs_llm else 'no'} | {m.summary} |"
             for m in _METHODS.values()]
    return "\n".join(rows)
