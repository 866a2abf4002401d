"""Python modules of the dialects this project defines, where the MLIR bindings look them up."""
