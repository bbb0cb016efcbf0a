"""The code's shape: each idea in one place, no function over 80 lines, no import cycle, the CLI on top.

Read from the sources (Python with ``ast``, the extension's JavaScript with acorn from node_modules when node has it,
else a brace-matching scan), so a copy of a shared mechanism, a long function or a new cycle fails here with where
it is.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "host" / "centrum"
EXTENSION_SRC = REPO / "extension" / "src"
MAX_LINES = 80

# Functions over MAX_LINES that their owners are shrinking now (their issues): (file, function) -> owner. Listed in
# every failure message; an entry whose function got short is reported as stale, and the list is emptied at the end.
KNOWN_LONG: dict[tuple[str, str], str] = {}


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@functools.cache
def _parsed() -> tuple[tuple[Path, ast.Module], ...]:
    """Every module of the package, parsed once for all the checks (they only read the trees)."""
    return tuple((path, ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
                 for path in sorted(PACKAGE.rglob("*.py")))


def modules() -> Iterator[tuple[Path, ast.Module]]:
    yield from _parsed()


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def calls(tree: ast.AST) -> Iterator[ast.Call]:
    return (n for n in ast.walk(tree) if isinstance(n, ast.Call))


def dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ""


def names_in(node: ast.AST) -> set[str]:
    return {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(node)
            if isinstance(n, ast.Attribute | ast.Name)}


def strings(node: ast.AST) -> Iterator[str]:
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str | bytes):
            yield n.value.decode("latin-1") if isinstance(n.value, bytes) else n.value


# ---------------------------------------------------------------------------------------------- one place per idea
def _charset(path: Path, tree: ast.Module) -> list[str]:
    """A charset declaration regex or a byte-order-mark table: the sniffer's business."""
    out = [f"re.compile of a charset pattern (line {c.lineno})" for c in calls(tree) if dotted(c.func) == "re.compile"
           and any("charset" in s.lower() or "encoding" in s.lower() for s in strings(c))]
    out += [f"codecs.{n.attr} (line {n.lineno})" for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr.startswith("BOM_")]
    return out


def _cover(path: Path, tree: ast.Module) -> list[str]:
    """A difference array over subtree ranges (np.add.at / bincount at ``subtree_end``): a subtree cover mask."""
    return [f"{dotted(c.func)} at subtree_end (line {c.lineno})" for c in calls(tree)
            if dotted(c.func).split(".")[-1] in ("at", "bincount") and "subtree_end" in names_in(c)]


def _body(path: Path, tree: ast.Module) -> list[str]:
    """``tags == "body"``: choosing the page's <body> by hand."""
    return [f'tags == "body" (line {n.lineno})' for n in ast.walk(tree) if isinstance(n, ast.Compare)
            and "tags" in names_in(n.left) and any(isinstance(c, ast.Constant) and c.value == "body"
                                                   for c in n.comparators)]


def _joiner(path: Path, tree: ast.Module) -> list[str]:
    """A text-node joiner: a function joining a snapshot's texts around a line-break marker, or one by the joiner's
    names that does the work itself."""
    out = []
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and "texts" in names_in(fn) and "\x02" in set(strings(fn)):
            out.append(f"{fn.name} joins texts around a line-break marker (line {fn.lineno})")
        if isinstance(fn, ast.FunctionDef) and fn.name in ("text_of_mask", "is_block_display", "_is_block",
                                                           "_masked_text"):
            delegates = "tree" in names_in(fn) and fn.end_lineno - fn.lineno < 8  # type: ignore[operator]
            if not delegates:
                out.append(f"def {fn.name} (line {fn.lineno})")
    return out


def _json_default(path: Path, tree: ast.Module) -> list[str]:
    """A ``json.dumps`` fallback: defined once, and every ``default=`` passes that one."""
    out = [f"def {fn.name} (line {fn.lineno})" for fn in ast.walk(tree)
           if isinstance(fn, ast.FunctionDef) and "json_default" in fn.name]
    for c in calls(tree):
        if dotted(c.func) in ("json.dumps", "json.dump"):
            out += [f"json.dumps(default={dotted(k.value) or '...'}) (line {c.lineno})" for k in c.keywords
                    if k.arg == "default" and dotted(k.value).split(".")[-1] != "json_default"]
    return out


ENV_PATHS = ("CENTRUM_HOME", "CENTRUM_CACHE", "CENTRUM_CHROMIUM", "CENTRUM_COLLECTOR")


