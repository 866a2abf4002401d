"""The compiler's error: a model that cannot be compiled, or a missing tool."""


class CompileError(Exception):
    """A model that cannot be compiled, or a missing tool; the message says which."""


__all__ = ["CompileError"]
