"""The model a session runs: a path, serialized bytes or an ``onnx.ModelProto``.

``ModelSource`` gives its content digest (the cache key's first part), its inputs
and outputs (``ModelInfo``) and a file to compile from. A hit must not cost a pass
over a 400 MB model, so both are kept as cache notes: the digest of a file by its
stat key (``cache.stat_key``: path, inode, size, mtime, ctime), its ``ModelInfo`` by
digest. A model given as bytes or a proto is hashed as it is serialized.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path

import onnx

from ..cache import CompileCache, file_digest, stat_key
from ..frontend.onnx_importer import load_model
from ..frontend.onnx_types import OnnxImportError
from .model_info import ModelInfo

DIGESTS, MODELS = "digests", "models"  # the cache notes kept here


class ModelSource:
    def __init__(self, model, cache: CompileCache | None):
        self.cache = cache
        self._proto, self._bytes, self.path = None, None, None
        if isinstance(model, onnx.ModelProto):
            self._proto, self.name = model, model.graph.name or "model"
        elif isinstance(model, (bytes, bytearray, memoryview)):
            self._bytes, self.name = bytes(model), "model"
        else:
            self.path = Path(os.fspath(model))
            if not self.path.is_file():
                raise OnnxImportError(f"no such model file: '{self.path}'")
            self.name = self.path.stem

    def _serialized(self) -> bytes:
        if self._bytes is None:
            self._bytes = self._proto.SerializeToString()
        return self._bytes

    def _parsed(self) -> onnx.ModelProto:
        if self._proto is None:
            if self.path is not None:
                self._proto = load_model(self.path)
            else:
                try:
                    self._proto = onnx.load_from_string(self._bytes)
                except Exception as error:  # protobuf raises its own DecodeError types
                    raise OnnxImportError(f"the bytes given are not an ONNX model ({error})") from None
        return self._proto

    @functools.cached_property
    def digest(self) -> str:
        """SHA-256 of the model file, or of the serialized model."""
        if self.path is None:
            return hashlib.sha256(self._serialized()).hexdigest()
        name = stat_key(self.path)
        known = self.cache.read_note(DIGESTS, name) if self.cache else None
        if known is None:
            known = file_digest(self.path)
            if self.cache:
                self.cache.write_note(DIGESTS, name, known)
        return known

    @functools.cached_property
    def info(self) -> ModelInfo:
        text = self.cache.read_note(MODELS, self.digest) if self.cache else None
        if text is not None:
            return ModelInfo.from_json(text)
        info = ModelInfo.from_proto(self._parsed())
        if self.cache:
            self.cache.write_note(MODELS, self.digest, info.to_json())
        return info

    def file(self) -> Path:
        """A path to compile from: the model's own, or a file holding it, written on the
        first call and deleted with this object."""
        if self.path is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="dnnf-model-")
            self.path = Path(self._scratch.name) / f"{self.name}.onnx"
            self.path.write_bytes(self._serialized())
        return self.path


__all__ = ["ModelSource"]
