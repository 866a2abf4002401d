"""The persistent compile cache: compiled models kept by what made them.

    from dnnf_mlir.cache import CompileCache, compile_cached
    cache = CompileCache()          # $DNNF_CACHE_DIR or ~/.cache/dnnf-mlir/compiled
    host, compiled = compile_cached(path, digest, shapes, options, cache,
                                    load=lambda directory: Artifact(directory).session())

``keys.py`` names an entry (model digest, shapes, options, CPU, the compiler's own
fingerprint), ``entry.py`` seals and verifies one (checksums), ``store.py`` keeps
them (locks, atomic renames, the fallback when the directory cannot be written, list,
clear and prune), ``compiled.py`` compiles through it. ``dnnf-cache`` manages it.
"""

from .compiled import compile_cached, compile_fields, copy_entry, store_compiled
from .entry import ENTRY_FILE, EntryInfo
from .keys import compiler_fingerprint, file_digest, stat_key
from .store import CACHE_ENV, CacheWarning, CompileCache, default_root

__all__ = [
    "CACHE_ENV",
    "CacheWarning",
    "CompileCache",
    "ENTRY_FILE",
    "EntryInfo",
    "compile_cached",
    "compile_fields",
    "compiler_fingerprint",
    "copy_entry",
    "default_root",
    "file_digest",
    "stat_key",
    "store_compiled",
]
