"""Retrieval: question → entities and relations → expansion → ranking → passages.

pipeline (dispatch), context (shared steps), one module per method (naive, seed, default,
llm_method), the policies they use (bridge, rank, llm_steps) and what they search with (link,
search, lexical).
"""

from hopgraph.retrieve.pipeline import MAX_QUESTION_CHARS, METHODS, OFFLINE_METHODS, Retriever

__all__ = ["MAX_QUESTION_CHARS", "METHODS", "OFFLINE_METHODS", "Retriever"]
