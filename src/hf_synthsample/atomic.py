"""Write files and folders so that a reader never sees a half-written one: write a temp beside, then rename.

Files go through :func:`atomic_path`, folders through :func:`atomic_folder`. Temp names carry the
writer's pid, so the next write to a path first repairs what a killed writer left
(:func:`recover_folder`). Everything written gets the mode the user's umask gives (temp files are
made with ``os.open(..., 0o666)``, never ``mkstemp``'s 0600). A folder is replaced only when it
holds the :data:`FOLDER_MARKER` file (or is empty): :func:`check_replaceable`.

Example:
    >>> import os, tempfile
    >>> from hf_synthsample.atomic import write_json_atomic
    >>> path = os.path.join(tempfile.mkdtemp(), "sub", "x.json")
    >>> write_json_atomic(path, {"a": 1})
    >>> open(path).read()
    '{"a": 1}'
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Any, Iterator

from ._version import __version__
from .logging import get_logger
from .validation import check_path

logger = get_logger(__name__)

__all__ = ["FOLDER_MARKER", "atomic_path", "check_replaceable", "foreign_files", "written_by_library", "atomic_folder",
           "recover_folder", "write_text_atomic", "write_json_atomic", "save_figure_atomic"]


#: The file every folder written by :func:`atomic_folder` holds: what makes the folder replaceable
#: (``--overwrite`` / ``if_exists="overwrite"``). A hidden name, so ``datasets`` never reads it as data.
FOLDER_MARKER = ".hf-synthsample"

_MARKER_NOTE = ("This folder was written by hf-synthsample, which replaces it (--overwrite, "
                "if_exists='overwrite') only when it holds this file and no file but those listed here; "
                "delete this file to protect the folder.")


def _folder_files(folder: Path) -> set[str]:
    """Relative (POSIX) paths of every file under ``folder``, the marker excepted."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir() and p.name != FOLDER_MARKER}


