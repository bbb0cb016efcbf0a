"""What a user installs: the `centrum` wheel on its own (no source checkout) and the extension archives.

The wheel is built offline from ``host/`` and installed into a fresh venv whose only extra path is the test
environment's site-packages (for numpy, lxml, Playwright: nothing is downloaded), then run from a folder outside
the repository. The archives are built with the pinned web-ext (``npm run build``, as the README says).
"""

from __future__ import annotations

import importlib.metadata
import io
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import centrum
from centrum.evaluation.peers import READABILITY_PACKAGE, READABILITY_VERSION
from centrum.native.framing import encode_message, read_response
from centrum.native.install import EXTENSION_ID, GECKO_ID, HOST_NAME

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "extension"
SAMPLE = REPO / "tests" / "fixtures" / "sample" / "article.html"
ARTICLE_START = "The ferry terminal that stood empty on the north pier"


def node_bin(name: str) -> Path:
    """A tool from the repository's pinned node_modules (.ci/run runs `npm ci`); missing is a failure."""
    modules = Path(os.environ.get("CENTRUM_NODE_MODULES") or REPO / "node_modules")
    path = modules / ".bin" / name
    if not path.exists():
        pytest.fail(f"{path} not found: run `npm ci` in the repository (.ci/run does) to install the pinned tools")
    return path


