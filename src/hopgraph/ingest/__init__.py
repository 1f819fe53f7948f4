"""Ingestion: input files and raw documents → records → new rows in the store.

loaders (JSON / JSONL / HippoRAG OpenIE files, Python items) and triplets (their
validation); reading (raw documents of every format), documents (chunking), extract
(the one path from raw documents to records) with llm_extractor and offline_extractor
(chunks → triplets); batch (records → ids), writer (only the new rows, embedded and
stored); prune (what replaced or deleted documents no longer hold, removed in a
crash-safe order); sync (the two writes: store records, delete documents).
"""

from hopgraph.ingest.loaders import load_file, read_row
from hopgraph.ingest.writer import Ingestor, Progress

__all__ = ["Ingestor", "Progress", "load_file", "read_row"]
