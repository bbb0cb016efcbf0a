/* Centrum highlight mode: the main content outlined and the rest dimmed (ui.css keyed on two attributes), and the
 * "message" stage (an error or "nothing found" shown in a toast). */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.mode.highlight");
  if (globalThis[KEY]) return;
  const { state, MARK, STAGE, nodeList, toast, unmark } = globalThis[Symbol.for("centrum.ui")];

  function nothingFound(result) {
    state.stage = "message";
    toast(`Centrum found no main content on this page${result.message ? `: ${result.message}` : "."}`, "error",
      ["debugger", "annotate"]);
    return { stage: state.stage, nodes: 0, message: result.message || "" };
  }

  function highlight(result) {
    const map = nodeList();
    const nodes = (result.nodes || []).map((i) => map[i]).filter((el) => el && el.nodeType === 1 && el.isConnected);
    state.algorithm = result.algorithm || "";
    state.result = result;
    if (!nodes.length && !result.text) return nothingFound(result);
    state.scroll = [window.scrollX, window.scrollY];
    state.nodes = nodes;
    state.text = result.text || null;
    state.stage = "highlight";
    if (nodes.length) {
      for (const el of nodes) el.setAttribute(MARK, "");
      document.documentElement.setAttribute(STAGE, "highlight");
      const r = nodes[0].getBoundingClientRect();
      if (r.bottom < 0 || r.top > window.innerHeight) nodes[0].scrollIntoView({ block: "start" });
      toast(`Centrum (${state.algorithm}): main content outlined. Press again for the reader view.`, "info", true);
    } else {
      toast(`Centrum (${state.algorithm}) found the text but no element to outline. Press again to read it.`,
        "info", true);
    }
    return { stage: state.stage, nodes: nodes.length };
  }

  function error(err) {
    unmark();
    state.nodes = [];
    state.stage = "message";
    const field = err.field ? ` (${err.field})` : "";
    toast(`Centrum: ${err.message}${field}\n[${err.code}]`, "error");
    return { stage: state.stage, error: err };
  }

  globalThis[KEY] = { highlight, error };
})();
