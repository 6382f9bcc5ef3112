"""``amg view``: a read-only browser view of a workspace for the person who owns it.

Pages (one module each, over ``data.Reader``): ``overview``, ``arcs``, ``results``, ``trace``,
``audits``, ``mining``; ``app`` puts them together; ``server`` starts it and ``links`` builds the
deep links other commands print.
"""

_LAZY = {
    "ArcFilter": ("data", None),
    "Reader": ("data", None),
    "launch": ("server", None),
    "viewer_hint": ("links", None),
}


def __getattr__(name: str):
    from .._lazy import resolve

    return resolve(globals(), _LAZY, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = ["ArcFilter", "Reader", "launch", "viewer_hint"]
