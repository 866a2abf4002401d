"""The code generator's error: a module it cannot lower, or a tool that failed."""


class CodegenError(Exception):
    pass


__all__ = ["CodegenError"]
