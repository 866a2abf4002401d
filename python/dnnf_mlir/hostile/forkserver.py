"""Runs the dnnf tools for the campaign, each run a process of its own, without
paying Python's and the MLIR bindings' start-up (most of a short run) every time.

A server process (``main``, one per campaign job) imports each tool's console-script
entry (``module:function``) once, then forks a child per request. The child leaves
the server's loop and runs the entry as the tool's script does, as the process's main
code, in a session of its own, stdin and stdout on /dev/null, stderr to a file: its
exit status, a crash signal, a traceback and every byte of stderr are those of the
tool started afresh (interpreter shutdown, atexit included), and a child that
outlives the timeout is killed with its process group. A request or a
reply is one JSON line on the server's stdin or stdout::

    {"entry": "dnnf_mlir.tools.run:entry", "argv": ["dnnf-run", "input.mlir", "--interpret"], "cwd": "...", "timeout": 60}
    {"returncode": 1, "stderr": "dnnf-run: error: ..."}     (returncode -11: SIGSEGV; null: killed at the timeout)
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile


class ForkServer:
    """The campaign's side: a server started with ``env``, one run at a time."""

    def __init__(self, env: dict):
        self._process = subprocess.Popen([sys.executable, "-c", f"from {__name__} import main; main()"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)

    def run(self, entry: str, argv: list, cwd: str, timeout: float) -> tuple:
        """(returncode or None on a timeout, stderr) of the script whose entry is ``entry``
        (``module:function``) run with ``argv`` in ``cwd``."""
        request = {"entry": entry, "argv": argv, "cwd": cwd, "timeout": timeout}
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        reply = self._process.stdout.readline()
        if not reply:
            raise RuntimeError(f"the hostile campaign's fork server ended (exit {self._process.wait()})")
        answer = json.loads(reply)
        return answer["returncode"], answer["stderr"]

    def close(self):
        self._process.stdin.close()
        self._process.wait()


def serve(requests, replies):
    """Answers each request; returns the request in a child forked to run it, None at the end."""
    entries = {}
    for line in requests:
        request = json.loads(line)
        entry = request["entry"]
        if entry not in entries:
            module, _, function = entry.partition(":")
            entries[entry] = getattr(importlib.import_module(module), function)
        with tempfile.TemporaryFile() as stderr:
            pid = os.fork()
            if pid == 0:
                os.dup2(stderr.fileno(), 2)
                return entries[entry], request
            returncode = _wait(pid, request["timeout"])
            stderr.seek(0)
            reply = {"returncode": returncode, "stderr": stderr.read().decode(errors="replace")}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()
    return None


def _wait(pid: int, timeout: float) -> int | None:
    """The exit status of child ``pid`` as subprocess gives it, None if it ran past ``timeout``."""
    pidfd = os.pidfd_open(pid)
    try:
        finished, _, _ = select.select([pidfd], [], [], timeout)
    finally:
        os.close(pidfd)
    if not finished:
        os.killpg(pid, signal.SIGKILL)  # the child's own session and process group
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if finished else None


def _become_the_tool(request: dict):
    """In the child: the process state a tool started by the campaign has (stderr is set)."""
    os.setsid()
    os.chdir(request["cwd"])
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sys.argv = list(request["argv"])


def main():
    """The server's process; in a child, the tool's."""
    forked = serve(sys.stdin, sys.stdout)
    if forked is not None:
        entry, request = forked
        _become_the_tool(request)
        sys.exit(entry())
