"""The viewer run by ``amg view`` (``streamlit run app.py``): six pages over one workspace.

Every page reads the workspace through ``data.Reader`` (read-only) and keeps what it is showing
in the address bar (its widgets are bound to query parameters), so any view is a link:
``/arcs?arc=ID``, ``/trace?arc=ID&system=NAME&compare=OTHER``, ``/arcs?split=core&system=NAME&
measure=end_contamination&value=yes``. The annotation app (``amg annotate``) is another app and
shows none of this.
"""

from __future__ import annotations

import streamlit as st

TITLES = {
    "overview": "Overview",
    "arcs": "Arcs",
    "results": "Results",
    "trace": "Trace",
    "audits": "Audits",
    "mining": "Mining",
}
ICONS = {
    "overview": ":material/dashboard:",
    "arcs": ":material/forum:",
    "results": ":material/bar_chart:",
    "trace": ":material/timeline:",
    "audits": ":material/fact_check:",
    "mining": ":material/search:",
}


def _page(name: str):
    def run() -> None:
        import importlib

        module = importlib.import_module(f"agentmemgate.view.{name}")
        from agentmemgate.errors import AmgError

        try:
            module.render()
        except AmgError as e:  # a bad link or a workspace that is gone: one line, no traceback
            st.error(str(e).splitlines()[0] if str(e) else type(e).__name__)

    run.__name__ = name
    return run


def main(default: str = "overview") -> None:
    """Build the navigation; ``default`` is the page served at ``/`` (tests open any page)."""
    from agentmemgate.view import _ui

    st.set_page_config(page_title="amg view", layout="wide")
    for name, title in TITLES.items():
        _ui.PAGES[name] = st.Page(
            _page(name), title=title, icon=ICONS[name], url_path=name, default=name == default
        )
    st.navigation(list(_ui.PAGES.values()), position="top").run()


if __name__ == "__main__":
    main()
