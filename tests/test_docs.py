"""The docs stay true to the code: generated field tables are current, local links resolve and
every declared field has a meaning. (CI builds the site itself with ``mkdocs build --strict``.)"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from track_gen import GateGenConfig, SamplerConfig, TrackGenConfig
from track_gen.envs import RaceConfig

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md")) + [
    ROOT / name for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md")
]

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _load_gen_fields():
    spec = importlib.util.spec_from_file_location("gen_fields", DOCS / "gen_fields.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _local_links(page: Path) -> list[str]:
    text = _CODE.sub("", _FENCE.sub("", page.read_text(encoding="utf-8")))
    out = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL (https:, mailto:) or an anchor on the same page
        out.append(target)
    return out


def test_fields_page_is_current():
    gen = _load_gen_fields()
    stale = "docs/reference/fields.md is stale: run python docs/gen_fields.py"
    assert gen.render() == gen.OUT.read_text(encoding="utf-8"), stale
    assert gen.main(["--check"]) == 0, stale


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_local_links_resolve(page):
    assert page.exists(), page
    broken, outside = [], []
    for target in _local_links(page):
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.exists():
            broken.append(target)
        elif DOCS in page.parents and DOCS not in path.parents:
            outside.append(target)  # the site holds docs/ only: such a link breaks there
    assert not broken, f"{page.relative_to(ROOT)}: links to missing files: {broken}"
    assert not outside, f"{page.relative_to(ROOT)}: links out of docs/: {outside}"


def test_link_finder_sees_links(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        '[a](x.md) [b](../y.py "title") [c](https://e.org) [d](#h) `[e](no.md)`\n'
        "```\n[f](fenced.md)\n```\n![g](sub/w.png) [h](sub/w.md#part)\n",
        encoding="utf-8",
    )
    assert _local_links(page) == ["x.md", "../y.py", "sub/w.png", "sub/w.md#part"]


@pytest.mark.parametrize("config", [SamplerConfig, TrackGenConfig, GateGenConfig, RaceConfig])
def test_every_field_has_a_meaning(config):
    missing = [t.field for t in config.__tunables__ if not str(t.doc).strip()]
    assert not missing, f"{config.__name__}: fields without a doc: {missing}"


def test_component_fields_have_a_meaning():
    gen = _load_gen_fields()
    missing = [t.name for t, _ in gen._components() if not str(t.doc).strip()]
    assert not missing, f"course component fields without a doc: {missing}"


def test_component_surfaces_take_the_declared_keywords():
    """Each surface a declaration lists takes the field under its keyword (the alias where
    one is declared; a parameter, or a field of its settings class that its ``**fields``
    take): the page is built from these, with no table of names of its own."""
    gen = _load_gen_fields()
    components = gen._components()
    assert components, "no component declaration found"
    for t, uses in components:
        assert uses, t
        for target, label, keyword in uses:
            assert keyword == t.aliases.get(label, t.name), (t, label)
            assert gen._takes(target, keyword), (t, label, keyword)


def test_fields_page_covers_every_component_field_and_race_config():
    text = (DOCS / "reference" / "fields.md").read_text(encoding="utf-8")
    gen = _load_gen_fields()
    for t, uses in gen._components():
        for _, label, keyword in uses:
            assert f"`{label}({keyword}=)`" in text, (t, label)
    for t, name in zip(RaceConfig.__tunables__, RaceConfig.__field_names__, strict=True):
        if t.kind == "settings":  # one row per field of the nested settings
            for sub in t.settings_class.__field_names__:
                assert f"| `{name}.{sub}` |" in text, (name, sub)
        else:
            assert f"| `{name}` |" in text, name


def _nav_pages() -> list[str]:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    return re.findall(r":\s*([\w/.-]+\.md)\s*$", text.split("\nnav:", 1)[1], re.M)


def test_the_home_page_links_every_page_of_the_site():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    missing = [p for p in _nav_pages() if p != "index.md" and f"]({p}" not in index]
    assert not missing, f"docs/index.md links none of {missing}"


def test_the_readme_links_every_guide_page():
    """Every page of the site but the home page, the sensors' own pages (the overview links
    them) and the API reference (the site renders it)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = [
        p for p in _nav_pages() if p != "index.md" and not p.startswith(("sensors/", "reference/"))
    ]
    missing = [p for p in pages if f"](docs/{p}" not in readme]
    assert not missing, f"README.md links none of {missing}"
