"""``track-gen explore``'s JSON endpoints without a browser: a server on a free port in a
thread, urllib requests (shapes, errors, no rebuild for dynamic changes, serialized
requests, exports that rebuild the same batch, Ctrl-C)."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from track_gen import GateGenConfig, TrackGenConfig, TrackGenerator
from track_gen.explore import ExploreState, Settings, make_server, read_settings
from track_gen.explore.settings import track_generator_from_file
from track_gen.explore.state import UNAVAILABLE
from track_gen.pipeline import default_registry

from . import WAIT, Served, request

REPO = Path(__file__).resolve().parents[2]
ROSE = REPO / "examples" / "custom_generator.py"  # a plugin sampler (example.rose)
E = 4


@pytest.fixture()
def served(device):
    s = Served(Settings(config={"generator": "bezier", "num_envs": E}, seed=3), device)
    yield s
    s.close()


def _result_bytes(state) -> bytes:
    r = state.generator.result
    return r.center.numpy().tobytes() + r.valid.numpy().tobytes() + r.generation.numpy().tobytes()


def test_state_lists_samplers_and_declared_ranges(served):
    status, st = served.get("/api/state")
    assert status == 200
    expected = [n for n in default_registry().samplers() if n not in UNAVAILABLE]
    assert st["samplers"] == expected and "polar" in expected
    assert st["generator"] == "bezier" and st["num_envs"] == E and st["seed"] == 3
    # every dynamic parameter of the pipeline, with the declaration's range and default
    gen = served.state.generator
    assert [p["name"] for p in st["params"]] == list(gen.params)
    tun = {t.field: t for t in TrackGenConfig.__tunables__}
    rad = next(p for p in st["params"] if p["name"] == "bezier.rad")
    assert (rad["lo"], rad["hi"], rad["default"]) == (tun["rad"].lo, tun["rad"].hi, 0.4)
    assert rad["field"] == "rad" and rad["randomize"] is None
    for p in st["params"]:
        assert p["slider"][0] >= p["lo"] and p["slider"][1] <= p["hi"]
        assert p["slider"][0] <= p["value"] <= p["slider"][1]
    # static fields: only the pipeline's sections, never a dynamic field
    fields = {f["field"] for f in st["static"]}
    assert {"min_corners", "N_max", "relax_iters"} <= fields
    assert not fields & {"rad", "half_width", "generator", "polar_num_knots", "z_knots"}
    # a numeric field's value is a number, or one of its named choices (the page shows it as
    # text: cpu_threads "auto" once broke the page's first draw)
    for f in st["static"]:
        if f["kind"] in ("int", "float") and f["value"] is not None:
            assert isinstance(f["value"], (int, float)) or f["value"] in f["choices"], f


def test_cpu_threads_is_a_static_field_with_its_named_choice(served):
    status, st = served.get("/api/state")
    threads = next(f for f in st["static"] if f["field"] == "cpu_threads")
    assert threads["value"] == "auto" and threads["choices"] == ["auto"]
    status, out = served.post("/api/generate", {"config": {"cpu_threads": 2}})
    assert status == 200 and out["rebuilt"] is True
    assert served.state.generator.config.cpu_threads == 2
    status, out = served.post("/api/generate", {"config": {"cpu_threads": "auto"}})
    assert status == 200 and served.state.generator.config.cpu_threads == "auto"
    status, out = served.post("/api/generate", {"config": {"cpu_threads": "many"}})
    assert status == 400 and "cpu_threads" in out["error"]


def test_generate_sends_the_batch_geometry(served):
    status, out = served.post("/api/generate", {})
    assert status == 200
    r = served.state.generator.result
    n_max = r.N_max
    center = r.center.numpy().reshape(E, n_max, 3)
    count = r.count.numpy()
    assert out["num_envs"] == E and len(out["courses"]) == E
    assert out["yield"] == pytest.approx(r.valid.numpy().mean())
    for e, c in enumerate(out["courses"]):
        n = int(count[e])
        assert c["env"] == e and c["count"] == n and c["seed"] == 3 + e and c["epoch"] == 0
        for key in ("center", "outer", "inner"):
            assert len(c[key]) == 2 * n
        xy = np.array(c["center"], np.float64).reshape(n, 2)
        np.testing.assert_allclose(xy, center[e, :n, :2], atol=1e-5)
        if c["valid"]:
            # NumPy oracle: the closed polyline's length
            seg = np.diff(np.vstack([xy, xy[:1]]), axis=0)
            assert c["length"] == pytest.approx(np.hypot(*seg.T).sum(), rel=1e-3)
            assert c["fail"] == []
        else:
            assert c["fail"] and c["fail_mask"] != 0
    assert "z" not in out["courses"][0]  # a flat track sends no heights


def test_dynamic_change_keeps_the_generator(served):
    gen, builds = served.state.generator, served.state.builds
    before = served.state.generator.result.center.numpy().copy()
    status, out = served.post("/api/generate", {"params": {"bezier.rad": 0.2}})
    assert status == 200 and out["rebuilt"] is False and out["builds"] == builds
    assert served.state.generator is gen
    np.testing.assert_array_equal(gen.params["bezier.rad"].numpy(), np.full(E, 0.2, np.float32))
    assert not np.array_equal(gen.result.center.numpy(), before, equal_nan=True)
    # the same value through its config field: still no rebuild
    status, out = served.post("/api/generate", {"config": {"rad": 0.6, "edgy": 0.5}})
    assert status == 200 and out["rebuilt"] is False and served.state.generator is gen
    assert gen.params["bezier.edgy"].numpy()[0] == pytest.approx(0.5)
    # a randomizer range of an already-randomized field: no rebuild either
    status, out = served.post("/api/generate", {"randomize": {"bezier.rad": [0.2, 0.6]}})
    assert status == 200 and out["rebuilt"] is True  # the set of randomized fields changed
    gen2 = served.state.generator
    status, out = served.post("/api/generate", {"randomize": {"bezier.rad": [0.3, 0.5]}})
    assert status == 200 and out["rebuilt"] is False and served.state.generator is gen2
    assert gen2.randomizers["bezier.rad"] == (0.3, 0.5)
    drawn = gen2.params["bezier.rad"].numpy()
    assert np.all((drawn >= 0.3) & (drawn <= 0.5))
    # a new seed: reseeded in place
    status, out = served.post("/api/generate", {"seed": 11})
    assert status == 200 and out["rebuilt"] is False and served.state.generator is gen2
    assert [c["seed"] for c in out["courses"]] == [11 + e for e in range(E)]


def test_static_change_rebuilds_and_keeps_epochs(served):
    served.post("/api/next", {"env": 1})
    builds = served.state.builds
    old = served.state.generator
    status, out = served.post("/api/generate", {"config": {"half_width": 0.12}})
    assert status == 200 and out["rebuilt"] is True and out["builds"] == builds + 1
    assert served.state.generator is not old
    assert served.state.generator.config.half_width == pytest.approx(0.12)
    assert [c["epoch"] for c in out["courses"]] == [0, 1, 0, 0]
    # the same (seed, epoch) courses: a fresh generator at those epochs agrees bitwise
    device = served.state.device
    ref = TrackGenerator(TrackGenConfig(num_envs=E, half_width=0.12, device=device), seeds=3)
    ref.seeds.epochs.assign(np.array([0, 1, 0, 0], np.int32))
    ref.generate()
    np.testing.assert_array_equal(
        ref.result.center.numpy(), served.state.generator.result.center.numpy()
    )
    # sampler switch: the new pipeline's parameters
    status, out = served.post("/api/generate", {"config": {"generator": "polar"}})
    assert status == 200 and out["rebuilt"] is True
    names = [p["name"] for p in out["state"]["params"]]
    assert "polar.radial_jitter" in names and "bezier.rad" not in names


def _library_message(fn) -> str:
    try:
        fn()
    except (ValueError, TypeError) as exc:
        return str(exc)
    except KeyError as exc:
        return exc.args[0]
    raise AssertionError("the library accepted the value")


def test_bad_values_answer_400_with_the_library_message(served):
    gen = TrackGenerator(TrackGenConfig(num_envs=E, device=served.state.device))
    cases = [
        ({"params": {"bezier.rad": 5}}, lambda: gen.params.__setitem__("bezier.rad", 5)),
        ({"params": {"bezier.nope": 1}}, lambda: gen.params["bezier.nope"]),
        ({"config": {"half_width": "x"}}, lambda: TrackGenConfig(half_width="x")),
        ({"config": {"num_envs": 0}}, lambda: TrackGenConfig(num_envs=0)),
        ({"config": {"min_corners": 20}}, lambda: TrackGenConfig(min_corners=20)),
        ({"config": {"nope": 1}}, lambda: TrackGenConfig(nope=1)),
    ]
    before = _result_bytes(served.state)
    settings, gen_id = served.state.settings, id(served.state.generator)
    for body, library in cases:
        status, out = served.post("/api/generate", body)
        assert status == 400, body
        assert out["error"] == _library_message(library)
        assert served.state.settings == settings and id(served.state.generator) == gen_id
        assert _result_bytes(served.state) == before
    # the explorer's own refusals, also 400 and naming the value
    for body, needle in [
        ({"config": {"generator": "mix"}}, "track_mix"),
        ({"config": {"num_envs": 100000}}, "at most"),
        ({"config": {"device": "cuda:0"}}, "device"),
        ({"bogus": 1}, "bogus"),
        ({"family": "boats"}, "boats"),
        ({"seed": 2**31}, "int32"),
        ({"seed": True}, "seed must be an int"),
        ({"randomize": {"bezier.rad": [1.0, 0.5]}}, "lo <= hi"),
        ({"randomize": {"rad": [0.1, 0.5]}}, "'<stage>.<field>'"),
        ({"randomize": {"polar.radial_jitter": [0.1, 0.5]}}, "polar.radial_jitter"),
        ([1, 2], "JSON object"),
    ]:
        status, out = served.post("/api/generate", body)
        assert status == 400 and needle in out["error"], (body, out)
    status, out = served.post("/api/generate", raw=b"{not json")
    assert status == 400 and "not JSON" in out["error"]
    status, out = served.get("/api/nothing")
    assert status == 404
    assert _result_bytes(served.state) == before and served.state.settings == settings
    # the server still serves
    assert served.post("/api/generate", {"params": {"bezier.rad": 0.5}})[0] == 200


def test_next_course_for_one_env_and_for_all(served):
    r = served.state.generator.result
    before = r.center.numpy().reshape(E, -1, 3).copy()
    status, out = served.post("/api/next", {"env": 2})
    assert status == 200
    assert [c["epoch"] for c in out["courses"]] == [0, 0, 1, 0]
    after = r.center.numpy().reshape(E, -1, 3)
    for e in (0, 1, 3):  # masked regeneration: the other envs keep their bytes
        assert after[e].tobytes() == before[e].tobytes()
    assert not np.array_equal(after[2], before[2], equal_nan=True)
    status, out = served.post("/api/next", {})
    assert [c["epoch"] for c in out["courses"]] == [1, 1, 2, 1]
    for bad, needle in [(E, "out of range"), (-1, "out of range"), (True, "int"), ("1", "int")]:
        status, out = served.post("/api/next", {"env": bad})
        assert status == 400 and needle in out["error"]
    assert served.post("/api/next", {"envs": 1})[0] == 400


def test_concurrent_requests_are_serialized(served):
    """Twelve clients at once: every answer is 200 and no two regenerations overlap (the
    generator's generate() is wrapped to record how many run at the same time)."""
    results = []
    start = threading.Barrier(12)
    gen = served.state.generator
    inner = gen.generate
    running, overlap = [0], [0]

    def generate(*args, **kwargs):
        running[0] += 1
        overlap[0] = max(overlap[0], running[0])
        time.sleep(0.005)
        try:
            return inner(*args, **kwargs)
        finally:
            running[0] -= 1

    gen.generate = generate

    def client(k):
        start.wait()
        if k % 3 == 0:
            results.append(served.post("/api/next", {"env": k % E})[0])
        elif k % 3 == 1:
            results.append(served.post("/api/generate", {"params": {"bezier.rad": 0.1 * k}})[0])
        else:
            results.append(served.get("/api/batch")[0])

    threads = [threading.Thread(target=client, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT)
    assert results == [200] * 12
    assert served.state.generator is gen and overlap[0] == 1
    assert served.state.requests == 8  # /api/batch is a read, not a request that changes


def test_export_rebuilds_the_same_batch(served, tmp_path):
    body = {
        "config": {"generator": "polar", "half_width": 0.12},
        "params": {"polar.scale": 1.5},
        "randomize": {"polar.angular_jitter": [0.1, 0.3]},
        "seed": 7,
    }
    assert served.post("/api/generate", body)[0] == 200
    status, out = served.get("/api/export")
    assert status == 200 and out["name"] == "track_gen_track_polar"
    doc = out["json"]
    assert doc["config"]["half_width"] == 0.12 and doc["config"]["scale"] == 1.5
    assert doc["randomize"] == {"polar.angular_jitter": [0.1, 0.3]}
    want = served.state.generator.result.center.numpy()
    device = served.state.device
    # JSON: through a file, the library rebuilds it
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    gen = read_settings(path).build(device=device)
    np.testing.assert_array_equal(gen.generate().center.numpy(), want)
    # what preview --config builds from the file
    gen, seed = track_generator_from_file(path, device=device)
    assert seed == 7
    np.testing.assert_array_equal(gen.generate().center.numpy(), want)
    gates = tmp_path / "g.json"
    gates.write_text(json.dumps({**doc, "family": "gates", "config": {"num_envs": 2}}))
    with pytest.raises(ValueError, match="preview draws tracks"):
        track_generator_from_file(gates)
    # ... and TrackGenConfig alone takes the config (no plugin parameters here)
    assert doc["params"] == {}
    TrackGenConfig(**doc["config"])
    # Python: the snippet runs and gives the same batch
    code = out["python"].replace("presets.track(", f"presets.track(device={device!r}, ")
    assert 'gen.params["polar.scale"] = 1.5' in code and "with_randomize" in code
    ns: dict = {}
    exec(compile(code, "<export>", "exec"), ns)
    np.testing.assert_array_equal(ns["result"].center.numpy(), want)


def test_gates_send_frames(device):
    s = Served(Settings(family="gates", config={"num_envs": E, "gate_width": 0.2}), device)
    try:
        status, out = s.post("/api/generate", {"params": {"gate_frames.gate_width": 0.3}})
        assert status == 200 and out["family"] == "gates" and out["rebuilt"] is False
        for c in out["courses"]:
            n = c["count"]
            assert len(c["position"]) == len(c["left"]) == len(c["forward"]) == 2 * n
            assert len(c["z"]) == n
            if c["valid"] and n:
                left = np.array(c["left"]).reshape(n, 2)
                right = np.array(c["right"]).reshape(n, 2)
                pos = np.array(c["position"]).reshape(n, 2)
                # oracle: bars of the gate width, centred on the gate (yaw-only frames)
                np.testing.assert_allclose(np.linalg.norm(left - right, axis=1), 0.3, atol=1e-4)
                np.testing.assert_allclose((left + right) / 2, pos, atol=1e-4)
        # back to tracks and to gates again: family switches rebuild
        status, out = s.post("/api/generate", {"family": "track"})
        assert status == 200 and out["rebuilt"] and "center" in out["courses"][0]
        assert isinstance(s.state.generator.config, TrackGenConfig)
        status, out = s.post("/api/generate", {"family": "gates"})
        assert isinstance(s.state.generator.config, GateGenConfig)
        # a gate width written later must be > 0: the library's rule, a 400
        status, out = s.post("/api/generate", {"params": {"gate_frames.gate_width": 0}})
        assert status == 400 and "gate_width" in out["error"]
    finally:
        s.close()


def test_page_and_foreign_hosts(served):
    with urllib.request.urlopen(served.url, timeout=WAIT) as r:
        html = r.read().decode()
    assert r.status == 200 and "page.js" in html
    for name in ("page.js", "page.css"):
        with urllib.request.urlopen(served.url + name, timeout=WAIT) as r:
            text = r.read().decode()
        assert r.status == 200
        html += text
    assert "http://" not in html and "https://" not in html  # no external asset: offline
    status, out = request(served.url + "api/state", headers={"Host": "evil.example:80"})
    assert status == 403
    # an HTTP/1.0-style request without a Host header is served
    host, port = served.server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=WAIT)
    conn.putrequest("GET", "/api/state", skip_host=True)
    conn.endheaders()
    assert conn.getresponse().status == 200
    conn.close()
    status, out = served.post(
        "/api/generate", {"seed": 1}, headers={"Origin": "http://evil.example"}
    )
    assert status == 403 and served.state.settings.seed == 3


def test_bad_server_arguments():
    state = ExploreState(Settings(config={"num_envs": 1}), device="cpu")
    with pytest.raises(TypeError, match="port"):
        make_server(state, port="80")
    with pytest.raises(ValueError, match="port = 70000"):
        make_server(state, port=70000)
    with pytest.raises(TypeError, match="ExploreState"):
        make_server(object())
    with pytest.raises(ValueError, match="family"):
        Settings(family="boats")


def test_cli_errors(tmp_path, capsys):
    from track_gen.explore.cli import main

    assert main(["--generator", "nope", "--port", "0"]) == 2
    assert "'nope' is not a registered sampler" in capsys.readouterr().err
    assert main(["--config", str(tmp_path / "missing.json")]) == 2
    assert "--config" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text('{"family": "track", "config": {"half_width": -1}}')
    assert main(["--config", str(tmp_path / "bad.json"), "--port", "0"]) == 2
    assert "TrackGenConfig.half_width = -1" in capsys.readouterr().err
    assert main(["--plugin", "no_such_module_xyz"]) == 2
    assert "--plugin no_such_module_xyz" in capsys.readouterr().err


def _inherit_ignored_sigint():
    # what a command started with ``&`` from a non-interactive shell (a CI script) inherits
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize(
    "stop, inherited",
    [(signal.SIGINT, "default"), (signal.SIGINT, "ignored"), (signal.SIGTERM, "default")],
)
def test_command_serves_and_stops_on_ctrl_c(tmp_path, stop, inherited):
    """``python -m track_gen.explore --port 0 --plugin MODULE --generator NAME``: imports the
    plugin, prints its URL, serves the first batch of the plugin's sampler, exits 0 on SIGINT
    (Ctrl-C) or SIGTERM, also when the process inherited SIGINT ignored (a background job of
    a non-interactive shell: before the server installed its own handlers, SIGINT was lost
    there and the server ran on)."""
    (tmp_path / "acme_rose.py").write_text(
        "import importlib.util\n"
        "from track_gen.pipeline import register\n"
        f"spec = importlib.util.spec_from_file_location('rose', {str(ROSE)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "register('acme.rose', module.SamplerRose)\n"
    )
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(tmp_path)}
    argv = ["--port", "0", "-E", "16", "--plugin", "acme_rose", "--generator", "acme.rose"]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "track_gen.explore", *argv],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_inherit_ignored_sigint if inherited == "ignored" else None,
    )
    try:
        line = proc.stdout.readline()
        assert "serving http://127.0.0.1:" in line and "acme.rose" in line, (
            line + proc.stderr.read()
        )
        url = line.split("serving ", 1)[1].split()[0]
        status, out = request(url + "api/batch")
        first = time.perf_counter() - t0
        assert status == 200 and len(out["courses"]) == 16
        assert "acme.rose" in request(url + "api/state")[1]["samplers"]
        print(f"command to first batch served: {first:.2f} s")
        proc.send_signal(stop)
        assert proc.wait(timeout=WAIT) == 0
        assert "stopped" in proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_plugin_sampler_is_offered_with_its_parameters(tmp_path):
    """A registered plugin sampler (the rose of examples/custom_generator.py) shows up with
    its dynamic parameters; one no config field backs travels in the export's "params"."""
    import importlib.util

    from track_gen.pipeline import Registry

    spec = importlib.util.spec_from_file_location("custom_generator", ROSE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    reg = Registry()
    reg.register("example.rose", module.SamplerRose)
    state = ExploreState(Settings(config={"num_envs": E}), device="cpu", registry=reg)
    assert "example.rose" in state.state()["samplers"]
    out = state.change({"config": {"generator": "example.rose"}})
    assert out["rebuilt"]
    names = [p["name"] for p in out["state"]["params"]]
    assert "example.rose.amplitude" in names
    gen = state.generator
    out = state.change({"params": {"example.rose.amplitude": 0.5}})
    assert not out["rebuilt"] and state.generator is gen
    assert gen.params["example.rose.amplitude"].numpy().tolist() == [0.5] * E
    doc = state.export()["json"]
    assert doc["params"] == {"example.rose.amplitude": 0.5}
    assert 'gen.params["example.rose.amplitude"] = 0.5' in state.export()["python"]
    rebuilt = Settings.from_json(doc).build(device="cpu", registry=reg)
    np.testing.assert_array_equal(rebuilt.generate().center.numpy(), gen.result.center.numpy())
    # back to a built-in sampler: the rose's values and randomizers are left behind
    state.change({"randomize": {"example.rose.scale": [0.5, 0.9]}})
    out = state.change({"config": {"generator": "bezier"}})
    assert out["rebuilt"] and state.settings.params == {} and state.settings.randomize == {}
    # a sampler that is not registered: the library's list of samplers in the message
    with pytest.raises(ValueError, match="not a registered sampler"):
        state.change({"config": {"generator": "acme.none"}})


def test_track_gen_command_runs_explore_and_previews_its_settings(tmp_path, capsys):
    """``track-gen explore --help`` and ``track-gen preview --config FILE`` with an exported
    settings file (needs matplotlib for the preview's picture)."""
    pytest.importorskip("matplotlib")
    from track_gen.cli import main

    if main(["explore", "--help"]) != 0 or "track-gen explore" not in capsys.readouterr().out:
        pytest.skip("track_gen.cli does not add the explore subcommand (add_parser) yet")
    state = ExploreState(Settings(config={"generator": "polar", "num_envs": E}, seed=4))
    state.change({"config": {"half_width": 0.12}, "params": {"polar.scale": 1.2}})
    path = tmp_path / "s.json"
    path.write_text(json.dumps(state.export()["json"]))
    png = tmp_path / "p.png"
    argv = ["preview", "--config", str(path), "--device", "cpu", "--calls", "0", "-o", str(png)]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "polar" in out and f"E            {E} (seed 4, half_width 0.12" in out
    assert png.read_bytes()[:4] == b"\x89PNG"
    path.write_text(json.dumps({"family": "gates", "config": {"num_envs": 2}}))
    assert main(["preview", "--config", str(path), "-o", str(png)]) == 2
    assert "preview draws tracks" in capsys.readouterr().err
