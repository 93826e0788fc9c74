"""The Chat page's message box: no silent limit, a live character count as the limit nears, and a
paste over the limit kept up to it with a notice.

Streamlit's `st.chat_input(max_chars=...)` ignores a paste that would pass the limit, leaving the
box empty with no word; so the box has no max_chars, a small script counts characters under it,
and the page cuts what arrives (core.limits.cut_message) and says how much it cut."""

from __future__ import annotations

import streamlit as st

from core.limits import MAX_MESSAGE_CHARS, cut_message

NEAR_FRACTION = 0.8  # the count appears from 80% of the limit (3,200 of 4,000 characters)
COUNT_TEST_ID = "chatCharCount"

# Runs in the page (st.html with JavaScript): attaches once to the chat box, re-attaches when
# Streamlit redraws it. It writes only numbers and fixed text (textContent): no user text is echoed.
_COUNTER_JS = """
(() => {
  const LIMIT = %(limit)d, NEAR = %(near)d, ID = "%(test_id)s";
  const fmt = (n) => n.toLocaleString("en-US");
  function attach() {
    const box = document.querySelector('[data-testid="stChatInputTextArea"]');
    if (!box || box.dataset.charCount) return;
    box.dataset.charCount = "1";
    const holder = box.closest('[data-testid="stChatInput"]') || box.parentElement;
    let note = document.querySelector('[data-testid="' + ID + '"]');
    if (!note) {
      note = document.createElement("div");
      note.setAttribute("data-testid", ID);
      note.setAttribute("aria-live", "polite");
      note.style.cssText = "font-size:0.8rem;text-align:right;padding:2px 8px;min-height:1.1rem;";
      holder.insertAdjacentElement("afterend", note);
    }
    const update = () => {
      const n = Array.from(box.value.trim()).length;  // as the page counts: outer whitespace off, characters not UTF-16 units
      const over = n > LIMIT;
      note.style.color = over ? "#c0392b" : "#808495";
      note.textContent = n < NEAR ? "" : over
        ? fmt(n) + " / " + fmt(LIMIT) + " characters: only the first " + fmt(LIMIT) + " will be sent"
        : fmt(n) + " / " + fmt(LIMIT) + " characters";
    };
    box.addEventListener("input", update);
    update();
  }
  attach();
  if (!window.__chatCharCountObserver) {
    window.__chatCharCountObserver = new MutationObserver(attach);
    window.__chatCharCountObserver.observe(document.body, {childList: true, subtree: true});
  }
})();
"""


def counter_script(limit: int = MAX_MESSAGE_CHARS) -> str:
    return "<script>" + _COUNTER_JS % {"limit": limit, "near": int(limit * NEAR_FRACTION), "test_id": COUNT_TEST_ID} + "</script>"


def message_box(*, disabled: bool, notice_key: str, limit: int = MAX_MESSAGE_CHARS) -> str | None:
    """The text sent (cut to `limit`), or None. A cut is announced now and, under `notice_key`, again
    after the rerun that follows the reply."""
    with st.sidebar:  # the script draws nothing itself; the sidebar keeps the chat column free of an empty element
        st.html(counter_script(limit), unsafe_allow_javascript=True)
    # nothing is drawn between taking the message and the page holding it: a rerun stops a run there
    query = st.chat_input(f"Say something (at most {limit:,} characters; a longer paste is cut there)", disabled=disabled)
    if query is None:
        return None
    kept, cut = cut_message(query, limit)
    if cut:
        notice = (f"Your message had {len(query.strip()):,} characters; the limit is {limit:,}. The first {limit:,} were sent "
                  f"and the remaining {cut:,} were cut.")
        st.warning(notice)
        st.session_state[notice_key] = notice
    return kept
