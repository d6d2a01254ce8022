"""The session library: an SQLite index of every session file in a directory.

The JSONL files stay the source of truth; the index (`INDEX_NAME`, beside them) only
makes them quick to list, filter and search. `Library.refresh` brings it up to date:

- a file whose size or modification time changed since it was indexed is read
  again (a session still being recorded is refreshed the next time): from its last
  line when that is a summary line the recorder wrote and it covers every byte of the
  file unchanged (`sessions.summary_line`: a cold index of a folder reads each file's
  header and last line and checks its CRC, no events), else from its events (a file
  written by an older workbench, cut off, grown or edited since);
- a file that is gone drops out;
- an index that is missing, from another schema version or not a database at all
  is rebuilt from the files, without asking.

Two workbenches may refresh the same index at once: the database is in WAL mode with
a busy timeout, and the files are written `BATCH` at a time, each batch in one
transaction (reading the files happens outside it), so a writer waits for the other's
current batch, never for its whole pass, and a crash leaves every file either indexed
whole or not at all.

Search is SQLite's FTS5 over the prompts, tool names, arguments, results and replies
(see `summary` for what is kept): every word given must appear, in any field.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.sessions.header import default_session_dir
from workbench.sessions.summary import TEXT_FIELDS, Summary
from workbench.sessions.summary_line import summary_of

INDEX_NAME = ".library.sqlite3"
SCHEMA_VERSION = 2
"""2: `errors` counts calls that failed (1 counted error events)."""
BUSY_TIMEOUT_S = 30.0
BATCH = 64
"""Files stored in one transaction (another writer waits for at most one batch)."""

_COLUMNS = (
    "created",
    "model",
    "provider",
    "endpoint",
    "tools",
    "workspace",
    "scenario",
    "parent",
    "outcome",
    "problem",
    "events",
    "turns",
    "calls",
    "errors",
    "denials",
    "edits",
    "injections",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "duration_ms",
    "prompt",
)
_SCHEMA = f"""
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    name TEXT UNIQUE NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    {", ".join(_COLUMNS)}
);
CREATE INDEX sessions_created ON sessions(created);
CREATE TABLE calls (
    session_id INTEGER NOT NULL,
    tool TEXT NOT NULL,
    calls INTEGER NOT NULL,
    errors INTEGER NOT NULL,
    PRIMARY KEY (session_id, tool)
) WITHOUT ROWID;
CREATE INDEX calls_tool ON calls(tool);
CREATE VIRTUAL TABLE text USING fts5({", ".join(TEXT_FIELDS)});
PRAGMA user_version = {SCHEMA_VERSION};
"""


@dataclass
class Entry:
    """One indexed session."""

    path: Path
    data: dict[str, Any]
    """The summary's columns (see `summary.Summary`), `tools` as a list."""
    by_tool: dict[str, dict[str, int]]
    snippet: str = ""
    """For a search: where the words matched, marked with [ ]."""

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def as_json(self) -> dict[str, Any]:
        out = {"path": str(self.path), **self.data, "by_tool": self.by_tool}
        if self.snippet:
            out["snippet"] = self.snippet
        return out


@dataclass
class Filters:
    """What `Library.entries` keeps (every given condition must hold)."""

    model: str | None = None
    """A substring of the model id or provider (any case)."""
    tool: str | None = None
    """Sessions that called this tool."""
    errors: bool = False
    """Sessions with a failed call or a run that ended in an error (with `tool`: a call
    of that tool failed)."""
    outcome: str | None = None
    """How the session ended: finished, error, aborted, incomplete, unreadable, empty."""
    denied: bool = False
    """Sessions where a call was denied."""
    since: float | None = None
    """Created at or after this time (epoch ms)."""
    limit: int | None = None


@dataclass
class RefreshReport:
    indexed: int = 0
    removed: int = 0
    unchanged: int = 0
    rebuilt: bool = False


