"""Ingestion: input files and raw documents → records → new rows in the store.

loaders (JSON / JSONL / HippoRAG OpenIE files) and triplets (their validation); documents
(raw .txt/.md/.pdf, chunking) and llm_extractor (chunks → triplets by an LLM); writer (records
→ only the new rows, embedded and stored); prune (what replaced or deleted documents no
longer hold, removed in a crash-safe order).
"""

from hopgraph.ingest.loaders import load_file, read_row
from hopgraph.ingest.writer import Ingestor, Progress

__all__ = ["Ingestor", "Progress", "load_file", "read_row"]
