"""No function of the extension's own code is over 80 lines (the rule host/centrum follows too), measured on the
real parse tree: acorn, which web-ext brings into node_modules, parses every file under extension/src. The
top-level ``(() => { ... })()`` wrapper that gives each script its own scope is a module, not a function."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted((REPO / "extension" / "src").rglob("*.js"))
MAX_LINES = 80

MEASURE = """
const acorn = require(process.env.ACORN);
const fs = require("fs");
const out = [];
function walk(node, visit) {
  if (!node || typeof node.type !== "string") return;
  visit(node);
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) value.forEach((child) => walk(child, visit));
    else if (value && typeof value.type === "string") walk(value, visit);
  }
}
for (const file of process.argv.slice(1)) {
  const ast = acorn.parse(fs.readFileSync(file, "utf8"), { ecmaVersion: "latest", locations: true });
  const wrappers = new Set(ast.body.filter((s) => s.type === "ExpressionStatement" &&
    s.expression.type === "CallExpression").map((s) => s.expression.callee));
  walk(ast, (n) => {
    if (/Function/.test(n.type) && !wrappers.has(n)) {
      out.push([file, n.id ? n.id.name : "(anonymous)", n.loc.start.line, n.loc.end.line - n.loc.start.line + 1]);
    }
  });
}
process.stdout.write(JSON.stringify(out));
"""


def measure() -> list[tuple[str, str, int, int]]:
    modules = Path(os.environ.get("CENTRUM_NODE_MODULES") or REPO / "node_modules")
    node = shutil.which("node")
    if not node or not (modules / "acorn").is_dir():
        pytest.fail(f"needs node and acorn in {modules} (npm ci)")
    out = subprocess.run([node, "-e", MEASURE, *map(str, SOURCES)], env={**os.environ, "ACORN": str(modules / "acorn")},
                         capture_output=True, text=True, timeout=120, check=True)
    return [tuple(row) for row in json.loads(out.stdout)]  # type: ignore[misc]


def test_no_extension_function_over_80_lines() -> None:
    functions = measure()
    assert len(functions) > 100  # the parse saw the code
    long = [f"{Path(f).relative_to(REPO)}:{line} {name} ({n} lines)" for f, name, line, n in functions if n > MAX_LINES]
    assert long == []
