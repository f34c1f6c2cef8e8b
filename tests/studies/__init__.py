"""Tests of the studies of ``studies/``: smoke runs at a toy size, and their pieces against
oracles."""
