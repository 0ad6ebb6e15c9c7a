"""The exit statuses of every `workbench` command, named once, and the one rule that maps an
error to its status (`exit_code_for`): scripts and CI read these numbers."""

from __future__ import annotations

import errno
from enum import IntEnum

from workbench.core.errors import InputError


class ExitCode(IntEnum):
    """A command's exit status."""

    OK = 0
    FAILED = 1
    """The command ran and its check did not pass: a floor missed, `--strict` with an unmeasured
    query, a comparison whose change is significant, a copy that differs, a judge that failed."""
    USAGE = 2
    """Unusable input (a file, a line, an option), said on stderr; nothing was written."""
    INTERNAL = 70
    """A bug of ours (EX_SOFTWARE): distinct from USAGE, so tests catch it."""
    INTERRUPTED = 130
    """Ctrl-C (128 + SIGINT)."""
    BROKEN_PIPE = 141
    """The reader of stdout went away (`| head`): stopped quietly, as Unix tools do (128 +
    SIGPIPE)."""


STDOUT_ERRORS = frozenset({errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EBADF, errno.EFBIG})
"""A write without a file name that fails so is stdout's (a full disk, /dev/full, a closed
descriptor): the user's environment, said as such, not a bug of ours."""


def exit_code_for(error: BaseException) -> ExitCode:
    """The status of a command that stopped on `error`."""
    if isinstance(error, InputError):
        return ExitCode.USAGE
    if isinstance(error, KeyboardInterrupt):
        return ExitCode.INTERRUPTED
    if isinstance(error, BrokenPipeError):
        return ExitCode.BROKEN_PIPE
    if isinstance(error, OSError) and error.filename is None and error.errno in STDOUT_ERRORS:
        return ExitCode.USAGE
    return ExitCode.INTERNAL
