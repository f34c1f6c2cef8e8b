"""``track-gen preview --config FILE``: any file content (bytes, any JSON) is a one-line error
with exit code 2, or a preview; never a traceback."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from track_gen.cli import main

from .support.strategies import examples

pytestmark = pytest.mark.fuzz  # the fuzz suite: pytest -m fuzz

JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
KEYS = ["family", "seed", "config", "params", "randomize", "generator", "num_envs"]


def _run(tmp_path, content: bytes) -> int:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    out = tmp_path / "p.png"
    return main(["preview", "--config", str(path), "-o", str(out), "--no-progress"])


@settings(max_examples=examples(40), deadline=None)
@given(
    doc=st.one_of(
        JSON,
        st.dictionaries(st.sampled_from(KEYS), JSON, max_size=4),
        st.builds(lambda d: {"family": "track", "config": d}, JSON),
    )
)
def test_any_json_settings(tmp_path_factory, doc):
    code = _run(tmp_path_factory.mktemp("cfg"), json.dumps(doc).encode())
    assert code in (0, 2)


@settings(max_examples=examples(40), deadline=None)
@given(raw=st.one_of(st.binary(max_size=64), st.sampled_from([b"[" * 5000, b'{"a":' * 3000])))
def test_any_bytes(tmp_path_factory, raw):
    assert _run(tmp_path_factory.mktemp("cfg"), raw) in (0, 2)
