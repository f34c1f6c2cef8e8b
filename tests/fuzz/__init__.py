"""Hypothesis fuzz suite: every public input, drawn from the declarations (bounded run time)."""
