"""Weights files in 2 MiB page-cache folios (``compiler/huge_pages.py``): the writes end on
2 MiB boundaries, a cache copy keeps bytes and mode, and a loaded model's weights are
mapped with 2 MiB pages, fresh and copied, wherever this kernel and file system give a
file written that way 2 MiB pages at all. Outputs are compared with numpy at rtol 1e-4,
atol 1e-4 (a 1024-term dot product of standard normals, summed in another order)."""

import mmap
import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from dnnf_mlir.cache.compiled import copy_entry
from dnnf_mlir.compiler import Artifact, compile_model
from dnnf_mlir.compiler.huge_pages import HUGE_PAGE_BYTES, copy_aligned, write_aligned


class RecordingFile:
    """An unbuffered file that keeps what it is given and where each write ended."""

    def __init__(self, start):
        self.data, self.start, self.ends = bytearray(), start, []

    def tell(self):
        return self.start + len(self.data)

    def write(self, piece):
        self.data += piece
        self.ends.append(self.tell())
        return len(piece)


def test_writes_end_on_huge_page_boundaries():
    data = np.random.default_rng(0).integers(0, 256, 2 * HUGE_PAGE_BYTES + 5, dtype=np.uint8)
    f = RecordingFile(start=100)
    write_aligned(f, data)
    assert bytes(f.data) == data.tobytes()
    assert f.ends == [HUGE_PAGE_BYTES, 2 * HUGE_PAGE_BYTES, 100 + data.size]


def test_copy_keeps_bytes_and_mode(tmp_path):
    source, copy = tmp_path / "runner", tmp_path / "copy"
    source.write_bytes(os.urandom(HUGE_PAGE_BYTES + 4099))
    source.chmod(0o751)
    copy_aligned(source, copy)
    assert copy.read_bytes() == source.read_bytes()
    assert copy.stat().st_mode == source.stat().st_mode


def pmd_mapped_kib(path) -> int:
    """FilePmdMapped (kB) of this process's mappings of ``path``."""
    total, current = 0, None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            fields = line.split()
            if not fields[0].endswith(":"):
                current = fields[5] if len(fields) > 5 else None
            elif fields[0] == "FilePmdMapped:" and current == str(path):
                total += int(fields[1])
    return total


@pytest.fixture
def huge_file_pages(tmp_path):
    """Skips unless a file written by ``write_aligned`` in ``tmp_path`` and mapped with
    MADV_HUGEPAGE gets 2 MiB pages (Linux with file THP: e.g. ext4 or xfs on 6.x)."""
    if not sys.platform.startswith("linux") or not hasattr(mmap, "MADV_HUGEPAGE"):
        pytest.skip("no transparent huge pages on this platform")
    probe = tmp_path / "probe.bin"
    with open(probe, "wb", buffering=0) as f:
        write_aligned(f, bytes(2 * HUGE_PAGE_BYTES))
    with open(probe, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as mapped:
        mapped.madvise(mmap.MADV_HUGEPAGE)
        sum(mapped[i] for i in range(0, len(mapped), 4096))
        if not pmd_mapped_kib(probe):
            pytest.skip(f"the page cache of {tmp_path}'s file system gives no 2 MiB pages")


def test_weights_are_mapped_in_huge_pages(tmp_path, huge_file_pages):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((1024, 1024)).astype(np.float32)  # 4 MiB: two huge pages
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "big_matmul",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1024])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1024])],
                              [numpy_helper.from_array(w, "w")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), tmp_path / "m.onnx")
    compile_model(tmp_path / "m.onnx", tmp_path / "fresh")
    copy_entry(tmp_path / "fresh", tmp_path / "copied")
    x = rng.standard_normal((2, 1024)).astype(np.float32)
    for outdir in ("fresh", "copied"):
        session = Artifact(tmp_path / outdir).session()
        np.testing.assert_allclose(session.run([x])[0], x @ w, rtol=1e-4, atol=1e-4)
        assert pmd_mapped_kib(tmp_path / outdir / "weights.bin") >= HUGE_PAGE_BYTES // 1024, outdir
