"""The embedder protocol every runtime implements, and the vector normalization they share."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors; `name` and `dim` identify the space.

    The name and dimension are stored with a graph: opening it with another embedder is an
    error, never silent garbage.
    """

    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> np.ndarray: ...


def unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length, as float32 (zero rows stay zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)
