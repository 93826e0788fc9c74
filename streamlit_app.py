"""The app's entry point (`streamlit run streamlit_app.py`): names the pages and runs the one asked for.

st.navigation replaces the pages/ folder's automatic list, whose first entry was this file's name
("streamlit app"); here the home page is "Home" and every page keeps its URL (/Chat, /Metrics...)."""

from __future__ import annotations

import streamlit as st

from ui import icons, resources

PAGES = [
    st.Page("pages/0_Home.py", title="Home", icon=icons.HOME, default=True),
    st.Page("pages/1_Chat.py", title="Chat", icon=icons.CHAT, url_path="Chat"),
    st.Page("pages/2_Memory_graph.py", title="Memory graph", icon=icons.MEMORY_GRAPH, url_path="Memory_graph"),
    st.Page("pages/3_Retrieval_comparison.py", title="Retrieval comparison", icon=icons.RETRIEVAL,
            url_path="Retrieval_comparison"),
    st.Page("pages/4_Metrics.py", title="Metrics", icon=icons.METRICS, url_path="Metrics"),
    st.Page("pages/5_Annotation.py", title="Annotation", icon=icons.ANNOTATION, url_path="Annotation"),
    st.Page("pages/6_Compare.py", title="Compare", icon=icons.COMPARE, url_path="Compare"),
]

st.set_page_config(page_title="Dialogue memory workbench", page_icon=icons.FAVICON, layout="wide")
resources.default_store()  # a wrong or unreachable WORKBENCH_DB stops the app here, on every page, with one line naming it
st.navigation(PAGES).run()
