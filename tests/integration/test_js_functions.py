"""The extension's functions measured by acorn (node parses the code as the browser does): none over 80 lines, and
the unit tier's brace scan finds the same long ones, so the fast check can be trusted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION_SRC = REPO / "extension" / "src"
MAX_LINES = 80


ACORN_SCRIPT = r"""
const fs = require("fs"), path = require("path");
// node -e: argv[1] is the first argument.
const acorn = require(path.join(process.argv[1], "acorn"));
const out = [];
for (const file of process.argv.slice(2)) {
  const ast = acorn.parse(fs.readFileSync(file, "utf8"), { ecmaVersion: "latest", sourceType: "script",
    locations: true, allowHashBang: true });
  // A module wrapper (an immediately invoked function at the top level) is the file's scope, not a function.
  const wrappers = new Set();
  for (const st of ast.body) {
    let e = st.type === "ExpressionStatement" ? st.expression : null;
    if (e && e.type === "UnaryExpression") e = e.argument;
    if (e && e.type === "CallExpression" && /Function/.test(e.callee.type)) wrappers.add(e.callee);
  }
  const walk = (node, hint) => {
    if (!node || typeof node.type !== "string") return;
    if (/Function/.test(node.type) && !wrappers.has(node)) {
      out.push([file, node.id ? node.id.name : hint || "<anonymous>", node.loc.end.line - node.loc.start.line + 1]);
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === "loc") continue;
      let h = hint;
      if (node.type === "VariableDeclarator" && key === "init" && node.id.type === "Identifier") h = node.id.name;
      if ((node.type === "Property" || node.type === "MethodDefinition") && key === "value") h = node.key.name;
      for (const v of Array.isArray(value) ? value : [value]) if (v && typeof v === "object") walk(v, h);
    }
  };
  walk(ast, null);
}
console.log(JSON.stringify(out));
"""


def node_modules() -> Path | None:
    for raw in (os.environ.get("CENTRUM_NODE_MODULES"), str(REPO / "node_modules")):
        if raw and (Path(raw) / "acorn" / "package.json").is_file():
            return Path(raw)
    return None


def js_functions_acorn(files: list[Path], modules_dir: Path) -> list[tuple[str, str, int]]:
    out = subprocess.run(["node", "-e", ACORN_SCRIPT, str(modules_dir), *map(str, files)], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    return [(Path(f).relative_to(REPO).as_posix(), name, n) for f, name, n in json.loads(out)]


def test_no_js_function_over_80_lines_as_acorn_parses_them() -> None:
    modules_dir = node_modules()
    if modules_dir is None or not shutil.which("node"):
        pytest.fail("node and acorn are needed (.ci/run installs them: npm ci)")
    functions = js_functions_acorn(sorted(EXTENSION_SRC.rglob("*.js")), modules_dir)
    assert len(functions) > 200  # the parse saw the code
    long = sorted((f, name, n) for f, name, n in functions if n > MAX_LINES)
    assert not long, "functions over 80 lines:\n" + "\n".join(f"  {f} {name}: {n} lines" for f, name, n in long)