def _paths(path: Path, tree: ast.Module) -> list[str]:
    """Reading ``$CENTRUM_HOME`` / cache / Chromium / collector from the environment, or a default home folder."""
    out = []
    for c in calls(tree):
        if dotted(c.func) in ("os.environ.get", "os.getenv") and c.args and isinstance(c.args[0], ast.Constant) \
                and c.args[0].value in ENV_PATHS:
            out.append(f"{dotted(c.func)}({c.args[0].value!r}) (line {c.lineno})")
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and dotted(n.value) == "os.environ" and isinstance(n.ctx, ast.Load) \
                and isinstance(n.slice, ast.Constant) and n.slice.value in ENV_PATHS:
            out.append(f"os.environ[{n.slice.value!r}] (line {n.lineno})")
        if isinstance(n, ast.Constant) and n.value in (".cache", ".local"):
            out.append(f"{n.value!r} (line {n.lineno})")
    return out


def _registry_names() -> set[str]:
    from centrum.algorithms import REGISTRY

    return set(REGISTRY)


def _algorithm_list(path: Path, tree: ast.Module) -> list[str]:
    """The registry's entries, or a literal naming registered algorithms of three or more modules (the variants of
    one algorithm, like DANA's, are that module's own business): a second list of them."""
    from centrum.algorithms import REGISTRY

    names = _registry_names()
    specs = [c for c in calls(tree) if dotted(c.func) == "AlgorithmSpec"]
    out = [f"{len(specs)} AlgorithmSpec entries"] if len(specs) >= 3 else []
    for n in ast.walk(tree):
        items = n.keys if isinstance(n, ast.Dict) else n.elts if isinstance(n, ast.List | ast.Tuple | ast.Set) else []
        found = {i.value for i in items if isinstance(i, ast.Constant) and i.value in names}
        if len({REGISTRY[a].module for a in found}) >= 3:
            out.append(f"literal with {sorted(found)} (line {n.lineno})")
    return out


def _peer_dispatch(path: Path, tree: ast.Module) -> list[str]:
    """Choosing how to run a peer by its name, calling a peer's adapter, or a second list of peers."""
    from centrum.evaluation.peers import PEERS

    out = [f"comparison with peer {c.value!r} (line {n.lineno})" for n in ast.walk(tree) if isinstance(n, ast.Compare)
           for c in n.comparators if isinstance(c, ast.Constant) and c.value in PEERS]
    out += [f".run_html (line {n.lineno})" for n in ast.walk(tree) if isinstance(n, ast.Attribute)
            and n.attr == "run_html" and isinstance(n.ctx, ast.Load)]
    for n in ast.walk(tree):
        if isinstance(n, ast.List | ast.Tuple | ast.Set):
            found = {i.value for i in n.elts if isinstance(i, ast.Constant) and i.value in PEERS}
            if len(found) >= 3:
                out.append(f"literal with peers {sorted(found)} (line {n.lineno})")
    return out


IDEAS = {
    "charset decoding": ("host/centrum/core/charset.py", _charset),
    "subtree cover mask": ("host/centrum/core/tree.py", _cover),
    "body finder": ("host/centrum/core/tree.py", _body),
    "text joiner": ("host/centrum/core/tree.py", _joiner),
    "JSON encoder default": ("host/centrum/core/result.py", _json_default),
    "home/cache paths": ("host/centrum/core/paths.py", _paths),
    "algorithm list": ("host/centrum/algorithms/__init__.py", _algorithm_list),
    "peer dispatch": ("host/centrum/evaluation/peers.py", _peer_dispatch),
}


@pytest.mark.parametrize("idea", sorted(IDEAS))
def test_each_idea_lives_in_one_place(idea: str) -> None:
    home, find = IDEAS[idea]
    found = {rel(path): hits for path, tree in modules() if (hits := find(path, tree))}
    assert home in found, f"{idea}: its one definition is expected in {home}, found none there"
    copies = {f: hits for f, hits in found.items() if f != home}
    assert not copies, f"{idea} lives in {home}; copies elsewhere:\n" + "\n".join(
        f"  {f}: {'; '.join(h)}" for f, h in sorted(copies.items()))