# ---- versions ---------------------------------------------------------------------------------------------------
def test_one_version_for_package_manifest_and_cli() -> None:
    manifest = json.loads((EXTENSION / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["version"] == centrum.__version__
    out = subprocess.run([sys.executable, "-m", "centrum.cli", "--version"], capture_output=True, text=True,
                         timeout=60)
    assert out.stdout.strip() == f"centrum {centrum.__version__}"
    package = json.loads((REPO / "package.json").read_text(encoding="utf-8"))
    assert package["devDependencies"][READABILITY_PACKAGE] == READABILITY_VERSION


# ---- the wheel --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(venv, wheel): the package built as a wheel and installed into a new venv, away from the checkout."""
    base = tmp_path_factory.mktemp("wheel")
    # Built from a copy of the folders it needs (the package's assets link into extension/ and manifest-templates/),
    # so that no build/ left in the checkout can leak stale files in.
    src = base / "src"
    for folder in ("host", "extension", "manifest-templates"):
        shutil.copytree(REPO / folder, src / folder, symlinks=True,
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                          str(base / "dist"), str(src / "host")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    wheels = list((base / "dist").glob("centrum-*.whl"))
    assert len(wheels) == 1, wheels
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    out = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "--no-index",
                          str(wheels[0])], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    # Dependencies come from this environment's site-packages, appended after the venv's own (a plain path
    # entry, so the checkout's editable-install hook in there is not run and cannot shadow the wheel).
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    yield venv, wheels[0]


def run_in(venv: Path, cwd: Path, *args: str, env: dict[str, str] | None = None,
           timeout: float = 180) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CENTRUM_COLLECTOR")}
    return subprocess.run([str(venv / "bin" / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**clean, **(env or {})})


def test_wheel_carries_the_extension_files_byte_for_byte(wheel_venv: tuple[Path, Path]) -> None:
    _, wheel = wheel_venv
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert z.read("centrum/assets/collect.js") == (EXTENSION / "src" / "collect.js").read_bytes()
        # The reader's allow-list, read by the host's cleaner (issue #24): one data file for both.
        assert z.read("centrum/assets/allowlist.json") == (EXTENSION / "src" / "allowlist.json").read_bytes()
        for template in ("chromium.json", "firefox.json"):  # copies of the repository's manifest-templates/
            assert z.read(f"centrum/assets/host-manifests/{template}") == (REPO / "manifest-templates" / template
                                                                           ).read_bytes()
        from centrum.algorithms.ensemble import BLOCK_WEIGHTS_NAME, WEIGHTS_NAME

        for model in (WEIGHTS_NAME, BLOCK_WEIGHTS_NAME):  # the default models, in LightGBM's own format
            assert f"centrum/weights/{model}.lgb.txt" in names
        assert not any(n.startswith(("tests/", "extension/")) for n in names)


def test_installed_wheel_runs_from_any_directory(wheel_venv: tuple[Path, Path], tmp_path: Path) -> None:
    venv, _ = wheel_venv
    where = run_in(venv, tmp_path, "python", "-c", "import centrum; print(centrum.__file__)")
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(venv), f"not the wheel's package: {where.stdout}"
    page = tmp_path / "page.html"
    shutil.copy(SAMPLE, page)
    out = run_in(venv, tmp_path, "centrum", "extract", "page.html")
    assert out.returncode == 0, out.stderr[-3000:]
    assert ARTICLE_START in out.stdout and "We use cookies" not in out.stdout


def test_installed_wheel_registers_a_host_that_answers(wheel_venv: tuple[Path, Path], tmp_path: Path) -> None:
    venv, _ = wheel_venv
    env = {"CENTRUM_HOME": str(tmp_path / "home")}
    profile = tmp_path / "profile"
    out = run_in(venv, tmp_path, "centrum", "install-host", "--browser", "chromium", "--user-data-dir", str(profile),
                 env=env)
    assert out.returncode == 0, out.stderr
    manifest = json.loads((profile / "NativeMessagingHosts" / f"{HOST_NAME}.json").read_text(encoding="utf-8"))
    assert manifest["allowed_origins"] == [f"chrome-extension://{EXTENSION_ID}/"]
    launcher = Path(manifest["path"])
    assert launcher.is_absolute() and str(venv) in launcher.read_text(encoding="utf-8")
    # Start the installed launcher as the browser does and ping it over native-messaging framing.
    proc = subprocess.run([str(launcher), f"chrome-extension://{EXTENSION_ID}/"],
                          input=encode_message({"v": 1, "id": "p1", "type": "ping"}), capture_output=True,
                          timeout=60, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    answer, _ = read_response(io.BytesIO(proc.stdout))
    assert answer["status"] == "ok" and answer["id"] == "p1", answer
    assert answer["result"]["host"] == centrum.__version__ and answer["result"]["default"] == "ensemble"
    # The doctor agrees, and names the problem once the manifest no longer allows the extension.
    ok = run_in(venv, tmp_path, "centrum", "doctor", "--browser", "chromium", "--user-data-dir", str(profile), env=env)
    assert ok.returncode == 0 and "chromium: ok" in ok.stdout, ok.stdout + ok.stderr
    manifest["allowed_origins"] = ["chrome-extension://someoneelse/"]
    (profile / "NativeMessagingHosts" / f"{HOST_NAME}.json").write_text(json.dumps(manifest), encoding="utf-8")
    bad = run_in(venv, tmp_path, "centrum", "doctor", "--browser", "chromium", "--user-data-dir", str(profile),
                 env=env)
    assert bad.returncode == 1 and EXTENSION_ID in bad.stdout and "allowed_origins" in bad.stdout


# ---- the core install ------------------------------------------------------------------------------------------
CORE_LIMIT_MB = 150  # issue #45: `pip install ./host` in a fresh venv
OPTIONAL = ("lightgbm", "scipy", "playwright", "pyarrow", "ray", "fastwarc", "matplotlib", "trafilatura")


def installed_distributions(extras: tuple[str, ...] = ()) -> list[importlib.metadata.Distribution]:
    """The installed distributions `pip install './host[extras]'` brings: pyproject's dependencies and those of
    ``extras``, recursively (each requirement's own extras included)."""
    project = tomllib.loads((REPO / "host" / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    todo = [(r, "") for r in project["dependencies"]]
    todo += [(r, "") for extra in extras for r in project["optional-dependencies"][extra]]
    seen: set[tuple[str, str]] = set()
    out: dict[str, importlib.metadata.Distribution] = {}
    while todo:
        spec, extra = todo.pop()
        req = Requirement(spec)
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        for wanted in ("", *sorted(req.extras)):
            if (name, wanted) not in seen:
                seen.add((name, wanted))
                dist = out.setdefault(name, importlib.metadata.distribution(req.name))
                todo += [(r, wanted) for r in dist.requires or []]
    return list(out.values())


def make_venv(wheel: Path, venv: Path, extras: tuple[str, ...] = ()) -> Path:
    """A fresh venv (pip included) holding the wheel and, copied from this environment's install, exactly the
    distributions `pip install './host[extras]'` installs: that install, offline."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    for dist in installed_distributions(extras):
        root = Path(str(dist.locate_file("")))
        for f in dist.files or []:
            if f.parts[0] == ".." or not (root / f).is_file():
                continue  # console scripts and files removed since install
            (site / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / f, site / f)
    out = subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    missing = subprocess.run([str(py), "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 0, missing.stdout + missing.stderr  # every requirement is there
    return venv


@pytest.fixture(scope="module")
def core_venv(wheel_venv: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip install ./host`: the core install."""
    return make_venv(wheel_venv[1], tmp_path_factory.mktemp("core") / "venv")


def test_core_install_is_small_and_extracts_without_rendering(core_venv: Path, tmp_path: Path) -> None:
    size = sum(os.lstat(os.path.join(d, f)).st_size for d, _, files in os.walk(core_venv) for f in files)
    assert size <= CORE_LIMIT_MB * 1e6, f"core venv is {size / 1e6:.0f} MB"
    found = run_in(core_venv, tmp_path, "python", "-c",
                   f"import importlib.util as u; print([m for m in {OPTIONAL!r} if u.find_spec(m)])")
    assert found.stdout.strip() == "[]", found.stdout + found.stderr
    page = tmp_path / "page.html"
    shutil.copy(SAMPLE, page)
    out = run_in(core_venv, tmp_path, "centrum", "extract", "--no-render", "page.html")
    assert out.returncode == 0, out.stderr[-3000:]
    assert ARTICLE_START in out.stdout and "We use cookies" not in out.stdout


def test_the_render_extra_makes_rendering_work(wheel_venv: tuple[Path, Path], tmp_path: Path) -> None:
    """`pip install './host[render]'`: the sample page rendered in headless Chromium (Debian's, as everywhere)."""
    venv = make_venv(wheel_venv[1], tmp_path / "venv", ("render",))
    page = tmp_path / "page.html"
    shutil.copy(SAMPLE, page)
    out = run_in(venv, tmp_path, "centrum", "extract", "page.html")
    assert out.returncode == 0, out.stderr[-3000:]
    assert ARTICLE_START in out.stdout and "We use cookies" not in out.stdout


def test_core_host_answers_ping_and_the_ensemble(core_venv: Path, tmp_path: Path) -> None:
    """The core install's registered host, started as a browser starts it, answers a ping and the default algorithm
    (the ensemble, LightGBM trees run by numpy) on a golden page's snapshot with the golden answer."""
    from helpers import goldens

    env = {"CENTRUM_HOME": str(tmp_path / "home")}
    profile = tmp_path / "profile"
    out = run_in(core_venv, tmp_path, "centrum", "install-host", "--browser", "chromium", "--user-data-dir",
                 str(profile), env=env)
    assert out.returncode == 0, out.stderr
    launcher = json.loads((profile / "NativeMessagingHosts" / f"{HOST_NAME}.json").read_text(encoding="utf-8"))["path"]
    slug = goldens.slugs()[0]
    raw = goldens.read_raw(slug)
    request = encode_message({"v": 1, "id": "p1", "type": "ping"}) + encode_message(
        {"v": 1, "id": "x1", "type": "extract", "snapshot": raw})
    proc = subprocess.run([launcher, f"chrome-extension://{EXTENSION_ID}/"], input=request, capture_output=True,
                          timeout=180, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    stream = io.BytesIO(proc.stdout)
    ping, _ = read_response(stream)
    assert ping["status"] == "ok" and ping["result"]["default"] == "ensemble", ping
    answer, _ = read_response(stream)
    assert answer["status"] == "ok", answer
    want = json.loads((goldens.PAGES / slug / goldens.EXPECTED).read_text(encoding="utf-8"))["ensemble"]
    assert answer["result"]["algorithm"] == "ensemble" and answer["result"]["nodes"] == want["nodes"]


def test_core_host_answers_the_button(core_venv: Path, tmp_path: Path, playwright: object,
                                      fixture_server: str) -> None:
    """A press in Chromium with the extension, answered by the core install's host (the default algorithm)."""
    from helpers.chromium_ui import launch, wait_stage

    profile, home = tmp_path / "profile", tmp_path / "home"
    profile.mkdir()
    out = run_in(core_venv, tmp_path, "centrum", "install-host", "--browser", "chromium", "--user-data-dir",
                 str(profile), env={"CENTRUM_HOME": str(home)})
    assert out.returncode == 0, out.stderr
    for session in launch(playwright, profile, home):  # type: ignore[arg-type]
        page = session.open(f"{fixture_server}sample/article.html")
        session.first_press(page)  # the first press after the browser started (Session.first_press)
        wait_stage(session, page, "highlight")
        marked = page.evaluate("() => [...document.querySelectorAll('[data-centrum-main]')].map(e => e.innerText)")
        assert any(ARTICLE_START in text for text in marked), marked


# ---- the extension archives -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def archives(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Both archives, built by the README's command into a copy of the repository's build setup."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm not installed: the extension packages are built with it (apt-get install npm)")
    node_bin("web-ext")
    out = subprocess.run([npm, "run", "--silent", "build"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    version = json.loads((EXTENSION / "manifest.json").read_text(encoding="utf-8"))["version"]
    found = {kind: REPO / "dist" / f"centrum-{kind}-{version}.zip" for kind in ("firefox", "chromium")}
    for path in found.values():
        assert path.exists(), f"npm run build wrote no {path}"
    return found


def tracked_extension_files() -> set[str]:
    out = subprocess.run(["git", "ls-files", "extension"], cwd=REPO, capture_output=True, text=True, check=True)
    return {line.removeprefix("extension/") for line in out.stdout.splitlines() if line}


@pytest.mark.parametrize("kind", ["firefox", "chromium"])
def test_archive_holds_exactly_the_extension_tree(archives: dict[str, Path], kind: str) -> None:
    with zipfile.ZipFile(archives[kind]) as z:
        names = {n for n in z.namelist() if not n.endswith("/")}
    assert names == tracked_extension_files()
    assert "manifest.json" in names and "src/collect.js" in names
    assert not any("screenshot" in n or n.startswith("tests/") or n.endswith(".py") for n in names)


# One manifest for both browsers needs "background.service_worker" for Chromium; Firefox ignores it and says so.
ALLOWED_LINT_WARNINGS = {"BACKGROUND_SERVICE_WORKER_IGNORED"}


def test_firefox_archive_lints_clean(archives: dict[str, Path], tmp_path: Path) -> None:
    """Mozilla's linter (addons-linter via the pinned web-ext) on the Firefox archive's contents."""
    with zipfile.ZipFile(archives["firefox"]) as z:
        z.extractall(tmp_path / "xpi")
    out = subprocess.run([str(node_bin("web-ext")), "lint", "--source-dir", str(tmp_path / "xpi"), "--output", "json",
                          "--no-config-discovery"], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    start = out.stdout.find("{")
    assert start >= 0, f"web-ext printed no JSON (exit {out.returncode}): {out.stdout[-2000:]} {out.stderr[-2000:]}"
    report = json.loads(out.stdout[start:])
    problems = [(m["code"], m["message"], m.get("file")) for kind in ("errors", "warnings", "notices")
                for m in report[kind] if m["code"] not in ALLOWED_LINT_WARNINGS]
    assert report["summary"]["errors"] == 0 and problems == [], problems
    assert report["metadata"]["id"] == GECKO_ID and report["metadata"]["manifestVersion"] == 3


def test_unpacked_chromium_archive_answers_the_button(archives: dict[str, Path], tmp_path: Path,
                                                     playwright: object, fixture_server: str) -> None:
    from helpers.chromium_ui import install_host, launch, wait_stage

    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(archives["chromium"]) as z:
        z.extractall(unpacked)
    profile, home = tmp_path / "profile", tmp_path / "home"
    profile.mkdir()
    install_host(profile, home)
    for session in launch(playwright, profile, home, extension=unpacked):  # type: ignore[arg-type]
        session.set_storage({"algorithm": "semantic"})
        page = session.open(f"{fixture_server}sample/article.html")
        session.first_press(page)  # the first press after the browser started (Session.first_press)
        wait_stage(session, page, "highlight")
        marked = page.evaluate("() => document.querySelectorAll('[data-centrum-main]').length")
        assert marked == 1
