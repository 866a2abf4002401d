"""Fusion: which ECG ops form one kernel, and kernels as functions (``kernels.py``)."""
