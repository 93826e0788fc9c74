"""Dependencies point one way: pages and ui use core; core never imports streamlit, and importing
core loads nothing heavy."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_core_never_imports_streamlit():
    offenders = []
    for path in (REPO / "core").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "streamlit" or n.startswith("streamlit.") or n == "ui" or n.startswith("ui.") for n in names):
                offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


def test_importing_core_is_light():
    code = (
        "import sys, core, core.config, core.dialogue, core.store, core.llm, core.methods, core.eval, core.resources, core.vectors, core.text, core.cli\n"
        "heavy = [m for m in ('torch', 'transformers', 'faiss', 'spacy', 'sentence_transformers', 'streamlit') if m in sys.modules]\n"
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""
