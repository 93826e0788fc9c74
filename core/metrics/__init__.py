"""Metrics: NLI consistency, lexical scores, factuality."""
