"""The app's icons. Pages and the sidebar use Streamlit's Material icons, drawn with the icon font
Streamlit serves itself: emoji rendered as empty boxes where no emoji font is installed (a headless
Chromium, many Linux servers). The browser tab's icon is a local image: a Material page icon is a
favicon fetched from fonts.gstatic.com, which an offline machine cannot reach (a failed request on
every page), and an emoji one is drawn with the missing font again."""

from __future__ import annotations

from pathlib import Path

FAVICON = str(Path(__file__).resolve().parent.parent / "assets" / "icon.png")  # three joined nodes: a memory graph
HOME = ":material/psychology:"
CHAT = ":material/chat:"
MEMORY_GRAPH = ":material/hub:"
RETRIEVAL = ":material/manage_search:"
METRICS = ":material/straighten:"
ANNOTATION = ":material/label:"
COMPARE = ":material/balance:"
GOLD = ":material/check_circle:"  # a retrieved sentence that is the benchmark's gold evidence
