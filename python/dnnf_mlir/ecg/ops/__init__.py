"""The ECG op classes, grouped by module; importing this package defines them all."""

from . import elementwise, structure  # noqa: F401
