"""A browser-free Streamlit client: speaks the app's websocket protocol (protobuf BackMsg /
ForwardMsg on /_stcore/stream) as the frontend does, so tests and the load runner can open pages
and send chat messages to a real `streamlit run` server without Chromium.

    with StreamlitClient(url, cookies={"workbench_owner": token}) as c:
        run = c.open("Chat")                   # a script run of the Chat page
        run = c.chat("Hello")                  # type into the chat input and press Enter
        run.texts, run.errors, run.seconds     # what the page showed, and how long the run took

Only what the workbench's pages need is implemented: widget ids are learnt from the deltas, and a
run is over at the first `script_finished` that is not followed by a rerun.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from urllib.parse import urlparse

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetStates
from websockets.sync.client import connect

# ScriptFinishedStatus values that end a run; FINISHED_EARLY_FOR_RERUN (st.rerun) does not.
_DONE = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_WITH_COMPILE_ERROR, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


@dataclass
class Run:
    seconds: float = 0.0
    texts: list[str] = field(default_factory=list)  # markdown, captions, alerts, code, in order
    errors: list[str] = field(default_factory=list)  # st.error bodies and exceptions
    widgets: dict[str, str] = field(default_factory=dict)  # "chat_input" / "button:Label" -> widget id
    options: dict[str, list[str]] = field(default_factory=dict)  # "selectbox:Label" -> its options as shown
    reruns: int = 0
    # (seconds into the run, element kind, text) of every text drawn, the runs an st.rerun replaced
    # included (kinds: markdown, alert, code, text, heading): `texts` is what the
    # page shows at the end, this is what the person saw as it came (a new conversation's reply streams in
    # the first run, and the rerun that follows draws it again)
    timeline: list[tuple[float, str, str]] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(self.texts)


class StreamlitClient:
    def __init__(self, url: str, cookies: dict[str, str] | None = None, timeout_s: float = 300) -> None:
        parsed = urlparse(url)
        self.url, self.timeout_s = url, timeout_s
        headers = {"Origin": url}
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        self.ws = connect(f"ws://{parsed.netloc}/_stcore/stream", subprotocols=["streamlit"],
                          additional_headers=headers, max_size=None, open_timeout=30)
        self.page = ""
        self.last = Run()
        self.kept: dict[str, object] = {}  # widget id -> WidgetState of values set on this page (sent every run)

    # -- protocol ------------------------------------------------------------------------------------
    def _send(self, widgets: list | None = None) -> Run:
        """A rerun with the page's kept widget values plus `widgets` (one-shot triggers), as the
        frontend sends the whole widget state each time."""
        states = {**self.kept, **{w.id: w for w in widgets or []}}
        state = ClientState(query_string="", page_name=self.page, widget_states=WidgetStates(widgets=list(states.values())))
        self.ws.send(BackMsg(rerun_script=state).SerializeToString())
        return self._collect()

    def _collect(self) -> Run:
        run, t0 = Run(), time.perf_counter()
        deadline = t0 + self.timeout_s
        while True:
            raw = self.ws.recv(timeout=max(0.1, deadline - time.perf_counter()))
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                run.widgets.clear()
                run.options.clear()
                run.texts.clear()
                run.errors.clear()
            elif kind == "delta":
                self._read_delta(msg.delta, run, time.perf_counter() - t0)
            elif kind == "script_finished":
                if msg.script_finished in _DONE:
                    run.seconds = time.perf_counter() - t0
                    self.last = run
                    return run
                run.reruns += 1  # st.rerun: the server starts the next run by itself

    @staticmethod
    def _read_delta(delta, run: Run, at: float) -> None:
        if delta.WhichOneof("type") != "new_element":
            return
        el = delta.new_element
        kind = el.WhichOneof("type")
        body = getattr(el, kind)
        if kind in ("markdown", "alert", "code", "text", "heading"):
            text = getattr(body, "body", "") or getattr(body, "code_text", "")
            run.texts.append(text)
            run.timeline.append((at, kind, text))
            if kind == "alert" and body.format == body.ERROR:
                run.errors.append(body.body)
        elif kind == "exception":
            run.errors.append(f"{body.type}: {body.message}")
        if hasattr(body, "id") and body.id:
            label = getattr(body, "label", "") or getattr(body, "placeholder", "")
            run.widgets[kind if kind == "chat_input" else f"{kind}:{label}"] = body.id
            if kind == "selectbox":
                run.options[f"{kind}:{label}"] = list(body.options)

    # -- what a user does ------------------------------------------------------------------------------
    def open(self, page: str = "") -> Run:
        """Navigate to a page ("" = home, "Chat", "Memory_graph", ...): a fresh run of it."""
        self.page = page
        self.kept.clear()
        return self._send()

    def pick(self, label: str, option: str) -> Run:
        """Choose `option` (its text as shown) in the select box `label`; kept for later runs."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        state = WidgetState(id=self._widget("selectbox", label), string_value=option)
        self.kept[state.id] = state
        return self._send()

    def chat(self, text: str) -> Run:
        """Type `text` into the page's chat input and press Enter; the run (and its reruns) until done."""
        from streamlit.proto.Common_pb2 import ChatInputValue
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        widget = self.last.widgets.get("chat_input")
        if widget is None:
            raise RuntimeError(f"no chat input on page {self.page!r}")
        return self._send([WidgetState(id=widget, chat_input_value=ChatInputValue(data=text))])

    def submit(self, button: str, **values) -> Run:
        """Press `button` (a form's submit button or a plain one) with `values` for the page's
        widgets, by label: str -> text input, float -> number input, bool -> checkbox."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        states = [WidgetState(id=self._widget("button", button), trigger_value=True)]
        for label, value in values.items():
            if isinstance(value, bool):
                states.append(WidgetState(id=self._widget("checkbox", label), bool_value=value))
            elif isinstance(value, float):
                states.append(WidgetState(id=self._widget("number_input", label), double_value=value))
            else:
                states.append(WidgetState(id=self._widget("text_input", label), string_value=str(value)))
        return self._send(states)

    def _widget(self, kind: str, label: str) -> str:
        try:
            return self.last.widgets[f"{kind}:{label}"]
        except KeyError:
            raise RuntimeError(f"no {kind} {label!r} on page {self.page!r}; widgets: {sorted(self.last.widgets)}") from None

    def close(self) -> None:
        self.ws.close()

    def __enter__(self) -> "StreamlitClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
