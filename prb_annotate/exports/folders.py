"""Putting a finished folder in place so that an interruption leaves the old one or the new one.

An export is written to a hidden folder beside its target (the same file system, so moving it is
a rename) whose name carries the writing process's id. SIGKILL, a crash or a full disk may stop
the process anywhere:

- while it writes: the target is untouched; the hidden folder stays behind until the next export
  to the same target removes it (its writer is gone by then);
- while it replaces an existing export: the two folders are swapped in one step (Linux's
  ``renameat2`` with ``RENAME_EXCHANGE``), so the target holds the old export or the new one at
  every moment. Where the file system cannot swap, the old folder is renamed aside first; if the
  process stops before the new one is renamed in, the next export puts the old one back.
"""

import contextlib
import ctypes
import errno
import os
import re
import secrets
import shutil
from pathlib import Path

AT_FDCWD = -100
RENAME_EXCHANGE = 2
# The file system or the kernel cannot swap: fall back to two renames.
CANNOT_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP}


def work_folder(target: Path, label: str = "tmp") -> Path:
    """A new hidden folder beside ``target``: ``.NAME.LABEL-PID-RANDOM``."""
    folder = target.parent / f".{target.name}.{label}-{os.getpid()}-{secrets.token_hex(6)}"
    folder.mkdir()
    return folder


def put_in_place(new: Path, target: Path) -> None:
    """Move the finished folder ``new`` to ``target``, replacing an existing one."""
    if not target.exists():
        new.rename(target)
        return
    if exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # it holds the old folder now
        return
    aside = work_folder(target, "old")
    aside.rmdir()
    target.rename(aside)
    new.rename(target)
    shutil.rmtree(aside, ignore_errors=True)


def exchange(first: Path, second: Path) -> bool:
    """Swap two paths atomically; False where the platform or the file system cannot."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    done = renameat2(AT_FDCWD, os.fsencode(first), AT_FDCWD, os.fsencode(second), RENAME_EXCHANGE)
    if done == 0:
        return True
    code = ctypes.get_errno()
    if code in CANNOT_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(second))


def clear_abandoned(target: Path) -> None:
    """Remove what an export to ``target`` stopped by force left beside it, and put back an old
    export that was moved aside when the process stopped between two renames."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.(tmp|old)-(\d+)-[0-9a-f]+")
    if not target.parent.is_dir():
        return
    for path in target.parent.iterdir():
        match = pattern.fullmatch(path.name)
        if match is None or is_running(int(match[2])):
            continue
        if match[1] == "old" and not target.exists():
            path.rename(target)
        else:
            shutil.rmtree(path, ignore_errors=True)


def is_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    with contextlib.suppress(OSError):
        # A zombie (killed, not yet reaped by its parent) is not running.
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    return True