def test_the_idea_finders_see_a_copy() -> None:
    """Each finder flags a hand-written copy of its idea (so the test above can fail)."""
    samples = {
        "charset decoding": 'import re\nM = re.compile(rb"<meta charset=(\\w+)")\n',
        "subtree cover mask": "def f(s, r):\n    np.add.at(m, s.subtree_end[r], -1)\n",
        "body finder": 'b = np.flatnonzero(snap.tags == "body")\n',
        "text joiner": 'def join(s, m):\n    return "\\x02".join(s.texts)\n',
        "JSON encoder default": "json.dumps(x, default=str)\n",
        "home/cache paths": 'home = os.environ.get("CENTRUM_HOME")\n',
        "algorithm list": 'NAMES = ("gce", "r4", "zoning")\n',
        "peer dispatch": 'if name == "wholepage":\n    pass\n',
    }
    assert set(samples) == set(IDEAS)
    for idea, src in samples.items():
        assert IDEAS[idea][1](Path("x.py"), ast.parse(src)), idea


# ---------------------------------------------------------------------------------------------- function length
def python_functions() -> Iterator[tuple[str, str, int]]:
    for path, tree in modules():
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                yield rel(path), fn.name, fn.end_lineno - fn.lineno + 1  # type: ignore[operator]


_FUNCTION_START = re.compile(r"\bfunction\b[^(]*\([^)]*\)\s*\{|=>\s*\{")


def js_functions_braces(path: Path) -> list[tuple[str, str, int]]:
    """Without node and acorn: function bodies found by their opening pattern and matched braces (strings, template
    literals and comments skipped), the top-level module wrapper left out."""
    src = path.read_text(encoding="utf-8")
    code = re.sub(r"//[^\n]*|/\*.*?\*/|`(?:\\.|[^`\\])*`|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'",
                  lambda m: re.sub(r"[^\n]", " ", m.group(0)), src, flags=re.S)
    out = []
    for m in _FUNCTION_START.finditer(code):
        start = m.end() - 1
        depth, i = 0, start
        while i < len(code):
            depth += {"{": 1, "}": -1}.get(code[i], 0)
            if depth == 0:
                break
            i += 1
        first, last = code.count("\n", 0, start) + 1, code.count("\n", 0, i) + 1
        if code[i + 1:].strip() in ("})();", ")();", "}();", "})()", ")()"):
            continue  # the module wrapper: its closing brace ends the file
        out.append((rel(path), f"function at line {first}", last - first + 1))
    return out


def js_functions() -> list[tuple[str, str, int]]:
    """The extension's functions as the brace scan measures them (no process here: acorn, which parses the code as
    node does, measures them in tests/integration/test_js_functions.py)."""
    return [f for path in sorted(EXTENSION_SRC.rglob("*.js")) for f in js_functions_braces(path)]


def test_no_function_over_80_lines() -> None:
    functions = list(python_functions()) + js_functions()
    assert len(functions) > 500  # the scan saw the code
    long = {(f, name): n for f, name, n in functions if n > MAX_LINES}
    new = {k: n for k, n in long.items() if k not in KNOWN_LONG}
    stale = sorted(k for k in KNOWN_LONG if k not in long)
    known = "\n".join(f"  {f} {name}: {long.get((f, name), '<= 80')} lines (owner: {owner})"
                      for (f, name), owner in sorted(KNOWN_LONG.items()))
    assert not new, ("functions over 80 lines:\n" + "\n".join(f"  {f} {name}: {n} lines" for (f, name), n in
                                                            sorted(new.items()))
                     + f"\nknown, being shrunk by their owners:\n{known}"
                     + (f"\nstale KNOWN_LONG entries (now short): {stale}" if stale else ""))


def test_the_brace_scan_measures_functions() -> None:
    """The fallback scan finds a long function and leaves the module wrapper out (strings with braces skipped)."""
    body = "\n".join(f"    const x{i} = '{{';" for i in range(85))
    src = f"(() => {{\n  function long() {{\n{body}\n  }}\n  const short = () => {{ return 1; }};\n}})();\n"
    path = REPO / "extension" / "src" / "__scan_probe__.js"
    try:
        path.write_text(src, encoding="utf-8")
        found = {n for _f, _name, n in js_functions_braces(path)}
    finally:
        path.unlink()
    assert found == {87, 1}


