"""A report as one self-contained HTML page (``--html``): the same Markdown the report writes,
rendered to HTML, with its figures embedded, so it opens from a mail or a paper's supplement with
no server and no network.

The page is rendered from the report's own Markdown, so its tables hold the same numbers, each
with its n and interval, and there is one place per report that decides what it says. The
Markdown goes through markdown-it-py (CommonMark with tables), kept strict because report text
comes from arcs, answers, corpora, judges' rationales and system names:

- raw HTML in the text is shown as text, never passed through;
- links, autolinks and link definitions are off: no text becomes a link or goes missing;
- an image is kept only when it names a PNG file of the report's own folder, and is then
  embedded as a base64 data URI; any other image reads as the Markdown that was written;
- a Content-Security-Policy allows no script, no frame and no fetch, only inline styles and
  data-URI images, so even a rendering slip could neither execute nor call out.

Figures are the PNGs the report already draws, embedded as they are: the page shows the same
pixels as the Markdown's figures, needs no second rendering, and puts no report text into markup
(an inline SVG would carry system and level names as SVG text).
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from urllib.parse import unquote

from .atomic import write_text_atomic

# No script, frame, font, fetch or form; styles only from the page itself, images only embedded.
_CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'"
)
_STYLE = """
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
       color: #1f2328; margin: 0 auto; padding: 1.5em 2em 4em; max-width: 78em; }
h1 { font-size: 1.7em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
h2 { font-size: 1.3em; margin-top: 2em; border-bottom: 1px solid #d0d7de; padding-bottom: .2em; }
h3 { font-size: 1.1em; margin-top: 1.5em; }
table { border-collapse: collapse; margin: .8em 0 1.2em; display: block; overflow-x: auto;
        font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: .3em .6em; vertical-align: top; text-align: left; }
th { background: #f6f8fa; }
tr:nth-child(even) td { background: #fafbfc; }
code { font: .9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
       background: #f3f4f6; padding: .1em .3em; border-radius: 3px; overflow-wrap: anywhere; }
img { max-width: 100%; height: auto; display: block; margin: .5em 0 1.5em; }
li { margin: .2em 0; }
""".strip()


def _parser():
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    return md.enable("table").disable(["link", "autolink", "reference"])


def _embed(tokens, figures: Path | None) -> None:
    """Each image that names a PNG in ``figures`` becomes a data URI; any other reads as text."""
    for tok in tokens:
        if tok.type != "inline" or not tok.children:
            continue
        for i, child in enumerate(tok.children):
            if child.type != "image":
                continue
            src = unquote(str(child.attrs.get("src", "")))
            path = figures / src if figures is not None else None
            if (
                path is not None
                and src == Path(src).name
                and src.lower().endswith(".png")
                and path.is_file()
            ):
                data = base64.b64encode(path.read_bytes()).decode("ascii")
                child.attrs["src"] = f"data:image/png;base64,{data}"
            else:
                child.type, child.tag, child.attrs, child.children = "text", "", {}, None
                child.content = f"![{child.content}]({src})"
            tok.children[i] = child


def _title(tokens) -> str:
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and i + 1 < len(tokens):
            return tokens[i + 1].content
    return "Report"


def report_html(markdown: str, figures: Path | None = None) -> str:
    """The page for a report's Markdown; images named in it are read from the folder ``figures``."""
    md = _parser()
    tokens = md.parse(markdown)
    _embed(tokens, figures)
    body = md.renderer.render(tokens, md.options, {})
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"generator\" content=\"agentmemgate\">\n"
        f"<title>{html.escape(_title(tokens))}</title>\n<style>\n{_STYLE}\n</style>\n"
        f"</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n"
    )


def write_report_html(markdown: str, path: Path, figures: Path | None = None) -> Path:
    """Write ``report_html`` to ``path`` atomically (figures default to ``path``'s folder)."""
    return write_text_atomic(
        path, report_html(markdown, path.parent if figures is None else figures)
    )
