"""Workbench for consistent, grounded LLM dialogue.

Importing `core` is cheap: heavy libraries (torch, transformers, faiss, spaCy) load only
when a function that needs them runs. The package never imports streamlit.
"""

__version__ = "0.1.0"
