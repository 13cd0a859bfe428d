"""A stand-in torch for tests (see ../README.md)."""
import os

__version__ = os.environ.get("FAKE_TORCH_VERSION", "2.5") + ".0+fake"
_V = tuple(int(x) for x in os.environ.get("FAKE_TORCH_VERSION", "2.5").split("."))

from . import _C, cuda, distributed, profiler  # noqa: E402,F401
