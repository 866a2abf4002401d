"""Weights files written so that the page cache holds them in 2 MiB folios.

``dnnf_load`` maps ``weights.bin`` and advises the mapping for transparent huge pages
(``c_glue.py``); the kernel maps a file with 2 MiB pages only where the page cache
holds it in 2 MiB folios, and which folios a file gets depends on how it was written:
writes that end on 2 MiB boundaries give 2 MiB folios (Linux 6.x file systems with
large folios: ext4, xfs); one write of the whole file gave them to part of it only, a
``sendfile`` copy (``shutil.copy``, ``cp``) to none. With 4 KiB pages the fully connected layers'
weights (150 MB in AlexNet) miss the dTLB on every page: those gemms' per-kernel minima
were 8-20% slower than with 2 MiB pages (quiet, AlexNet's and ZFNet's), and a placement
that differed per artifact made identical code differ per build. So the compiler writes the weights file (``weights.write_weights``)
and the compile cache copies it (``cache/compiled.py``) in 2 MiB-aligned pieces.
"""

from __future__ import annotations

import shutil

HUGE_PAGE_BYTES = 2 << 20


def write_aligned(f, data) -> None:
    """Write the bytes of ``data`` (a buffer) to the unbuffered binary file ``f`` in
    writes that end on ``HUGE_PAGE_BYTES`` boundaries of the file."""
    view = memoryview(data).cast("B")
    done = 0
    while done < len(view):
        end = min(len(view), done + HUGE_PAGE_BYTES - f.tell() % HUGE_PAGE_BYTES)
        written = f.write(view[done:end])
        if not written:
            raise OSError("no byte written")
        done += written


def copy_aligned(source, destination) -> None:
    """``shutil.copy2`` (``shutil.copytree``'s ``copy_function``), writing in pieces that
    end on ``HUGE_PAGE_BYTES`` boundaries."""
    with open(source, "rb") as f, open(destination, "wb", buffering=0) as out:
        while piece := f.read(HUGE_PAGE_BYTES):
            write_aligned(out, piece)
    shutil.copystat(source, destination)


__all__ = ["HUGE_PAGE_BYTES", "copy_aligned", "write_aligned"]