def _manifest(folder: str | os.PathLike) -> set[str] | None:
    """The files ``folder``'s marker says hf-synthsample wrote; ``None`` without a (readable) marker."""
    try:
        with open(os.path.join(os.fspath(folder), FOLDER_MARKER), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    files = data.get("files") if isinstance(data, dict) else None
    return set(files) if isinstance(files, list) and all(isinstance(x, str) for x in files) else None


def _write_marker(folder: Path, files: set[str]) -> None:
    marker = folder / FOLDER_MARKER
    marker.unlink(missing_ok=True)  # may be a hard link to the old folder's marker (adding): never in place
    marker.write_text(json.dumps({"written_by": f"hf-synthsample {__version__}", "note": _MARKER_NOTE,
                                  "files": sorted(files)}, indent=1) + "\n", encoding="utf-8")


def written_by_library(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds a :data:`FOLDER_MARKER` (was written by :func:`atomic_folder`)."""
    return _manifest(folder) is not None


def foreign_files(folder: str | os.PathLike) -> list[str]:
    """Files in ``folder`` that hf-synthsample did not write (all of them without a marker)."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(_folder_files(folder) - (_manifest(folder) or set()))


def check_replaceable(target: str | os.PathLike, *, name: str = "folder") -> None:
    """``FileExistsError`` (naming ``name``) unless ``target`` may be replaced: it does not exist, is
    empty, or holds :data:`FOLDER_MARKER` and no file but those the marker lists.

    Example:
        >>> import os, tempfile
        >>> mine = tempfile.mkdtemp()
        >>> _ = open(os.path.join(mine, "notes.txt"), "w").write("mine")
        >>> check_replaceable(mine, name="--out")
        Traceback (most recent call last):
        ...
        FileExistsError: --out: .../... was not written by hf-synthsample (it holds no .hf-synthsample file), so it is never replaced: choose another folder, or delete this one yourself if you no longer need what is in it (folders written by hf-synthsample before 0.1.0 hold no such file either)
    """
    path = Path(os.path.abspath(os.fspath(target)))
    recover_folder(path)
    if not os.path.lexists(path):
        return
    if path.is_symlink() or not path.is_dir():
        raise FileExistsError(f"{name}: {path} exists and is not a folder; give the path of a folder to write")
    if not os.listdir(path):
        return
    if written_by_library(path):
        foreign = foreign_files(path)
        if not foreign:
            return
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise FileExistsError(
            f"{name}: {path} holds files hf-synthsample did not write ({shown}), so it is not replaced: move them "
            "out of the folder first, or choose another folder")
    raise FileExistsError(
        f"{name}: {path} was not written by hf-synthsample (it holds no {FOLDER_MARKER} file), so it is never "
        "replaced: choose another folder, or delete this one yourself if you no longer need what is in it "
        "(folders written by hf-synthsample before 0.1.0 hold no such file either)")


def _create_temp_file(folder: str, prefix: str, suffix: str) -> str:
    """An empty new file in ``folder`` with mode ``0o666 & ~umask`` (as ``open(path, "w")`` gives)."""
    for _ in range(100):
        path = os.path.join(folder, f"{prefix}{uuid.uuid4().hex[:8]}{suffix}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return path
    raise FileExistsError(f"no free temp name in {folder}")  # pragma: no cover


def _raise_naming_the_target(err: OSError, target: str | os.PathLike, tmp: str | os.PathLike) -> None:
    """Raise ``err`` naming ``target`` instead of an internal temp path."""
    filename = os.fspath(err.filename) if err.filename is not None else None
    tmp = os.fspath(tmp)
    if filename is None or not (filename == tmp or filename.startswith(tmp + os.sep)):
        raise err
    raise type(err)(err.errno, f"{err.strerror} (while writing {os.fspath(target)})", os.fspath(target)) from err


def _pid_alive(pid: int | None) -> bool:
    """Whether process ``pid`` still runs; ``None`` (a temp name from before pids were recorded) is dead."""
    if pid is None or pid == os.getpid():
        return pid is not None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        pass
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _stale_file_temps(path: str) -> None:
    """Remove ``.tmp-<base>-<pid>-*`` files left beside ``path`` by writers that were killed."""
    folder, base = os.path.split(path)
    pattern = re.compile(rf"^\.tmp-{re.escape(base)}-(\d+)-[A-Za-z0-9_]{{8}}{re.escape(os.path.splitext(base)[1])}$")
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        for entry in os.listdir(folder):
            m = pattern.match(entry)
            if m and not _pid_alive(int(m.group(1))):
                logger.warning(f"removing {os.path.join(folder, entry)}: a temp file left by an interrupted write "
                               f"of {path} (process {m.group(1)} no longer runs)")
                _remove(Path(folder, entry))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[str]:
    """Yield a temp path in ``path``'s folder (created if needed), renamed to ``path`` on success
    and removed on an exception."""
    path = os.path.abspath(check_path("path", path))
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a folder, where a file was to be written", path)
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    base = os.path.basename(path)
    _stale_file_temps(path)
    tmp = _create_temp_file(folder, f".tmp-{base}-{os.getpid()}-", os.path.splitext(base)[1])
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as err:
        _raise_naming_the_target(err, path, tmp)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _folder_temps(target: Path) -> list[tuple[str, int | None, Path]]:
    """``(kind, pid, path)`` of the ``.<name>.tmp-*`` / ``.<name>.old-*`` entries beside ``target``."""
    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(tmp|old)-(?:(\d+)-)?[0-9a-f]{{8}}$")
    found = []
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):  # no parent folder: nothing to recover
        for entry in os.scandir(target.parent):
            m = pattern.match(entry.name)
            if m:
                found.append((m.group(1), int(m.group(2)) if m.group(2) else None, Path(entry.path)))
    return found


def recover_folder(target: str | os.PathLike) -> list[str]:
    """Repair what a killed :func:`atomic_folder` write left beside ``target``; returns (and logs) what it did.

    A dead writer's temp folder is removed; its ``.old`` folder (the previous version) is renamed
    back when ``target`` is missing, else removed. Entries of writers that still run are left alone.

    Example:
        >>> import os, tempfile
        >>> root = tempfile.mkdtemp()
        >>> os.makedirs(os.path.join(root, ".data.old-999999999-0123abcd"))  # killed between the renames
        >>> recover_folder(os.path.join(root, "data"))
        ['restored .../data from .data.old-999999999-0123abcd (a write was interrupted between its two renames)']
        >>> os.listdir(root)
        ['data']
    """
    target = Path(os.path.abspath(os.fspath(target)))
    actions: list[str] = []
    dead = [(kind, path) for kind, pid, path in _folder_temps(target) if not _pid_alive(pid)]
    olds = sorted((p for kind, p in dead if kind == "old"), key=lambda p: p.stat().st_mtime, reverse=True)
    if olds and not os.path.lexists(target):
        os.replace(olds[0], target)
        actions.append(f"restored {target} from {olds[0].name} (a write was interrupted between its two renames)")
        olds = olds[1:]
    for old in olds:
        _remove(old)
        actions.append(f"removed {old}: the previous version of {target}, left by an interrupted write")
    for kind, path in dead:
        if kind == "tmp":
            _remove(path)
            actions.append(f"removed {path}: a partial write of {target} by a process that no longer runs")
    for action in actions:
        logger.warning(action)
    return actions


@contextlib.contextmanager
def atomic_folder(target: str | os.PathLike, *, mark: bool = True, keeps_old: bool = False) -> Iterator[Path]:
    """Yield an empty temp folder beside ``target``; on success it replaces ``target`` (two renames),
    on an exception it is removed and ``target`` left as it was.

    ``mark=True`` writes :data:`FOLDER_MARKER` (listing the files written) and requires an existing
    ``target`` to be replaceable (:func:`check_replaceable`), before the yield and again before the
    swap. ``keeps_old=True``: the caller copied the old ``target`` into the temp folder, so it need
    not be replaceable, and its files hf-synthsample did not write stay unlisted (still protected).
    ``mark=False`` adds no marker (adding to a folder of the user's keeps it the user's).

    Example:
        >>> import os, tempfile
        >>> out = os.path.join(tempfile.mkdtemp(), "out")
        >>> with atomic_folder(out) as tmp:
        ...     _ = (tmp / "a.txt").write_text("a")
        >>> sorted(os.listdir(out))  # with the marker that lets a later write replace it
        ['.hf-synthsample', 'a.txt']
    """
    target = Path(os.path.abspath(check_path("target", target)))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as err:  # a part of the path is a file
        raise NotADirectoryError(err.errno, "a part of the path is a file, not a folder", os.fspath(target)) from err
    recover_folder(target)
    if mark and not keeps_old:
        check_replaceable(target)
    foreign = set(foreign_files(target)) if mark and keeps_old else set()
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        tmp.mkdir()
    except OSError as err:
        raise type(err)(err.errno, f"{err.strerror} (cannot write in {target.parent})", os.fspath(target)) from err
    try:
        yield tmp
        if mark:
            _write_marker(tmp, _folder_files(tmp) - foreign)
            if not keeps_old:
                check_replaceable(target)  # nobody put a folder or file of theirs there while we wrote
        _swap_into_place(tmp, target)
    except OSError as err:
        shutil.rmtree(tmp, ignore_errors=True)
        _raise_naming_the_target(err, target, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _swap_into_place(tmp: Path, target: Path) -> None:
    if not os.path.lexists(target):
        os.replace(tmp, target)
        return
    backup = target.parent / f".{target.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    os.replace(target, backup)
    try:
        os.replace(tmp, target)
    except BaseException:
        os.replace(backup, target)
        raise
    _remove(backup)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(text)


def write_json_atomic(path: str | os.PathLike, obj: Any, **dump_kwargs: Any) -> None:
    """Write ``obj`` as JSON to ``path`` atomically (``dump_kwargs`` go to :func:`json.dump`)."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, **dump_kwargs)


def save_figure_atomic(fig: Any, path: str | os.PathLike, **savefig_kwargs: Any) -> str:
    """Save a matplotlib figure atomically (format from the extension, default PNG) and close it."""
    import matplotlib.pyplot as plt

    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lstrip(".") or "png"
    savefig_kwargs.setdefault("bbox_inches", "tight")
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=fmt, **savefig_kwargs)
    finally:
        plt.close(fig)
    return path
