"""A graph's lexicon: what is built over its words rather than its vectors — the BM25 index
over the passages (`lexical`, with `bm25_terms`), the entity linker (`link`, with `fuzzy`),
the lexicon saved beside the snapshot (`saved`) and the keeper that keeps that file in step
with writes (`keeper`). Retrieval searches with it; the write path keeps it; it imports
neither."""
