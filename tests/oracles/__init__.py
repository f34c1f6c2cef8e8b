"""Independent NumPy oracles shared by several test modules (not tests themselves)."""
