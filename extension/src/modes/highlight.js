/* Centrum highlight mode: the main content outlined and the rest dimmed (ui.css keyed on three attributes), and the
 * "message" stage (an error or "nothing found" shown in a toast). Messages are for readers: no algorithm names
 * (those stay in the debugger), and an answer that is probably not an article says so and offers the debugger. */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.mode.highlight");
  if (globalThis[KEY]) return;
  const { state, MARK, DIM, STAGE, nodeList, toast, unmark } = globalThis[Symbol.for("centrum.ui")];
  const { t } = globalThis[Symbol.for("centrum.readerview")];

  // Below this many words the answer is a tagline or a teaser rather than an article; above this share of its text
  // in links it is a list of links (a home page, a category page).
  const FEW_WORDS = 25;
  const LISTING_LINK_SHARE = 0.5;
  const UNSPACED = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/g;

  // Words of spaced scripts plus characters of unspaced ones at two per word, so a Chinese answer is not "one word".
  function words(text) {
    const unspaced = (text.match(UNSPACED) || []).length;
    const spaced = (text.replace(UNSPACED, " ").match(/[\p{L}\p{N}]+/gu) || []).length;
    return spaced + Math.round(unspaced / 2);
  }

  /* "" when the answer looks like an article, else why not ("little" text, a "listing" of links). */
  function doubt(nodes, text) {
    const all = nodes.length ? nodes.map((el) => el.innerText || el.textContent || "").join("\n") : String(text || "");
    if (words(all) < FEW_WORDS) return "little";
    let linked = 0;
    for (const el of nodes) for (const a of el.querySelectorAll("a[href]")) linked += (a.innerText || "").length;
    return nodes.length && linked > LISTING_LINK_SHARE * all.length ? "listing" : "";
  }

  /* Mark the elements to dim: the children of every ancestor of a highlighted element that are neither highlighted
     nor an ancestor of one (not their descendants again, so dimming does not compound), and never the view's own
     host element. Set once here rather than matched by a :has() rule, which makes the browser re-test every element
     of a large page on each style change. */
  function dim(nodes) {
    const marked = new Set(nodes);
    const onPath = new Set();
    for (const el of nodes) {
      for (let a = el.parentElement; a && !onPath.has(a); a = a.parentElement) onPath.add(a);
    }
    for (const a of onPath) {
      for (const c of a.children) {
        if (marked.has(c) || onPath.has(c) || c.localName === "centrum-ui") continue;
        c.setAttribute(DIM, "");
        state.dimmed.push(c);
      }
    }
  }

  function nothingFound(result) {
    state.stage = "message";
    toast(`${t("nothingFound")}${result.message ? `\n${result.message}` : ""}`, "error", ["debugger", "annotate"]);
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
    const why = doubt(nodes, result.text);
    const note = why ? `\n${t(why === "little" ? "doubtLittle" : "doubtListing")}` : "";
    if (nodes.length) {
      for (const el of nodes) el.setAttribute(MARK, "");
      dim(nodes);
      document.documentElement.setAttribute(STAGE, "highlight");
      const r = nodes[0].getBoundingClientRect();
      if (r.bottom < 0 || r.top > window.innerHeight) nodes[0].scrollIntoView({ block: "start" });
      toast(`${t("outlined")}${note}`, why ? "doubt" : "info", why ? ["debugger", "reader", "annotate"] : true);
    } else {
      toast(`${t("textOnly")}${note}`, why ? "doubt" : "info", why ? ["debugger", "reader", "annotate"] : true);
    }
    return { stage: state.stage, nodes: nodes.length, doubt: why };
  }

  // What each error means for the reader; the code and the exact message follow for a bug report.
  const PLAIN = { E_HOST_MISSING: "errorHostMissing", E_TIMEOUT: "errorTimeout", E_DISCONNECTED: "errorDisconnected",
    E_REQUEST_TOO_LARGE: "errorTooLarge", E_TOO_LARGE: "errorTooLarge", E_PAGE: "errorPage", E_PARAMS: "errorParams",
    E_UNKNOWN_ALGORITHM: "errorParams", E_UNAVAILABLE: "errorParams" };

  function error(err) {
    unmark();
    state.nodes = [];
    state.stage = "message";
    const field = err.field ? ` (${err.field})` : "";
    toast(`${t(PLAIN[err.code] || "errorOther")}\n${err.message}${field} [${err.code}]`, "error");
    return { stage: state.stage, error: err };
  }

  globalThis[KEY] = { highlight, error, words };
})();
