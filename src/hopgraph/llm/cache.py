"""The on-disk reply cache: completed reply texts in one SQLite file, keyed by request hash."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path


class ReplyCache:
    """Completed reply texts in one SQLite file; one connection guarded by a lock."""

    def __init__(self, path: str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        with self._lock, self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS replies "
                "(key TEXT PRIMARY KEY, model TEXT, text TEXT, created REAL)"
            )

    def get(self, key: str) -> str | None:
        """The reply text cached under `key`, or None."""
        with self._lock:
            row = self._db.execute("SELECT text FROM replies WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, model: str, text: str) -> None:
        """Cache `text` under `key`, replacing any earlier reply."""
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?)",
                             (key, model, text, time.time()))

    def close(self) -> None:
        """Close the SQLite connection."""
        with self._lock:
            self._db.close()
