"""Running the real servers around the app, for the tests and the load test: a temporary
PostgreSQL, nginx in front of Streamlit replicas, a pool of LLM servers (OpenAI-compatible stubs or
llama.cpp servers), and a browser-free Streamlit client. Not imported by `core` or the app: this is
tooling (it uses Streamlit's protobufs for the client), reached from `python -m core loadtest`."""
