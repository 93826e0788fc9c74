"""Home: what the workbench is, which LLM answers, and the backend settings (the entry point, streamlit_app.py, names it "Home")."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.config import BACKENDS
from core.llm import LLMError
from core.llm.endpoint_check import with_endpoint_model
from core.llm.scoring_routes import scoring_note
from core.methods import METHODS, method_class
from ui import icons, owner, safe, state, warmup

st.set_page_config(page_title="Dialogue memory workbench", page_icon=icons.FAVICON, layout="wide")
BACKEND_NOTE = "backend_note"  # what saving the backend settings changed, for the run after st.rerun
warm = warmup.start()  # the shared models load in the background while the visitor reads this page
owner.sidebar(owner.current_owner())
st.title("Dialogue memory workbench")
st.markdown(
    """
Chat with an LLM under different **dialogue memory** methods and compare how consistent and grounded
its answers stay. The methods come from four papers: D-SMART (an OWL knowledge graph of the dialogue
searched by a reasoning tree), SGMem (sentence-graph memory), MCTS commonsense retrieval, and
KG-triple augmentation. Use the pages in the sidebar.
"""
)
st.subheader("Methods available")
st.table([{"method": name, "what it does": method_class(name).description} for name in METHODS])

warmup.render_status(warm)

st.subheader("LLM backend")
settings = state.llm_settings()
st.write(f"Active: **{safe.literal(settings.describe())}**" + (" · API key set" if settings.api_key else ""))
if settings.backend in ("local", "transformers"):
    st.info(
        "The embedded model runs here, offline: by default Qwen2.5-Coder-1.5B-Instruct under llama.cpp "
        "(`small` = SmolLM2-135M; `medium` = Qwen2.5-Coder-0.5B, faster, once installed with "
        "`make install-model KEY=medium`). "
        "Small models follow instructions imperfectly: methods that would ask a strong model for free text "
        "score enumerated options by likelihood and constrain JSON by grammar instead."
    )

if st.button("Check that the backend answers"):
    with st.spinner("Asking the model…"):
        try:
            llm = state.current_llm()
            reply = llm.ping()
            st.success(f"Answered in {reply.seconds:.2f} s: {safe.literal(repr(reply.text))}")
            st.caption(scoring_note(llm))  # our own text: which scoring route, and what it means for the methods
        except LLMError as err:
            st.error(f"The backend does not answer: {safe.literal(str(err))}")

with st.form("backend"):
    backend = st.radio("Backend", list(BACKENDS), index=BACKENDS.index(settings.backend), horizontal=True,
                       format_func={"local": "Embedded (llama.cpp)", "transformers": "Local (transformers)",
                                    "openai": "OpenAI-compatible endpoint"}.get)
    model = st.text_input("Model", value=settings.model,
                          help="Embedded: small, medium or large (the default), or a .gguf path (empty = default). "
                               "Transformers: Hugging Face id or folder (empty = SmolLM2). Endpoint: model name.")
    base_url = st.text_input("Base URL", value=settings.base_url, placeholder="http://localhost:11434/v1 (Ollama), http://localhost:8000/v1 (vLLM)")
    # The key is never shown back: the field starts empty and an empty submit keeps the stored key.
    api_key = st.text_input("API key", value="", type="password", placeholder="•••• (set)" if settings.api_key else "")
    timeout = st.number_input("Timeout per request (s)", min_value=1.0, max_value=600.0, value=float(settings.timeout_s),
                              help="An endpoint that does not answer within this time fails with a message (each request "
                                   "is retried twice first).")
    strong = st.checkbox("Strong model: run the papers' free-text prompts as written", value=settings.is_strong)
    forget = st.checkbox("Forget the stored API key")
    if st.form_submit_button("Apply"):
        key = "" if forget else (api_key or settings.api_key)
        wanted = replace(settings, backend=backend, model=model.strip(), base_url=base_url.strip(), api_key=key,
                         timeout_s=float(timeout), strong=strong)
        try:  # an endpoint without a model takes the one its server lists, or is refused here, not at the first message
            with st.spinner("Asking the server which models it serves…"):
                checked, note = with_endpoint_model(wanted)
        except LLMError as err:
            st.error(f"Not saved: {safe.literal(str(err))}.")
        else:
            state.set_llm_settings(checked)
            if note:
                st.session_state[BACKEND_NOTE] = note  # shown after the rerun
            st.rerun()
if note := st.session_state.pop(BACKEND_NOTE, None):
    st.success(safe.literal(note))

st.subheader("Sentence embedder")
st.caption("Used by chunk RAG, SGMem and every dense retrieval step. Both named models come from PyPI and work offline; "
           "docs/embedders.md compares them. A chat's memory is rebuilt with the new embedder on its next turn.")
with st.form("embedder"):
    from core.embedders import LABELS, NAMED_EMBEDDERS

    current = state.embedder_choice()
    options = list(NAMED_EMBEDDERS) + ["other"]
    pick = st.radio("Embedder", options, index=options.index(current) if current in NAMED_EMBEDDERS else len(NAMED_EMBEDDERS),
                    format_func=lambda o: LABELS.get(o, "Other: a folder or Hugging Face id"), horizontal=True)
    other = st.text_input("Folder or Hugging Face id (for 'other')", value="" if current in NAMED_EMBEDDERS else current)
    if st.form_submit_button("Use this embedder"):
        state.set_embedder_choice(other if pick == "other" else pick)
        st.rerun()
