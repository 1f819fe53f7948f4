import pytest

from hopgraph.errors import (
    EmbedderError,
    HopgraphError,
    InputError,
    LLMError,
    StoreError,
    UsageError,
)


def test_message_says_where_what_and_what_to_do() -> None:
    error = InputError("file is empty", where="data/a.json", fix="add passages")
    assert str(error) == "data/a.json: file is empty; add passages"
    assert (error.what, error.where, error.fix) == ("file is empty", "data/a.json",
                                                    "add passages")
    assert str(StoreError("no such graph")) == "no such graph"


@pytest.mark.parametrize(("kind", "builtin"), [
    (UsageError, ValueError), (InputError, ValueError), (StoreError, RuntimeError),
    (EmbedderError, RuntimeError), (LLMError, RuntimeError),
])
def test_every_kind_is_a_hopgraph_error_and_keeps_its_old_builtin_base(
        kind: type[HopgraphError], builtin: type[Exception]) -> None:
    error = kind("x")
    assert isinstance(error, HopgraphError) and isinstance(error, builtin)
