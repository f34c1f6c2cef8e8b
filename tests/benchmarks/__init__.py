"""Tests of the scripts of ``benchmarks/``: each runs at a toy size and prints its rows."""
