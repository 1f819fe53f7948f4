"""hopgraph as a LlamaIndex retriever: the demo graph, nodes with scores for a multi-hop
question.

Run from the repository root (offline):
  pip install ".[llamaindex]"    # in the checkout (docs/install.md)
  hopgraph ingest ../shared/data/bernoulli/nano.json --graph demo
  python examples/llamaindex_example.py
"""

from __future__ import annotations

import sys

from hopgraph.errors import HopgraphError
from hopgraph.integrations.llamaindex import HopgraphRetriever

QUESTION = "What contribution did the son of Euler's teacher make?"


def main() -> int:
    retriever = HopgraphRetriever(uri="hopgraph.db", graph="demo", top_k=3)
    try:
        for found in retriever.retrieve(QUESTION):
            print(f"[{found.score:.3f}] {found.node.metadata['doc_id']}: "
                  f"{found.node.get_content()[:70]}...")
    except HopgraphError as exc:  # one line, as the CLI says it (the file, what to do)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        retriever.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