# ---------------------------------------------------------------------------------------------- imports
def imports_of(name: str, path: Path, tree: ast.Module, known: set[str]) -> set[str]:
    """centrum modules that ``name`` imports anywhere: in functions and under ``if TYPE_CHECKING:`` too (a type-only
    import is a dependency a reader follows, and the cycle it makes is one a refactoring trips on)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out |= {a.name for a in n.names if a.name.split(".")[0] == "centrum"}
        elif isinstance(n, ast.ImportFrom):
            if n.level:
                base = package.split(".")
                base = base[: len(base) - (n.level - 1)]
                mod = ".".join(base + ([n.module] if n.module else []))
            else:
                mod = n.module or ""
            if mod.split(".")[0] != "centrum":
                continue
            subs = {f"{mod}.{a.name}" for a in n.names if f"{mod}.{a.name}" in known}
            out |= subs or {mod}
            if len(subs) < len(n.names):
                out.add(mod)
    return {m for m in out if m in known and m != name}


def import_graph() -> dict[str, set[str]]:
    parsed = [(module_name(p), p, t) for p, t in modules()]
    known = {name for name, _p, _t in parsed}
    return {name: imports_of(name, p, t, known) for name, p, t in parsed}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


# Cycles their owners are untying now (function-local imports that hide them): modules -> owner. Printed in every
# failure message; emptied at the end.
KNOWN_CYCLES: dict[tuple[str, ...], str] = {}


def test_no_import_cycles() -> None:
    graph = import_graph()
    assert "centrum.core.tree" in graph["centrum.core.snapshot"]  # the graph sees imports
    found = [tuple(c) for c in cycles(graph)]
    new = [c for c in found if c not in KNOWN_CYCLES]
    known = "\n".join(f"  {' <-> '.join(c)} (owner: {owner})" for c, owner in KNOWN_CYCLES.items())
    assert not new, ("import cycles among centrum modules:\n" + "\n".join(" -> ".join(c) for c in new)
                     + f"\nknown, being untied by their owners:\n{known}")


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# The package's layers, lowest first: a module imports only from its own layer and the layers below it. The runtime
# (core, algorithms, output, then the API and the native host) sits under the lab (annotation, corpus, evaluation,
# training, batch, bench), which uses it; the CLI's commands and the CLI on top; the package's root (the lazy facade
# ``centrum.extract`` & co.) above all. docs/index.md draws it.
LAYERS = ("core", "gold", "algorithms", "output", "api", "annotation", "native", "corpus", "evaluation", "training",
          "batch", "bench", "commands", "cli", "")


def layer(module: str) -> int:
    """The layer of a module: its folder (or its own name) under ``centrum``; the root package is the top."""
    parts = module.split(".")
    unit = parts[1] if len(parts) > 1 else ""
    assert unit in LAYERS, f"{module}: not on a layer; add its folder to LAYERS in its place in the flow"
    return LAYERS.index(unit)


def upward(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} ({LAYERS[layer(a)] or 'root'}) imports {b} ({LAYERS[layer(b)] or 'root'})"
                  for a, deps in graph.items() for b in deps if layer(b) > layer(a))


def test_no_import_runs_back_up_a_layer() -> None:
    graph = import_graph()
    assert "centrum.core.tree" in graph["centrum.core.snapshot"]  # the graph sees imports
    bad = upward(graph)
    assert not bad, "imports that run back up a layer:\n" + "\n".join(bad)


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = {"centrum.core.render": {"centrum.algorithms.dana"}, "centrum.algorithms.dana": {"centrum.core.html"},
             "centrum.cli": {"centrum.commands.eval"}, "centrum": {"centrum.api"}}
    assert upward(graph) == ["centrum.core.render (core) imports centrum.algorithms.dana (algorithms)"]


def test_lower_layers_do_not_import_the_cli() -> None:
    top = ("centrum.cli", "centrum.commands", "centrum.__main__")
    bad = {name: sorted(m for m in deps if m.startswith(top)) for name, deps in import_graph().items()
           if not name.startswith(top) and any(m.startswith(top) for m in deps)}
    assert not bad, f"modules below the CLI importing it: {bad}"


def imported_test_modules(source: str) -> list[str]:
    """The test modules (``test_*``) that ``source`` imports, at any depth of the file."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if any(p.startswith("test_") for p in a.name.split("."))]
        elif isinstance(node, ast.ImportFrom) and any(p.startswith("test_") for p in (node.module or "").split(".")):
            found.append(node.module or "")
    return found


def test_no_test_module_imports_another() -> None:
    # What several test modules share lives in tests/helpers (tests/README.md): a test module imported by another
    # runs its module-level fixtures and tests' imports twice, and a change to it breaks tests elsewhere.
    files = sorted((REPO / "tests").rglob("*.py"))
    bad = {rel(p): mods for p in files if (mods := imported_test_modules(p.read_text(encoding="utf-8")))}
    assert not bad, bad


def test_the_test_import_finder_sees_one() -> None:
    assert sorted(imported_test_modules("def f():\n    from test_ui_reader import shot\nimport test_x.y\n")) == [
        "test_ui_reader", "test_x.y"]
