"""The campaign's fork server gives what a fresh process gives: for each way a tool can
end, the exit status and stderr of a run through the server equal those of the same
entry started afresh by subprocess (a traceback's frames aside, which differ by the
server's own: there the verdict and the last line are compared)."""

import os
import subprocess
import sys
import textwrap

import pytest

from dnnf_mlir.hostile import judge
from dnnf_mlir.hostile.forkserver import ForkServer

TOOL = textwrap.dedent('''
    import atexit, os, signal, sys, time

    runs = 0

    def error():
        print("fake: error: bad input", file=sys.stderr)
        print("on stdout, not stderr")
        return 3

    def exit_message():
        sys.exit("fake: error: told by sys.exit")

    def context():
        global runs
        runs += 1  # 1 in every run: no state is left from an earlier one
        print(f"argv {sys.argv} cwd {os.path.basename(os.getcwd())} stdin {sys.stdin.read()!r} runs {runs}",
              file=sys.stderr)

    def at_exit():
        atexit.register(lambda: print("fake: error: said at exit", file=sys.stderr))
        return 1

    def bug():
        raise ValueError("boom")

    def crash():
        os.kill(os.getpid(), signal.SIGSEGV)

    def hang():
        time.sleep(60)
''')
ENDINGS = ["error", "exit_message", "context", "at_exit", "crash"]


@pytest.fixture(scope="module")
def tool(tmp_path_factory):
    """(directory holding the module ``fake_tool``, environment that imports it)."""
    directory = tmp_path_factory.mktemp("fake-tool")
    (directory / "fake_tool.py").write_text(TOOL)
    (directory / "work").mkdir()
    return directory, dict(os.environ, PYTHONPATH=os.pathsep.join([str(directory), *sys.path]))


@pytest.fixture(scope="module")
def server(tool):
    server = ForkServer(tool[1])
    yield server
    server.close()


def fresh(tool, function: str) -> tuple:
    directory, env = tool
    script = f"import sys; from fake_tool import {function}; sys.argv = ['fake', 'x.onnx']; sys.exit({function}())"
    done = subprocess.run([sys.executable, "-c", script], cwd=directory / "work", env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    return done.returncode, done.stderr


def forked(server, tool, function: str, timeout: float = 60) -> tuple:
    return server.run(f"fake_tool:{function}", ["fake", "x.onnx"], str(tool[0] / "work"), timeout)


@pytest.mark.parametrize("function", ENDINGS)
def test_a_forked_run_ends_as_a_fresh_process_does(server, tool, function):
    assert forked(server, tool, function) == fresh(tool, function)


def test_a_run_starts_from_the_server_state_not_the_last_run(server, tool):
    first, second = forked(server, tool, "context"), forked(server, tool, "context")
    assert first == second == (0, "argv ['fake', 'x.onnx'] cwd work stdin '' runs 1\n")


def test_a_traceback_is_judged_as_a_fresh_one(server, tool):
    returncode, stderr = forked(server, tool, "bug")
    assert judge(returncode, stderr, [], False) == judge(*fresh(tool, "bug"), [], False)
    assert judge(returncode, stderr, [], False) == ("traceback", "ValueError: boom")


def test_a_hang_is_killed_at_the_timeout_and_the_server_goes_on(server, tool):
    assert forked(server, tool, "hang", timeout=1) == (None, "")
    assert forked(server, tool, "error") == (3, "fake: error: bad input\n")
