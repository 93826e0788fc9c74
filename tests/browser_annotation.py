"""Browser steps on the Annotation page, shared by the browser test and scripts/lab/time_annotation.py.
The app runs with WORKBENCH_AUTH=named, so two browser contexts can open the same workspace."""

from __future__ import annotations

import time

# The item header is "**Item k of N** (... shown) · id ITEM · ..."; the labelling round-trip ends when it names the next item.
_SHOWN = """() => {
  for (const p of document.querySelectorAll('[data-testid="stMarkdownContainer"] p')) {
    const m = p.textContent.match(/^Item \\d+ of \\d+ .*· id (\\S+)/);
    if (m) return m[1];
  }
  return null;
}"""


def sign_in(page, url: str, workspace: str, annotator: str) -> None:
    page.goto(url + "/Annotation")
    page.get_by_label("Workspace name").fill(workspace)
    page.get_by_role("button", name="Open workspace").click()
    box = page.get_by_label("Your annotator name")
    box.wait_for(timeout=60_000)
    box.fill(annotator)
    box.press("Enter")


def shown_item(page) -> str | None:
    return page.evaluate(_SHOWN)


_IDLE = """() => !document.querySelector('[data-testid="stStatusWidget"]')
  && [...document.querySelectorAll('button')].some(b => b.textContent.includes('Not Enough Info'))"""


def wait_item(page, item_id: str, timeout_s: float = 60) -> None:
    """Until the page shows `item_id` and has finished its run (the shortcut buttons are mounted):
    a key pressed before then may find no button to press."""
    deadline = time.time() + timeout_s
    while shown_item(page) != item_id or not page.evaluate(_IDLE):
        assert time.time() < deadline, f"expected item {item_id}, the page shows {shown_item(page)}"
        page.wait_for_timeout(100)


def press(page, key: str, expect_item: str | None = None) -> None:
    """A shortcut key with the focus outside any text field; waits for `expect_item` when given."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)
    if expect_item:
        wait_item(page, expect_item)


# In the page: from the key's keydown event (its timeStamp) to the first DOM change that shows another
# item id ("shown"), and to the end of the run (no status widget, buttons mounted: "idle").
ARM_TIMER = """() => {
  const shown = SHOWN;
  const idle = IDLE;
  const before = shown();
  let t0 = null, tShown = null;
  window.__annTiming = new Promise((resolve) => {
    const onKey = (e) => { if (t0 === null) t0 = e.timeStamp; };
    window.addEventListener('keydown', onKey, true);
    const check = () => {
      const now = shown();
      if (t0 === null || !now || now === before) return;
      if (tShown === null) tShown = performance.now();
      if (idle()) {
        obs.disconnect();
        window.removeEventListener('keydown', onKey, true);
        resolve({shown_ms: tShown - t0, idle_ms: performance.now() - t0, item: now});
      }
    };
    const obs = new MutationObserver(check);
    obs.observe(document.body, {subtree: true, childList: true, characterData: true});
  });
}""".replace("SHOWN", _SHOWN).replace("IDLE", _IDLE)


def timed_press(page, key: str) -> dict:
    """Press `key` (focus outside text fields) and return {"shown_ms", "idle_ms", "item"} measured in the page."""
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.evaluate(ARM_TIMER)
    page.keyboard.press(key)
    return page.evaluate("() => window.__annTiming")
