"""What names a compiled model in the cache: the compiler that made it and what it was fed.

An entry's key is a SHA-256 over the model's content digest, its input shapes, every
compile option with the target resolved (``CompileOptions.cache_fields``: ``native``
becomes the name LLVM gives this machine, with its features) and
``compiler_fingerprint()``. The fingerprint hashes
the compiler itself rather than trusting a version string: every source file of the
``dnnf_mlir`` package (its C runtime included), every file of the ``lowering/``
folder in use (``$DNNF_LOWERING``), the versions of the Python packages that shape
the code (the MLIR bindings, onnx, numpy) and the identity (path, size, mtime) of
the native tools that build it (each backend's ``tools()``, the C toolchains). Editing any of them, or upgrading LLVM, makes new
keys; the old entries are left for ``dnnf-cache prune`` to reclaim.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from importlib import metadata
from pathlib import Path

from ..codegen import backends
from ..lowering import lowering_dir

PACKAGE_DIR = Path(__file__).resolve().parents[1]
PACKAGES = ("torch-mlir", "onnx", "numpy")
BUILD_TOOLS = ("cmake", "cc", "aarch64-linux-gnu-gcc")
CHUNK = 1 << 24


def _tree_files(root: Path) -> list:
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _tool_identity(path) -> list:
    if not path:
        return [None]
    real = os.path.realpath(path)
    info = os.stat(real)
    return [real, info.st_size, info.st_mtime_ns]


@functools.lru_cache(maxsize=None)
def compiler_fingerprint() -> str:
    """A hash of everything that decides what the compiler makes (see the module docstring)."""
    digest = hashlib.sha256()
    for root in (PACKAGE_DIR, lowering_dir()):
        for path in _tree_files(root):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    tools = [tool for backend in backends() for tool in backend.tools()] + [shutil.which(t) for t in BUILD_TOOLS]
    digest.update(json.dumps([versions, [_tool_identity(t) for t in tools]]).encode())
    return digest.hexdigest()


def file_digest(path: "str | os.PathLike") -> str:
    """SHA-256 of a file's content."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def stat_key(path: "str | os.PathLike") -> str:
    """A name for a file as it is now: its real path, device, inode, size and change
    times. Any write changes the ctime, which no one can set back, so a file
    with the same stat key has the same content (git's index and ccache rely on this)."""
    real = os.path.realpath(path)
    info = os.stat(real)
    fields = [real, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]
    return hashlib.sha256(json.dumps(fields).encode()).hexdigest()


def entry_key(fields: dict) -> str:
    """The key of a compiled model described by ``fields`` (JSON values), with the
    compiler's fingerprint."""
    text = json.dumps({"compiler": compiler_fingerprint(), **fields}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


__all__ = ["compiler_fingerprint", "entry_key", "file_digest", "stat_key"]
