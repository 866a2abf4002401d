"""Math-property graph rewriting (DNNFusion section 4.2) over the ECG dialect.

``rewrite_module`` is the Python entry point; the ``ecg-rewrite`` pass wraps it.
"""

from .pass_ import RewritePass, rewrite_module
from .catalogue import catalogue

__all__ = ["RewritePass", "rewrite_module", "catalogue"]
