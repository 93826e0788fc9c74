"""Streamlit-only helpers shared by the pages. `core` never imports this package."""
