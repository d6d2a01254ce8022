"""A content-addressed store of file contents, beside the session files.

A blob is a file's bytes, named by their sha256: `<store>/ab/cdef...`. The same
content is stored once however many files, checkpoints and sessions hold it. A
blob is written to a temporary file in the same directory and renamed into place,
so a reader never sees half a blob and two workbenches storing the same content
at once both end with the one whole file. Reading checks the hash again: a blob
changed on disk is refused, not restored.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

STORE_DIR = "blobs"
"""The store's directory name, beside the session files."""
_HASH = re.compile(r"[0-9a-f]{64}")


class BlobError(ValueError):
    """A blob is missing, damaged, or its name is not a hash; `str()` says which."""


def store_for(session_path: Path) -> BlobStore:
    """The store beside a session file (an absolute path: a session recorded to a
    relative `--session` records where its blobs are, wherever it is read from)."""
    return BlobStore(Path(session_path).absolute().parent / STORE_DIR)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, blob: str) -> Path:
        if not _HASH.fullmatch(blob):
            raise BlobError(f"{blob!r} is not a blob name (a sha256 in hex)")
        return self.root / blob[:2] / blob[2:]

    def has(self, blob: str) -> bool:
        return self.path(blob).is_file()

    def put(self, data: bytes) -> str:
        """Store `data` (if it is not there yet); its hash."""
        blob = digest(data)
        target = self.path(blob)
        if target.is_file():
            return blob
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temp, target)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise
        return blob

    def get(self, blob: str) -> bytes:
        """The bytes of `blob`, checked against their name.

        Raises:
            BlobError: missing, unreadable, or its content no longer has its hash.
        """
        path = self.path(blob)
        try:
            data = path.read_bytes()
        except OSError as exc:
            why = exc.strerror or exc
            raise BlobError(f"blob {blob[:12]} is not in {self.root} ({why})") from None
        if digest(data) != blob:
            raise BlobError(f"blob {blob[:12]} in {self.root} is damaged (its content changed)")
        return data

    def size(self) -> tuple[int, int]:
        """(blobs, bytes) in the store."""
        count = total = 0
        if not self.root.is_dir():
            return 0, 0
        for sub in self.root.iterdir():
            if sub.is_dir():
                for blob in sub.iterdir():
                    if not blob.name.startswith(".tmp-"):
                        count += 1
                        total += blob.stat().st_size
        return count, total
