"""The audit app's own JavaScript and CSS, kept as files of the package (``page.css``,
``page_script.js``, ``key_script.js``) so they read, diff and lint as what they are.

The scripts are templates: ``%(name)s`` fields are filled with the app's element keys and
settings (never with item data), and a literal ``%`` is written ``%%``."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def asset(name: str) -> str:
    return Path(__file__).with_name(name).read_text(encoding="utf-8")


def script(name: str, **fields: object) -> str:
    """``<script>`` with the file ``name`` filled from ``fields``."""
    return "<script>\n" + asset(name) % fields + "</script>"


def style(name: str) -> str:
    return "<style>\n" + asset(name) + "</style>"
