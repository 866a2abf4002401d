"""``dnnf-bench --kernels``: one-op models of each op family, compiled and timed against
onnxruntime, each kernel judged against this machine's roofline (``sweep.py``; the
families and their shapes are ``cases.py``)."""
