"""Listing a local store without chromadb: Chroma's own catalogue, read-only.

`memory list` and `library list` need the metadata of stored chunks, never their vectors,
and chromadb takes seconds to import. Chroma's persistent client keeps every chunk's
metadata in `chroma.sqlite3` (its "metadata segment", written in the same transaction as
the add or delete), so a read-only SQLite connection lists exactly what the store holds, in
milliseconds, and needs no directory lock: SQLite's own locking lets it read beside the
one process that writes.

The tables are chromadb's, not ours, so the reader trusts them only in the shape it was
written against: the schema's migration versions must be `KNOWN_SCHEMA`, and the metadata
segment must have applied every write in Chroma's queue. Anything else (another chromadb,
a write in flight, a locked or damaged file) gives None, and the caller asks chromadb.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

from deep_research.memory.location import CATALOGUE
from deep_research.text import secrets

Scalar = str | int | float | bool
# Keys the store sets on every chunk (its key: a thread, a URL, a path; its position);
# callers' metadata may not use them.
KEY, CHUNK = "key", "chunk"
Record = dict[str, Scalar]
# The migrations chromadb 1.5 leaves in its catalogue: a chromadb that adds one may have
# moved what this file reads, so its catalogue is read by chromadb instead.
KNOWN_SCHEMA: Mapping[str, int] = {"embeddings_queue": 2, "metadb": 6, "sysdb": 10}
# The database a `PersistentClient` opens by default, which is the store's.
TENANT, DATABASE = "default_tenant", "default_database"
# Waiting for a writer's transaction to end; longer means a stuck writer: ask chromadb.
BUSY_SECONDS = 2.0
# Chroma's own keys in the metadata table (the text is `chroma:document`).
CHROMA_KEYS = "chroma:%"

_SEGMENT = """
SELECT c.id, s.id FROM collections c
JOIN databases d ON d.id = c.database_id
JOIN segments s ON s.collection = c.id AND s.scope = 'METADATA'
WHERE c.name = ? AND d.name = ? AND d.tenant_id = ?
"""
# Writes Chroma has queued for the collection beyond what its metadata segment applied.
_LAG = """
SELECT (SELECT coalesce(max(seq_id), 0) FROM embeddings_queue WHERE topic LIKE '%/' || ?)
     > coalesce((SELECT seq_id FROM max_seq_id WHERE segment_id = ?), 0)
"""
_ROWS = """
SELECT m.id, m.key, m.string_value, m.int_value, m.float_value, m.bool_value
FROM embeddings e JOIN embedding_metadata m ON m.id = e.id
WHERE e.segment_id = ? AND m.key NOT LIKE ?
"""
_EQUAL = {  # which column holds a value of each type (bool before int: a bool is an int)
    bool: "bool_value",
    int: "int_value",
    float: "float_value",
    str: "string_value",
}


def read(
    path: Path,
    collection: str,
    equal: tuple[str, Scalar] | None = None,
    first: bool = False,
    wait: float | None = None,
) -> list[Record] | None:
    """The metadata of every chunk in `collection` (those whose field `equal[0]` is
    `equal[1]`, when given; with `first`, of one of those at most), redacted as the store
    redacts what it reads; [] when the collection does not exist; None when the catalogue
    is not one this reader knows, or another process's write holds it past `wait` seconds
    (BUSY_SECONDS unless given)."""
    try:
        # Read now, not at import: a test shortens it (and a caller's own wait comes first).
        with _connect(path / CATALOGUE, BUSY_SECONDS if wait is None else wait) as db:
            return _read(db, collection, equal, first)
    except sqlite3.Error:  # locked past BUSY_SECONDS, damaged, a hot journal: ask chromadb
        return None


def _connect(file: Path, wait: float) -> sqlite3.Connection:
    # `mode=ro`: never writes, never creates the file; a missing one raises.
    uri = f"{file.resolve().as_uri()}?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=wait)


def _read(
    db: sqlite3.Connection, collection: str, equal: tuple[str, Scalar] | None, first: bool
) -> list[Record] | None:
    versions = dict(db.execute("SELECT dir, max(version) FROM migrations GROUP BY dir").fetchall())
    if versions != dict(KNOWN_SCHEMA):
        return None
    found = db.execute(_SEGMENT, (collection, DATABASE, TENANT)).fetchall()
    if not found:
        return []
    if len(found) != 1:
        return None
    [(collection_id, segment)] = found
    if db.execute(_LAG, (collection_id, segment)).fetchone()[0]:
        return None
    sql, params = _ROWS, [segment, CHROMA_KEYS]
    if equal is not None:
        field, value = equal
        column = _EQUAL[type(value)]
        limit = " LIMIT 1" if first else ""
        sql += (
            " AND e.id IN (SELECT k.id FROM embedding_metadata k JOIN embeddings f ON f.id = k.id"
            f" WHERE f.segment_id = ? AND k.key = ? AND k.{column} = ?{limit})"
        )
        params += [segment, field, value]
    records: dict[int, Record] = {}
    for item, key, text, whole, real, flag in db.execute(sql, params):
        records.setdefault(item, {})[key] = _value(text, whole, real, flag)
    return list(records.values())


def _value(text: str | None, whole: int | None, real: float | None, flag: int | None) -> Scalar:
    if text is not None:
        return secrets.redact(text)
    if flag is not None:
        return bool(flag)
    if whole is not None:
        return whole
    return real if real is not None else ""
