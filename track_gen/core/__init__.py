"""The ground floor: what every layer of track_gen shares (internal).

errors, checks (the one error rule), tunable (one declaration per field), exec
(capture state, streams, graph caches, the conditional regeneration), budget (the
allocation budget), layout (the kernel layout choice), extents (the coordinate
range), component and capture_check (the course component contract). Nothing here
imports from another part of the package."""
