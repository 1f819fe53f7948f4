"""The built-in retrieval methods: one registry line each, in the order they are listed
(`hopgraph.METHODS`). A new method is a module with its `run` function and one line here."""

from hopgraph.retrieve.default import run_default
from hopgraph.retrieve.llm_method import run_llm
from hopgraph.retrieve.naive import run_naive, run_naive_lexical
from hopgraph.retrieve.registry import Method, register
from hopgraph.retrieve.seed import run_seed

register(Method("naive", run_naive, False, "dense passage search with the question"))
register(Method("naive_lexical", run_naive_lexical, False,
                "dense passage search plus a small BM25 term"))
register(Method("seed", run_seed, False, "the reference method with the LLM rerank replaced "
                "by question–relation cosine"))
register(Method("default", run_default, False,
                "graph-guided re-query through bridge entities"))
register(Method("llm", run_llm, True, "the reference method with an LLM: it names the "
                "question's entities and picks the useful relations"))
