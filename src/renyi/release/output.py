"""Writing a release: all files or none.

Every file of a release (one per query, the report and the manifest) is written into a fresh
temporary directory next to the output directory, flushed to disk, and the directory is then
renamed into place in one ``rename`` (atomic on POSIX file systems). A crash or a kill at
any moment therefore leaves either no output directory or a complete one; a stale temporary
directory (``.<name>.tmp-*``) may remain until the next release into the same directory
removes it (:func:`reserve_out_dir`).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from renyi.release.noise import QueryResult
from renyi.release.spec import SpecError

__all__ = ["check_out_dir", "reserve_out_dir", "write_release", "write_csv", "write_parquet"]


def check_out_dir(path: str) -> None:
    """Refuse (before anything is spent) an output directory that cannot receive a release.

    The directory must not exist, or be empty; its parent must exist and be writable.

    Raises:
        SpecError: naming the directory and the reason.
    """
    if os.path.islink(path):
        # rename() onto a symbolic link fails (a directory cannot replace a link): after the spend
        raise SpecError(f"output directory {path} is a symbolic link; give the directory it points to",
                        name="out", value=path)
    base = os.path.basename(os.path.abspath(path))
    if len(os.fsencode(f".{base}.tmp-xxxxxxxx")) > 255:
        raise SpecError(f"output directory {path}: its name is too long ({len(os.fsencode(base))} bytes; at most "
                        "240)", name="out", value=path)
    if os.path.lexists(path):
        if not os.path.isdir(path):
            raise SpecError(f"output directory {path} exists and is not a directory", name="out", value=path)
        if os.listdir(path):
            raise SpecError(f"output directory {path} exists and is not empty (a release is written into a new "
                            "or empty directory, all at once)", name="out", value=path)
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise SpecError(f"output directory {path}: parent directory {parent} does not exist", name="out", value=path)
    if not os.access(parent, os.W_OK):
        raise SpecError(f"output directory {path}: parent directory {parent} is not writable", name="out", value=path)


@contextmanager
def reserve_out_dir(path: str) -> Iterator[None]:
    """Hold the output directory for one release, from before the spend until it is written.

    Two releases into one new directory both passed :func:`check_out_dir` and both spent;
    the second then failed at the rename. A lock file beside the directory
    (``.<name>.renyi-lock``, ``flock``: released by the kernel when a process dies) admits one
    release at a time, and the directory is checked again once it is held. Temporary
    directories left by killed releases into the same directory (``.<name>.tmp-*``) are
    removed then: under the lock no live release is writing one.

    Raises:
        SpecError: another release holds the directory, or it cannot receive a release.
    """
    parent = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(os.path.abspath(path))
    lock = os.path.join(parent, f".{base}.renyi-lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as e:
        raise SpecError(f"output directory {path}: cannot create {lock} ({e.strerror})", name="out",
                        value=path) from None
    held = False
    try:
        try:
            import fcntl
        except ImportError:  # no flock here (Windows): the rename still fails safely, after the spend
            fcntl = None  # type: ignore[assignment]
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                raise SpecError(f"output directory {path}: another release is writing into it", name="out",
                                value=path) from None
        held = True
        check_out_dir(path)
        for name in os.listdir(parent):
            if name.startswith(f".{base}.tmp-"):
                shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
        yield
    finally:
        if held:
            try:
                os.unlink(lock)
            except OSError:
                pass
        os.close(fd)


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_csv(path: str, result: QueryResult) -> None:
    """One CSV: the group columns, then ``value``, ``lower``, ``upper``."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow([*result.by, "value", "lower", "upper"])
        w.writerows(result.rows())
        f.flush()
        os.fsync(f.fileno())


def write_parquet(path: str, result: QueryResult) -> None:
    """One Parquet file with the same columns as :func:`write_csv` (written by DuckDB)."""
    import duckdb

    cols: dict[str, np.ndarray] = {}
    for j, c in enumerate(result.by):
        cols[c] = np.array([k[j] for k in result.keys], dtype=object)
    cols["value"], cols["lower"], cols["upper"] = result.value, result.lower, result.upper
    con = duckdb.connect(":memory:")
    try:
        con.register("__renyi_out", cols)
        names = ", ".join('"' + c.replace('"', '""') + '"' for c in cols)
        con.execute(f"COPY (SELECT {names} FROM __renyi_out) TO '{path.replace(chr(39), chr(39) * 2)}' "
                    "(FORMAT PARQUET)")
    finally:
        con.close()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_release(out_dir: str, results: Sequence[tuple[str, QueryResult]], fmt: str,
                  documents: Mapping[str, Any], *, hook: Any = None) -> list[str]:
    """Write every file of a release into ``out_dir`` at once (temporary directory + rename).

    Args:
        out_dir: the final directory (must not exist, or be empty).
        results: (file stem, result) per query.
        fmt: ``"csv"`` or ``"parquet"``.
        documents: file name → JSON-ready object (the report, the manifest).
        hook: called with a stage name between steps (tests use it to simulate a crash).

    Returns:
        The paths of the written files, inside ``out_dir``.
    """
    parent = os.path.dirname(os.path.abspath(out_dir))
    tmp = tempfile.mkdtemp(prefix=f".{os.path.basename(os.path.abspath(out_dir))}.tmp-", dir=parent)
    step = hook or (lambda stage: None)
    try:
        names = []
        for stem, res in results:
            name = f"{stem}.{fmt}"
            (write_csv if fmt == "csv" else write_parquet)(os.path.join(tmp, name), res)
            names.append(name)
            step("file written")
        for name, obj in documents.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                json.dump(obj, f, ensure_ascii=False, indent=2, allow_nan=False)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            names.append(name)
        _fsync_dir(tmp)
        step("before rename")
        # POSIX rename replaces an empty directory atomically (emptiness was checked before the spend)
        os.rename(tmp, out_dir)
        _fsync_dir(parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [os.path.join(out_dir, n) for n in names]
