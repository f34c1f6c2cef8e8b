"""Studies: scripts that measure what the library's courses are like (run as modules from the
repository root, ``python -m studies.<name>``); not part of the installed package."""
