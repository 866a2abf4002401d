"""Where the native LLVM tools are: each ``$DNNF_<TOOL>``, else LLVM 22's, else any on the PATH.

The bindings carry their own LLVM for the JIT; everything that leaves the process
(objects for a library, AArch64 code, CPU feature lookups) goes through Debian's
LLVM 22 tools (package llvm-22, clang-22).
"""

from __future__ import annotations

import os
import shutil
from typing import Optional


def _find_tool(env: str, names) -> Optional[str]:
    value = os.environ.get(env)
    if value:
        return value if shutil.which(value) or os.path.exists(value) else None
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    return None


def find_llc() -> Optional[str]:
    """``$DNNF_LLC``, else ``llc-22``, else ``llc`` on the PATH."""
    return _find_tool("DNNF_LLC", ("llc-22", "llc"))


def find_opt() -> Optional[str]:
    """``$DNNF_OPT``, else ``opt-22``, else ``opt`` on the PATH (LLVM's optimizer)."""
    return _find_tool("DNNF_OPT", ("opt-22", "opt"))


def find_llvm_split() -> Optional[str]:
    """``$DNNF_LLVM_SPLIT``, else ``llvm-split-22``, else ``llvm-split`` on the PATH."""
    return _find_tool("DNNF_LLVM_SPLIT", ("llvm-split-22", "llvm-split"))


def find_clang() -> Optional[str]:
    """``$DNNF_CLANG``, else ``clang-22``, else ``clang`` on the PATH (it resolves CPU names)."""
    return _find_tool("DNNF_CLANG", ("clang-22", "clang"))


__all__ = ["find_clang", "find_llc", "find_llvm_split", "find_opt"]