class Library:
    """The index of the sessions in `directory` (default: where sessions are recorded)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_session_dir()
        self.path = self.directory / INDEX_NAME
        self._db: sqlite3.Connection | None = None
        self.rebuilt = False

    # -- the database ------------------------------------------------------------------

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            try:
                self._db = self._open()
            except sqlite3.OperationalError:  # locked, say: another connection's business
                raise
            except sqlite3.DatabaseError:  # not a database (a torn copy, another file)
                self._remove_files()
                self._db = self._open()
        return self._db

    def _open(self) -> sqlite3.Connection:
        # the index holds the sessions' text: only their owner may read it, as the files
        # (SQLite gives its -wal and -shm files the same mode)
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600))
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            _use_wal(db)
            db.execute("PRAGMA synchronous = NORMAL")
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                self._create(db)
        except sqlite3.DatabaseError:
            db.close()
            raise
        return db

    def _create(self, db: sqlite3.Connection) -> None:
        """Make the tables, dropping any of another version (rebuilt from the files)."""
        db.execute("BEGIN IMMEDIATE")
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:  # another process may have made them meanwhile
                for table in ("text", "calls", "sessions"):
                    db.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                self.rebuilt = self.rebuilt or version != 0
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def _remove_files(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.rebuilt = True

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- keeping it up to date ---------------------------------------------------------

    def files(self) -> dict[str, tuple[int, int]]:
        """Every session file in the directory: name -> (size, mtime_ns)."""
        found: dict[str, tuple[int, int]] = {}
        try:
            entries = os.scandir(self.directory)
        except FileNotFoundError:
            return found
        with entries:
            for entry in entries:
                if entry.name.endswith(".jsonl") and entry.is_file():
                    try:
                        stat = entry.stat()
                    except OSError:
                        continue
                    found[entry.name] = (stat.st_size, stat.st_mtime_ns)
        return found

    def refresh(self) -> RefreshReport:
        """Index what changed since the last refresh and drop what is gone."""
        report = RefreshReport()
        on_disk = self.files()
        db = self.db
        report.rebuilt = self.rebuilt
        known = {
            name: (size, mtime)
            for name, size, mtime in db.execute("SELECT name, size, mtime_ns FROM sessions")
        }
        gone = [name for name in known if name not in on_disk]
        if gone:
            with _transaction(db):
                for name in gone:
                    _delete(db, name)
            report.removed = len(gone)
        changed = [(n, stamp) for n, stamp in sorted(on_disk.items()) if known.get(n) != stamp]
        report.unchanged = len(on_disk) - len(changed)
        for read in self._read(changed):
            report.indexed += self._store(read)
        return report

    def _read(
        self, changed: list[tuple[str, tuple[int, int]]]
    ) -> Iterator[list[tuple[str, tuple[int, int], Summary | None]]]:
        """The summaries of the changed files, a batch at a time, each with its file's
        stat from before it was read (threads gained nothing: most of it is Python)."""
        for start in range(0, len(changed), BATCH):
            batch = changed[start : start + BATCH]
            yield [(name, stamp, summary_of(self.directory / name)) for name, stamp in batch]

    def _store(self, read: list[tuple[str, tuple[int, int], Summary | None]]) -> int:
        """Store the summaries read (each with its file's stat from before the read, so
        a file that grew meanwhile is read again next time), in one transaction; skips
        a file that vanished or that another process has just indexed. Returns how
        many were stored."""
        db = self.db
        stored = 0
        with _transaction(db):
            for name, stamp, summary in read:
                if summary is None:
                    continue
                done = db.execute(
                    "SELECT size, mtime_ns FROM sessions WHERE name = ?", (name,)
                ).fetchone()
                if done == stamp:  # another workbench indexed it meanwhile
                    continue
                _delete(db, name)
                _insert(db, name, stamp, summary)
                stored += 1
        return stored

    # -- reading it --------------------------------------------------------------------

    def entries(self, filters: Filters | None = None, search: str | None = None) -> list[Entry]:
        """The sessions that pass `filters` (newest first), or, with `search`, those whose
        text holds every word of it (best match first).

        Raises:
            ValueError: `search` has no words.
        """
        filters = filters or Filters()
        where: list[str] = []
        params: list[Any] = []
        select = "SELECT s.*, '' AS snippet FROM sessions s"
        order = "s.created DESC, s.name DESC"
        if search is not None:
            query = fts_query(search)
            select = (
                "SELECT s.*, snippet(text, -1, '[', ']', '…', 10) AS snippet "
                "FROM text JOIN sessions s ON s.id = text.rowid"
            )
            where.append("text MATCH ?")
            params.append(query)
            order = "text.rank, s.created DESC"
        if filters.model:
            where.append("(instr(lower(s.model), lower(?)) OR instr(lower(s.provider), lower(?)))")
            params += [filters.model, filters.model]
        if filters.tool:
            failed = " AND c.errors > 0" if filters.errors else ""
            where.append(
                f"EXISTS (SELECT 1 FROM calls c WHERE c.session_id = s.id AND c.tool = ?{failed})"
            )
            params.append(filters.tool)
        elif filters.errors:
            where.append("(s.errors > 0 OR s.outcome = 'error')")
        if filters.outcome:
            where.append("s.outcome = ?")
            params.append(filters.outcome)
        if filters.denied:
            where.append("s.denials > 0")
        if filters.since is not None:
            where.append("s.created >= ?")
            params.append(filters.since)
        sql = select + (" WHERE " + " AND ".join(where) if where else "") + f" ORDER BY {order}"
        if filters.limit is not None:
            sql += " LIMIT ?"
            params.append(filters.limit)
        db = self.db
        cursor = db.execute(sql, params)
        names = [d[0] for d in cursor.description]
        rows = [dict(zip(names, row, strict=True)) for row in cursor]
        tools = self._tools([row["id"] for row in rows])
        return [_entry(self.directory, row, tools.get(row["id"], {})) for row in rows]

    def _tools(self, ids: list[int]) -> dict[int, dict[str, dict[str, int]]]:
        """Per session id: its calls and errors by tool."""
        out: dict[int, dict[str, dict[str, int]]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            for key, tool, calls, errors in self.db.execute(
                "SELECT session_id, tool, calls, errors FROM calls "
                f"WHERE session_id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ):
                out.setdefault(key, {})[tool] = {"calls": calls, "errors": errors}
        return out

    def parents(self) -> set[str]:
        """The file names that some indexed fork names as its parent."""
        return {
            Path(parent).name
            for (parent,) in self.db.execute(
                "SELECT DISTINCT parent FROM sessions WHERE parent != ''"
            )
        }


def _insert(db: sqlite3.Connection, name: str, stamp: tuple[int, int], summary: Summary) -> None:
    columns = ("name", "size", "mtime_ns", *_COLUMNS)
    cursor = db.execute(
        f"INSERT INTO sessions ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
        (name, *stamp, *_row(summary)),
    )
    key = cursor.lastrowid
    db.executemany(
        "INSERT INTO calls VALUES (?, ?, ?, ?)",
        [(key, _clean(tool), c.calls, c.errors) for tool, c in summary.by_tool.items()],
    )
    db.execute(
        f"INSERT INTO text (rowid, {', '.join(TEXT_FIELDS)}) "
        f"VALUES (?, {', '.join('?' * len(TEXT_FIELDS))})",
        (key, *(_clean(summary.text.get(f, "")) for f in TEXT_FIELDS)),
    )


def _entry(directory: Path, row: dict[str, Any], tools: dict[str, dict[str, int]]) -> Entry:
    data = {k: row[k] for k in _COLUMNS}
    data["tools"] = row["tools"].split() if row["tools"] else []
    return Entry(directory / row["name"], data, tools, row["snippet"] or "")


def fts_query(text: str) -> str:
    """`text` as an FTS5 query in which every word must appear (each word quoted, so
    nothing in it is query syntax); a word ending in `*` matches as a prefix."""
    words = [w for w in text.split() if w.rstrip("*")]
    if not words:
        raise ValueError("nothing to search for")
    return " ".join(_phrase(word) for word in words)


def _phrase(word: str) -> str:
    prefix = word.endswith("*")
    quoted = '"' + _clean(word.rstrip("*")).replace('"', '""') + '"'
    return f"{quoted}*" if prefix else quoted


def _row(summary: Summary) -> tuple[Any, ...]:
    values = {**summary.__dict__, "tools": " ".join(summary.tools)}
    return tuple(_clean(values[c]) if isinstance(values[c], str) else values[c] for c in _COLUMNS)


def _clean(text: str) -> str:
    """SQLite takes UTF-8 only: a lone surrogate becomes U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _delete(db: sqlite3.Connection, name: str) -> None:
    found = db.execute("SELECT id FROM sessions WHERE name = ?", (name,)).fetchone()
    if found is None:
        return
    db.execute("DELETE FROM text WHERE rowid = ?", found)
    db.execute("DELETE FROM calls WHERE session_id = ?", found)
    db.execute("DELETE FROM sessions WHERE id = ?", found)


def _use_wal(db: sqlite3.Connection) -> None:
    """Put the index in WAL mode (a no-op once it is), waiting for another connection that
    is opening it at the same moment: the switch needs the file to itself, and SQLite
    fails it at once instead of waiting out the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT (ROLLBACK on an error): the write lock is taken at the
    start, so two writers queue on the busy timeout instead of failing mid-way."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: Any, *exc: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
