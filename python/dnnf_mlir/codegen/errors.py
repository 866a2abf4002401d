"""The code generator's errors: a module it cannot lower, or a tool that failed; code
this machine cannot run."""


class CodegenError(Exception):
    pass


class UnsupportedTargetError(RuntimeError):
    """Code compiled for a target this machine cannot run (a CPU lacking features the
    code uses, ...): it is never run. ``missing`` names what is missing."""

    def __init__(self, message: str, missing):
        self.missing = tuple(missing)
        super().__init__(message)


__all__ = ["CodegenError", "UnsupportedTargetError"]
