"""The errors hopgraph raises on purpose: one base class, one subclass per kind of failure.

Every error says what failed, where (file, line, row id, URI) when there is a place, and what
to do about it. Callers catch `HopgraphError` for "hopgraph refused or could not do this";
anything else escaping hopgraph is a bug. The command line exits 1 on a `HopgraphError`, 2 on a
`UsageError`.

The subclasses also derive from the built-in type Python code expects for their kind of
failure (ValueError for bad input and arguments, RuntimeError for failing systems), so a
plain ``except ValueError`` catches a bad argument.
"""

from __future__ import annotations


class HopgraphError(Exception):
    """Base of every error hopgraph raises on purpose.

    `what` says what failed; `where` names the file, line, id or URI it concerns (shown first);
    `fix` says what to do (shown last).
    """

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None) -> None:
        self.what = what
        self.where = where
        self.fix = fix
        super().__init__(self._message())

    def _message(self) -> str:
        text = f"{self.where}: {self.what}" if self.where else self.what
        return f"{text}; {self.fix}" if self.fix else text


def install_extra(extra: str) -> str:
    """How to add an optional extra (hopgraph is installed from a checkout or a wheel, not
    from PyPI): the `fix` of the error a missing extra gives."""
    return (f'install the "{extra}" extra: pip install ".[{extra}]" in a checkout, or '
            f'pip install "hopgraph-VERSION-py3-none-any.whl[{extra}]" (docs/install.md)')


class UsageError(HopgraphError, ValueError):
    """An argument or setting has a value hopgraph cannot use (unknown method, top_k < 1...)."""


class InputError(HopgraphError, ValueError):
    """An input file, folder or row cannot be read as input at all."""


class StoreError(HopgraphError, RuntimeError):
    """Milvus cannot do what was asked (missing graph, wrong embedder, backend failure)."""


class EmbedderError(HopgraphError, RuntimeError):
    """The embedder could not be created or did not answer."""


class LLMError(HopgraphError, RuntimeError):
    """The LLM could not be reached or did not give a usable reply (after any retries)."""
