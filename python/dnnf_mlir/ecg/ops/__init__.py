"""The ECG op classes, grouped by module; importing this package defines them all."""

from . import data_movement, elementwise, nn, structure  # noqa: F401
