"""A writer process for the concurrency tests: runs a list of writes on one graph.

    python concurrency_worker.py URI GRAPH ACTIONS_JSON [KILL_AT]

ACTIONS_JSON is a list of ["add", rows] (rows: the file format, each with its doc_id),
["group", [rows, rows...]] (several adds in one write: `GraphRAG.add_parts`) and
["delete", doc_id]. With KILL_AT, the process SIGKILLs itself just before its KILL_AT-th
announced change (`WriteSession.touch`): no cleanup runs, as with `kill -9`. Ingestion
chunks are one passage, so a kill can land between any two of a document's rows.
"""

from __future__ import annotations

import json
import os
import signal
import sys

from hopgraph import GraphRAG
from hopgraph.api import items_part
from hopgraph.ingest import writer
from hopgraph.store.writes import WriteSession


def main() -> None:
    uri, graph, actions = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    kill_at = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    writer.CHUNK_PASSAGES = 1
    if kill_at:
        touched = []
        original = WriteSession.touch

        def touch(self: WriteSession, *args: object, **kwargs: object) -> None:
            touched.append(1)
            if len(touched) == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            original(self, *args, **kwargs)

        WriteSession.touch = touch  # type: ignore[method-assign]
    with GraphRAG(uri=uri, graph=graph) as rag:
        for action, what in actions:
            if action == "add":
                rag.add(what)
            elif action == "group":
                rag.add_parts([items_part(rows) for rows in what])
            else:
                rag.delete([what])
    print("done", flush=True)


if __name__ == "__main__":
    main()
