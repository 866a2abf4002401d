"""Running a model as onnxruntime users do: ``InferenceSession(model).run(None, feeds)``.

``inference.py`` holds the session (specialisations per input shapes, through the
compile cache), ``source.py`` the model it was given (path, bytes or proto: its
digest, inputs and outputs), ``model_info.py`` what ``get_inputs``, ``get_outputs``
and ``get_modelmeta`` return, ``feeds.py`` the checks of what ``run`` is fed.
"""

from .feeds import InvalidArgument
from .inference import InferenceSession
from .model_info import ModelInfo, ModelMetadata, NodeArg
from .source import ModelSource

__all__ = ["InferenceSession", "InvalidArgument", "ModelInfo", "ModelMetadata", "ModelSource", "NodeArg"]
