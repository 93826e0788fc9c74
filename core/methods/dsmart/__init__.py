"""D-SMART: the Dynamic Structured Memory (an OWL knowledge graph of the dialogue with conflict
pruning) and the methods that answer from it. Submodules load on use (rdflib, spaCy are heavy)."""
