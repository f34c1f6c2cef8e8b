"""The pipeline engine (internal): stages' base, params, specs and their checks, the
registry, programs and timers. The public names are re-exported by
``track_gen.pipeline``."""
