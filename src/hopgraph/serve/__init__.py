"""`hopgraph serve`: the REST API and the web page over one opened graph.

service (the graph shared by concurrent requests, writes one at a time), subgraph (what to
draw behind a retrieval), models (request/response bodies), app (FastAPI routes, auth, size
limits, the page). The only package that imports fastapi, starlette and uvicorn (the `serve`
extra).
"""
