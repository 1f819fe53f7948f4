"""`python -m hopgraph.cli`: the same as the `hopgraph` command."""

import sys

from hopgraph.cli import main

sys.exit(main())
