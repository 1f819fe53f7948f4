"""Replacing a file atomically: write a temp file beside it, then rename it over the file.

A temp file is named `.NAME.<random>.tmp`; one left by a process killed mid-write is
removed when its graph is dropped (`MilvusStore.drop`).

Every temp file gets a unique name (`tempfile.mkstemp`), so two writers of the same file --
two threads, or two processes sharing the cache directory -- never write into one temp file
or rename each other's: each rename installs one writer's whole file, the last one wins.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once: a file replaced keeps the mode open() would have given it


def replace_file(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Make `path` hold what `write` writes to an open binary file, atomically."""
    def into(temp: Path) -> None:
        with open(temp, "wb") as out:
            write(out)
    replace_path(path, into)


def replace_path(path: Path, write: Callable[[Path], None]) -> None:
    """Make `path` hold what `write` writes to the (empty) file at the path it is given,
    atomically; for writers that take a file name rather than a file object."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.fchmod(handle, 0o666 & ~_UMASK)  # mkstemp makes it private (0600)
    os.close(handle)
    temp = Path(name)
    try:
        write(temp)
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
