"""The app's HTML page with the server's address written in, so a page opened by its own address
(`/Chat`, a reload, a new tab, a link) makes no failed request.

Streamlit's browser code does not know where the server's root is: at `/Chat` it first asks
`/Chat/_stcore/health` and `/Chat/_stcore/host-config`, gets two 404s (each a "Failed to load
resource" error in the console), then asks `/_stcore/...` (Streamlit issue #7074, open). It reads
the root from `window.__streamlit.BACKEND_BASE_URL` when a page sets it, and then asks only there.
`install()` makes the server answer a page's address (its single-page fallback) with a copy of
Streamlit's index.html that sets it; the root address still gets Streamlit's own file (it asks no
other address first). `python -m ui.serve` installs it before the server starts.

It replaces a function of Streamlit's server (`create_streamlit_static_handler`, Streamlit
1.67); where that is missing or the page has no `<head>`, nothing is changed and `install()` says
why, so the app still starts (with the two 404s on a page's address).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

_MARK = "<head>"


def page_with_root(html: str, base_url: str | None) -> str:
    """Streamlit's index.html with a script, first in <head>, that names the server's root."""
    root = "/" + (base_url or "").strip("/")
    script = ("<script>window.__streamlit = Object.assign(window.__streamlit || {}, "
              f"{{BACKEND_BASE_URL: window.location.origin + {json.dumps(root)}}});</script>")
    return html.replace(_MARK, _MARK + script, 1)


def install() -> str:
    """Serve page addresses with the root written in; returns a line saying what was done."""
    try:
        from streamlit.web.server.starlette import starlette_static_routes as routes
    except ImportError as err:
        return f"page addresses keep Streamlit's page ({err})"
    original = getattr(routes, "create_streamlit_static_handler", None)
    if original is None:
        return "page addresses keep Streamlit's page (this Streamlit has no create_streamlit_static_handler)"
    if getattr(original, "with_root", False):
        return "page addresses already name the server's root"

    def with_root(directory: str, base_url: str | None):
        handler = original(directory=directory, base_url=base_url)
        index = Path(getattr(handler, "_index_path", ""))
        html = index.read_text(encoding="utf-8") if index.is_file() else ""
        if _MARK not in html:
            return handler  # another Streamlit layout: its own page, unchanged
        folder = Path(tempfile.mkdtemp(prefix="workbench-page-"))
        (folder / "index.html").write_text(page_with_root(html, base_url), encoding="utf-8")
        handler._index_path = str(folder / "index.html")
        return handler

    with_root.with_root = True
    routes.create_streamlit_static_handler = with_root
    return "page addresses name the server's root (no 404s from Streamlit's probes)"
