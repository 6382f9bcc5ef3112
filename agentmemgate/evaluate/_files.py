"""Atomic report files (``atomic.write_atomic``): a reader, or a kill -9, never sees half a report."""

from ..atomic import write_atomic, write_text_atomic

__all__ = ["write_atomic", "write_text_atomic"]
