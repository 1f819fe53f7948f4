"""hopgraph as a LangChain retriever: the demo graph, three passages for a multi-hop question,
then the same through a running `hopgraph serve` if one is up.

Run from the repository root (offline):
  pip install ".[langchain]"    # in the checkout (docs/install.md)
  hopgraph ingest ../shared/data/bernoulli/nano.json --graph demo
  python examples/langchain_example.py
"""

from __future__ import annotations

import sys

from hopgraph.errors import HopgraphError
from hopgraph.integrations.langchain import HopgraphRetriever

QUESTION = "What contribution did the son of Euler's teacher make?"


def main() -> int:
    retriever = HopgraphRetriever(uri="hopgraph.db", graph="demo", k=3)
    try:
        for doc in retriever.invoke(QUESTION):
            print(f"[{doc.metadata['score']:.3f}] {doc.metadata['doc_id']}: "
                  f"{doc.page_content[:70]}...")
            for relation in doc.metadata["relations"][:1]:
                print(f"    via: {relation}")
    except HopgraphError as exc:  # one line, as the CLI says it (the file, what to do)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        retriever.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
