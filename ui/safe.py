"""User and model text shown as text. st.markdown never runs raw HTML, but it does render Markdown
images (a remote <img> the browser fetches: a tracking pixel, or a way for a prompt-injected reply
to leak the conversation in a URL), links, LaTeX and Streamlit's :colour[...] directives. Chat
messages, titles and evidence therefore go through `literal`, which backslash-escapes every ASCII
punctuation character (CommonMark allows exactly that) and keeps line breaks.

The escape maps each character on its own, so streamed text can be escaped chunk by chunk:
`"".join(map(literal, chunks)) == literal("".join(chunks))` (newlines aside, which are kept too).
"""

from __future__ import annotations

import string

_ESCAPES = str.maketrans({c: "\\" + c for c in string.punctuation} | {"\n": "  \n"})


def literal(text: str) -> str:
    """Markdown source that renders as exactly `text`."""
    return text.translate(_ESCAPES)
