# SPDX-License-Identifier: MIT
"""Runs the installed ``hpcprof`` command line: reports, imports, profiled runs.

The analysis lives in the C++ tool; this module only calls it, so a notebook sees exactly what
``hpcprof report`` says. The executable is found, in order: the ``hpcprof`` argument of each
function, the ``HPCPROF`` environment variable, then ``hpcprof`` on ``PATH``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

PathLike = Union[str, os.PathLike]

#: ``hpcprof report`` exits with this code when a ``--fail-on`` gate fails (the report is still
#: written); see docs/reports.md.
EXIT_GATE_FAILED = 3


class HpcprofError(RuntimeError):
    """``hpcprof`` exited with an error; ``returncode`` and ``stderr`` say which."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str):
        self.args_used = list(args)
        self.returncode = returncode
        self.stderr = stderr
        last = stderr.strip().splitlines()[-1] if stderr.strip() else "no message"
        super().__init__(f"{' '.join(self.args_used)} exited with {returncode}: {last}")


def find_hpcprof(hpcprof: Optional[PathLike] = None) -> str:
    """The path of the hpcprof executable to run; FileNotFoundError when there is none."""
    candidate = hpcprof or os.environ.get("HPCPROF")
    if candidate:
        path = Path(candidate)
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        found = shutil.which(str(candidate))
        if found:
            return found
        raise FileNotFoundError(f"hpcprof executable not found: {candidate}")
    found = shutil.which("hpcprof")
    if not found:
        raise FileNotFoundError(
            "hpcprof is not on PATH: install it, set HPCPROF=/path/to/hpcprof, or pass hpcprof=")
    return found


def run_cli(args: Sequence[str], hpcprof: Optional[PathLike] = None,
            ok_codes: Iterable[int] = (0,), **kwargs) -> subprocess.CompletedProcess:
    """Runs ``hpcprof ARGS...`` and returns the completed process (text stdout and stderr).

    Raises HpcprofError when the exit code is not in ``ok_codes``.
    """
    argv = [find_hpcprof(hpcprof), *[str(a) for a in args]]
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    if done.returncode not in tuple(ok_codes):
        raise HpcprofError(argv, done.returncode, done.stderr)
    return done


def report(trace: PathLike, format: str = "json", output: Optional[PathLike] = None,
           fail_on: Optional[str] = None, args: Sequence[str] = (),
           hpcprof: Optional[PathLike] = None):
    """``hpcprof report TRACE --format FORMAT``.

    Returns the report as a dict for ``json``, else its text; with ``output`` the report is
    written to that file and its path is returned. A failed ``fail_on`` gate is not an error
    here: the JSON report's ``gates`` section says which gate failed.
    """
    argv = ["report", str(trace), "--format", format, *args]
    if fail_on:
        argv += ["--fail-on", fail_on]
    if output is not None:
        argv += ["--output", str(output)]
    done = run_cli(argv, hpcprof, ok_codes=(0, EXIT_GATE_FAILED))
    if output is not None:
        return Path(output)
    return json.loads(done.stdout) if format == "json" else done.stdout


def import_trace(files: Union[PathLike, Sequence[PathLike]], output: PathLike,
                 force: bool = False, args: Sequence[str] = (),
                 hpcprof: Optional[PathLike] = None) -> Path:
    """``hpcprof import FILES -o OUTPUT``: converts PyTorch profiler (Kineto) traces into one
    hpcprof trace and returns its path."""
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    argv = ["import", *[str(f) for f in files], "-o", str(output), *args]
    if force:
        argv.append("--force")
    run_cli(argv, hpcprof)
    return Path(output)


def run(command: Sequence[str], output: PathLike, force: bool = False,
        args: Sequence[str] = (), hpcprof: Optional[PathLike] = None,
        **kwargs) -> subprocess.CompletedProcess:
    """``hpcprof run -o OUTPUT -- COMMAND...``: profiles a command (``mpirun ...`` included).

    Returns the completed process: its exit code is the command's, and stdout holds the
    command's output. Raises HpcprofError when hpcprof itself failed: one of its own exit codes
    (2, 125-127) and no trace written.
    """
    argv = ["run", "-o", str(output), *args]
    if force:
        argv.append("--force")
    argv += ["--", *[str(c) for c in command]]
    done = run_cli(argv, hpcprof, ok_codes=range(256), **kwargs)
    if done.returncode in (2, 125, 126, 127) and not Path(output).is_file():
        raise HpcprofError([find_hpcprof(hpcprof), *argv], done.returncode, done.stderr)
    return done
