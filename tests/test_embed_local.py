import numpy as np
import pytest

from hopgraph.embed import Embedder, LocalEmbedder
from hopgraph.embed.local import count_tokens


@pytest.mark.slow
def test_fast_query_path_matches_encode(local_embedder: LocalEmbedder) -> None:
    texts = ["Who taught Euler?", "a longer sentence, so the batch needs padding to line up",
             "爱因斯坦", "x"]
    fast = local_embedder.embed(texts)  # small batch: traced forward pass
    reference = local_embedder.model.encode(texts, normalize_embeddings=True,
                                            convert_to_numpy=True)
    assert fast.shape == (4, 384) and fast.dtype == np.float32
    assert np.allclose(fast, reference, atol=1e-5)
    bulk = local_embedder.embed(texts * 5)  # large batch: sentence-transformers encode
    assert np.allclose(bulk[:4], reference, atol=1e-5)
    assert np.allclose(np.linalg.norm(bulk, axis=1), 1.0, atol=1e-5)
    assert local_embedder.embed([]).shape == (0, 384)


@pytest.mark.slow
def test_instances_share_one_model_and_satisfy_the_protocol(
        local_embedder: LocalEmbedder) -> None:
    other = LocalEmbedder()
    assert other.model is local_embedder.model  # a second open graph loads nothing again
    assert isinstance(other, Embedder) and other.dim == 384
    assert np.allclose(other.embed(["Basel"]), local_embedder.embed(["Basel"]))


def test_count_tokens_uses_the_model_tokenizer() -> None:
    assert count_tokens("") == 0
    assert count_tokens("Euler") >= 1
    assert count_tokens("Leonhard Euler was a student of Johann Bernoulli.") > 5
