import numpy as np
import pytest

from hopgraph.embed import EmbedderError, LocalEmbedder, make_embedder


def test_fast_query_path_matches_encode(local_embedder: LocalEmbedder) -> None:
    texts = ["Who taught Euler?", "a longer sentence, so the batch needs padding to line up",
             "爱因斯坦", "x"]
    fast = local_embedder.embed(texts)  # small batch: traced forward pass
    model = local_embedder._load()
    reference = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert fast.shape == (4, 384) and fast.dtype == np.float32
    assert np.allclose(fast, reference, atol=1e-5)
    bulk = local_embedder.embed(texts * 5)  # large batch: sentence-transformers encode
    assert np.allclose(bulk[:4], reference, atol=1e-5)
    assert np.allclose(np.linalg.norm(bulk, axis=1), 1.0, atol=1e-5)
    assert local_embedder.embed([]).shape == (0, 384)


def test_make_embedder_specs() -> None:
    assert make_embedder("local").name == "local:all-MiniLM-L6-v2"
    with pytest.raises(EmbedderError, match="unknown embedder"):
        make_embedder("word2vec")
    remote = make_embedder("openai:text-embedding-3-small", base_url="http://127.0.0.1:9/v1")
    assert remote.name == "openai:text-embedding-3-small"
