"""Files written whole: a reader sees the old file or the new one, never half of one."""

import contextlib
import os
import stat
import tempfile
from typing import IO, Callable


def write_whole(path: str, write: Callable[[IO[str]], None], prefix: str = '.partial-') -> None:
  """Calls `write` on a new file beside `path` (through a symbolic link, beside its
  target), then renames it to `path`: a reader never sees half the file, and a failed
  write leaves `path` as it was. The file keeps the mode of the one it replaces, or gets
  the one a new file would."""
  path = os.path.realpath(path)
  if os.path.exists(path):
    mode = stat.S_IMODE(os.stat(path).st_mode)
  else:
    umask = os.umask(0)
    os.umask(umask)
    mode = 0o666 & ~umask
  handle, partial = tempfile.mkstemp(prefix=prefix, suffix=os.path.splitext(path)[1],
                                     dir=os.path.dirname(path))
  try:
    with os.fdopen(handle, 'w', newline='') as f:
      write(f)
    os.chmod(partial, mode)
    os.replace(partial, path)
  except BaseException:
    with contextlib.suppress(FileNotFoundError):
      os.remove(partial)
    raise
