/* Centrum page-side view, injected (with collect.js and clean.js) on the first press only.
 *
 * Stages: "highlight" (outline the main content, dim the rest: ui.css keyed on two attributes), "reader" (the main
 * content rebuilt, sanitized by clean.js, in a shadow root over the page), "debugger" (every algorithm's answer and
 * candidates in a panel, with overlays drawn in the shadow root), "annotate" (the annotator picks the main content
 * node by node), and restore (every attribute and element this file added is removed, listeners detached and the
 * scroll position put back, so the page's DOM is exactly what it was). "message" = an error or "nothing found" is
 * shown. The elements come from globalThis.centrumNodes, the collector's id -> element map.
 *
 * A page must not be able to drive or read this UI (issue #20): it lives in a *closed* shadow root whose only
 * reference is kept in this content script's isolated world (state.shadow), every handler ignores events the page
 * dispatched (isTrusted false), and nothing is found through page-shadowable names: the view is registered under a
 * symbol, not a window property an element id="centrumView" could stand in for. DOM methods are called from the
 * isolated world (Chromium) or through Xray wrappers (Firefox), so the page's overrides of them never run here.
 */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.view");
  if (globalThis[KEY]) return;

  const clean = globalThis[Symbol.for("centrum.clean")];
  const api = clean.api;
  const MARK = "data-centrum-main";
  const STAGE = "data-centrum-stage";

  const SHADOW_CSS = `
    :host { all: initial !important; }
    .toast { position: fixed; top: 12px; right: 12px; z-index: 2147483647; max-width: 28em; padding: 10px 14px;
      font: 14px/1.4 system-ui, sans-serif; color: #1b1b1b; background: #fff; border-left: 5px solid #e8590c;
      box-shadow: 0 4px 18px rgba(0,0,0,.25); border-radius: 4px; white-space: pre-wrap; }
    .toast.error { border-left-color: #c92a2a; background: #fff5f5; }
    .toast button.x { float: right; margin-left: 10px; border: 0; background: none; font-size: 16px; cursor: pointer; }
    .toast .modes { display: block; margin-top: 6px; white-space: normal; }
    .toast .modes button, .panel button { font: 12px system-ui, sans-serif; padding: 2px 8px; margin: 2px 4px 0 0;
      border: 1px solid #bbb; background: #f4f4f4; border-radius: 3px; cursor: pointer; color: #1b1b1b; }
    .reader { position: fixed; inset: 0; z-index: 2147483646; overflow: auto; }
    .layer { position: absolute; left: 0; top: 0; width: 0; height: 0; z-index: 2147483645; pointer-events: none; }
    .box { position: absolute; box-sizing: border-box; pointer-events: none; font: 11px/1.2 system-ui, sans-serif; }
    .box > span { position: absolute; left: 0; top: 0; background: rgba(255,255,255,.85); color: #000;
      padding: 0 3px; white-space: nowrap; }
    .box.answer { outline: 3px solid #e8590c; }
    .box.hover { outline: 3px dashed #1971c2; background: rgba(25,113,194,.12); }
    .box.cell { border: 1px dotted rgba(0,0,0,.35); }
    .box.cell.out { background: rgba(201,42,42,.10); }
    .box.zone { border: 1px solid rgba(47,158,68,.7); }
    .box.column { border: 2px dashed rgba(156,54,181,.8); }
    .box.cset { outline: 2px solid #2f9e44; }
    .box.seed { outline: 2px solid #f08c00; }
    .box.block { outline: 1px dashed #2f9e44; }
    .box.block.out { outline: 1px dashed #c92a2a; background: rgba(201,42,42,.10); }
    .box.point { width: 10px; height: 10px; margin: -5px 0 0 -5px; border-radius: 50%; background: #c92a2a; }
    .box.point > span { left: 12px; top: -4px; }
    .box.current { outline: 3px dashed #1971c2; background: rgba(25,113,194,.10); }
    .box.picked { outline: 3px solid #2f9e44; background: rgba(47,158,68,.12); }
    .panel { position: fixed; top: 0; right: 0; bottom: 0; width: 400px; z-index: 2147483647; overflow: auto;
      font: 13px/1.4 system-ui, sans-serif; color: #1b1b1b; background: #fff; border-left: 1px solid #bbb;
      box-shadow: -4px 0 18px rgba(0,0,0,.2); padding: 10px 12px; box-sizing: border-box; }
    .panel.annot { top: auto; left: 12px; right: auto; bottom: 12px; width: 380px; max-height: 60vh;
      border: 1px solid #bbb; border-radius: 4px; }
    .panel h2 { font: bold 15px system-ui, sans-serif; margin: 0 0 6px; }
    .panel .timing, .panel .status, .panel .hint { color: #555; font-size: 12px; margin: 4px 0; }
    .panel .status.error { color: #c92a2a; } .panel .status.ok { color: #2b8a3e; font-weight: bold; }
    .panel select, .panel input { font: 13px system-ui, sans-serif; width: 100%; box-sizing: border-box; }
    .panel input[type=checkbox] { width: auto; }
    .panel .defaults { font: 11px ui-monospace, monospace; color: #555; white-space: pre-wrap; max-height: 8em;
      overflow: auto; background: #f6f6f6; padding: 4px; }
    .panel ol { padding-left: 22px; margin: 6px 0; }
    .panel li { cursor: default; padding: 1px 2px; border-radius: 2px; }
    .panel li:hover { background: #e7f1ff; }
    .panel li .score { font-variant-numeric: tabular-nums; font-weight: bold; margin-right: 6px; }
    .panel textarea { width: 100%; box-sizing: border-box; height: 10em; font: 11px ui-monospace, monospace; }
    .panel .x { position: absolute; top: 6px; right: 8px; border: 0; background: none; font-size: 18px; }
  ` + clean.READER_CSS;

  const state = {
    stage: "idle", nodes: [], text: null, algorithm: "", ui: null, shadow: null, scroll: null,
    cleanup: [], // functions undoing listeners this view attached to the page
    debug: null, // debugger data {results, algorithms, timing, selected}
    annot: null, // annotator state
  };

  // A request of the panels to the background. Without the extension API (a page that hides it from the content
  // scripts, see clean.js) the answer is an E_PAGE error the panel shows.
  function send(message) {
    if (!api) {
      return Promise.resolve({ error: { code: "E_PAGE", message: "This page hides the extension's messaging from " +
        "its content scripts (forms named \"chrome\" and \"browser\" with controls named \"runtime\"): the panels cannot " +
        "reach Centrum here. Highlight and reader view still work." } });
    }
    return api.runtime.sendMessage(message);
  }

  // Handlers run for the user's own input only: a page's el.click(), dispatchEvent(new KeyboardEvent(...)) or a
  // synthetic change event has isTrusted false and is ignored.
  const trusted = (fn) => (event) => (event && event.isTrusted === true ? fn(event) : undefined);

  // Key and text events typed into the panels (the annotator name, the parameters) stop at the shadow root, so the
  // page's own bubbling listeners never see what is typed there.
  const PRIVATE_EVENTS = ["keydown", "keyup", "keypress", "beforeinput", "input", "compositionstart",
    "compositionupdate", "compositionend", "copy", "cut", "paste"];

  // The collector's element list: read as an own property of this world's global, never through the window's
  // named elements (an element id="centrumNodes" on the page).
  const nodeList = () => (Object.prototype.hasOwnProperty.call(globalThis, "centrumNodes") &&
    Array.isArray(globalThis.centrumNodes) ? globalThis.centrumNodes : []);

  function ui() {
    if (state.ui && state.ui.isConnected) return state.shadow;
    const el = document.createElement("centrum-ui");
    // Closed: el.shadowRoot is null for the page, and the only reference is state.shadow in this isolated world.
    const shadow = el.attachShadow({ mode: "closed" });
    for (const type of PRIVATE_EVENTS) shadow.addEventListener(type, (e) => e.stopPropagation());
    const style = document.createElement("style");
    style.textContent = SHADOW_CSS;
    shadow.appendChild(style);
    document.documentElement.appendChild(el); // outside <body>: never dimmed, never part of the page's layout
    state.ui = el;
    state.shadow = shadow;
    return shadow;
  }

  function h(tag, props = {}, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), trusted(v));
      else el.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) el.append(c);
    return el;
  }

  function toast(text, kind = "info", modes = false) {
    const shadow = ui();
    let box = shadow.querySelector(".toast");
    if (!box) {
      box = document.createElement("div");
      shadow.appendChild(box);
    }
    box.className = `toast ${kind}`;
    box.setAttribute("role", kind === "error" ? "alert" : "status");
    // A host message can quote a huge offending value: keep the box readable.
    box.textContent = text.length > 1200 ? `${text.slice(0, 1000)}\u2026${text.slice(-150)}` : text;
    const close = h("button", { class: "x", title: "close", text: "\u00d7", onclick: () => box.remove() });
    box.prepend(close);
    if (modes) {
      // The other modes, asked of the background (which holds the activeTab grant and the host port). With nothing
      // found there is nothing to read, but the debugger and the annotator are still useful.
      const open = (mode) => async () => {
        const answer = await send({ type: "centrum.open", mode });
        if (answer && answer.error && answer.error.code === "E_PAGE") view.error(answer.error);
      };
      const labels = { reader: "Reader view", debugger: "Debugger", annotate: "Annotate" };
      const list = Array.isArray(modes) ? modes : Object.keys(labels);
      box.appendChild(h("span", { class: "modes" },
        ...list.map((mode) => h("button", { "data-mode": mode, text: labels[mode], onclick: open(mode) }))));
    }
    return box;
  }

  function unmark() {
    for (const el of state.nodes) el.removeAttribute(MARK);
    document.documentElement.removeAttribute(STAGE);
  }

  function detach() {
    for (const fn of state.cleanup.splice(0)) fn();
  }

  function listen(target, type, fn, options) {
    const handler = trusted(fn);
    target.addEventListener(type, handler, options);
    state.cleanup.push(() => target.removeEventListener(type, handler, options));
  }

  function clearShadow() {
    const shadow = ui();
    for (const el of [...shadow.children]) if (el.localName !== "style") el.remove();
    return shadow;
  }

  // ---- overlays (document coordinates; the layer sits at the document origin) ----

  function layer(name) {
    const shadow = ui();
    let el = shadow.querySelector(`.layer[data-layer="${name}"]`);
    if (!el) {
      el = h("div", { class: "layer", "data-layer": name });
      shadow.appendChild(el);
    }
    return el;
  }

  function docRect(el) {
    const r = el.getBoundingClientRect();
    return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height];
  }

  function drawBox(parent, rect, cls, label, extra = {}) {
    const [x, y, w, hgt] = rect.map((v) => Number(v) || 0);
    const box = h("div", { class: `box ${cls}`, ...extra });
    box.style.left = `${x}px`;
    box.style.top = `${y}px`;
    if (!cls.includes("point")) {
      box.style.width = `${Math.max(w, 1)}px`;
      box.style.height = `${Math.max(hgt, 1)}px`;
    }
    if (label) box.appendChild(h("span", { text: label }));
    parent.appendChild(box);
    return box;
  }

  function element(id) {
    const el = nodeList()[id];
    return el && el.nodeType === 1 && el.isConnected ? el : null;
  }

  function outlineNodes(parent, ids, cls, label) {
    for (const id of ids || []) {
      const el = element(id);
      if (el) drawBox(parent, docRect(el), cls, label, { "data-node": String(id) });
    }
  }

  // ---- reader ----

  function showReader(data, settings) {
    const shadow = clearShadow();
    const reader = h("div", { class: "reader", role: "document" });
    const prefs = { ...clean.SETTINGS, ...(settings || {}) };
    reader.appendChild(clean.toolbar(document, reader, prefs, () => view.restore()));
    reader.appendChild(clean.article(data, document, `Centrum (${state.algorithm}) \u00b7 press the button again to restore`));
    shadow.appendChild(reader);
    return reader;
  }

  // ---- debugger ----

  function fmt(x) {
    return typeof x === "number" && Number.isFinite(x) ? (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3)) : String(x);
  }

  function drawAlgorithmOverlay(name, result) {
    const lay = layer("overlay");
    lay.replaceChildren();
    const d = (result && result.debug) || {};
    if (name === "gce") {
      for (const cell of (d.grid && d.grid.cells) || []) {
        if (!Array.isArray(cell.box)) continue;
        drawBox(lay, cell.box, cell.kept ? "cell" : "cell out", cell.kept ? "" : `excluded: ${cell.reason || "?"}`,
          { "data-kind": "cell" });
      }
      for (const key of ["C_w", "C_d", "C1", "C2", "C3"]) {
        const p = d[key];
        if (Array.isArray(p)) drawBox(lay, [p[0], p[1], 0, 0], "point", key, { "data-kind": key });
      }
      for (const key of ["E1", "E2", "E3"]) {
        const e = d[key];
        if (e && typeof e.node === "number") {
          outlineNodes(lay, [e.node], "seed", `${key} (distance ${fmt(e.distance)})`);
        }
      }
    } else if (name === "zoning") {
      for (const z of d.zones || []) {
        if (Array.isArray(z.box)) drawBox(lay, z.box, "zone", `zone ${z.id} score ${fmt(z.score)}`, { "data-kind": "zone" });
      }
      for (const c of d.columns || []) {
        if (Array.isArray(c.box)) drawBox(lay, c.box, "column", `column ${c.id} ${fmt(c.fraction)}`, { "data-kind": "column" });
      }
    } else if (name === "r4") {
      const rows = new Map(((d.ratios && d.ratios.rows) || []).map((r) => [r.node, r]));
      // c-SET entries are node ids (body-children rule) or {node, words_tags, ...} (reduce/select path).
      for (const entry of Array.isArray(d.cset) ? d.cset : []) {
        const id = typeof entry === "number" ? entry : entry && entry.node;
        const row = rows.get(id);
        outlineNodes(lay, [id], "cset", `c-SET <${row ? row.tag : "?"}> distance ${row ? fmt(row.distance) : "?"}`);
      }
    } else if (name === "ensemble") {
      // The block filter's trace: every block of the chosen candidate, kept or dropped, with its score.
      for (const b of Array.isArray(d.blocks) ? d.blocks : []) {
        if (typeof b.node !== "number") continue;
        outlineNodes(lay, [b.node], b.kept ? "block" : "block out",
          `block ${b.kept ? "kept" : "dropped"} (score ${fmt(b.score)}): ${String(b.text || "")}`);
      }
    }
  }

  function ensurePanel(cls, role) {
    // The panel of one mode in the UI's shadow root, created on first use (later renders reuse it).
    const shadow = ui();
    let panel = shadow.querySelector(`.panel.${cls}`);
    const created = !panel;
    if (created) {
      panel = h("div", { class: `panel ${cls}`, role });
      shadow.appendChild(panel);
    }
    return { panel, created };
  }

  function featureText(c) {
    // The candidate's features as a tooltip: why it scored what it did.
    const f = Object.entries(c.features || {}).map(([k, v]) => `${k} = ${fmt(v)}`);
    return `nodes ${(c.nodes || []).slice(0, 20).join(", ")}${f.length ? `\n${f.join("\n")}` : ""}`;
  }

  function renderDebugger() {
    const dbg = state.debug;
    const { panel } = ensurePanel("debugger", "complementary");
    const names = Object.keys(dbg.results);
    if (!names.includes(dbg.selected)) dbg.selected = names[0];
    const name = dbg.selected;
    const result = dbg.results[name] || {};
    const t = dbg.timing || {};
    const select = h("select", { class: "algo", title: "algorithm" });
    for (const n of names) {
      const r = dbg.results[n];
      const o = h("option", { value: n, text: `${n}: ${r.nodes.length ? `${r.nodes.length} node(s)` : "no answer"}` });
      if (n === name) o.selected = true;
      select.appendChild(o);
    }
    select.addEventListener("change", trusted(() => {
      dbg.selected = select.value;
      renderDebugger();
    }));
    const list = h("ol", { class: "cands" });
    const hover = layer("hover");
    (result.candidates || []).forEach((c, i) => {
      const li = h("li", { "data-index": String(i), title: featureText(c) },
        h("span", { class: "score", text: fmt(c.score) }), `${c.label || ""} [${(c.nodes || []).length} node(s)]`);
      li.addEventListener("mouseenter", trusted(() => {
        hover.replaceChildren();
        outlineNodes(hover, c.nodes, "hover", `${c.label || ""} ${fmt(c.score)}`);
        const first = element((c.nodes || [])[0]);
        if (first) {
          const r = first.getBoundingClientRect();
          if (r.bottom < 0 || r.top > window.innerHeight) first.scrollIntoView({ block: "center" });
        }
      }));
      li.addEventListener("mouseleave", trusted(() => hover.replaceChildren()));
      list.appendChild(li);
    });
    const overlayToggle = h("input", { type: "checkbox", class: "overlay-toggle" });
    overlayToggle.checked = dbg.overlay;
    overlayToggle.addEventListener("change", trusted(() => {
      dbg.overlay = overlayToggle.checked;
      renderDebugger();
    }));
    const params = h("textarea", { class: "params", spellcheck: "false" });
    params.value = JSON.stringify(dbg.params[name] || {}, null, 1);
    const status = h("div", { class: "status", role: "status" });
    if (dbg.status) {
      status.textContent = dbg.status.text;
      status.className = `status ${dbg.status.kind}`;
    }
    const rerun = h("button", { class: "rerun", text: "Re-run with these parameters", onclick: async () => {
      let parsed;
      try {
        parsed = JSON.parse(params.value || "{}");
      } catch (e) {
        dbg.status = { kind: "error", text: `parameters are not valid JSON: ${e.message}` };
        renderDebugger();
        return;
      }
      dbg.params[name] = parsed;
      dbg.status = { kind: "", text: `running ${name}\u2026` };
      renderDebugger();
      const answer = await send({ type: "centrum.rerun", algorithm: name, params: parsed });
      if (!answer || answer.error) {
        const err = (answer && answer.error) || { code: "E_INTERNAL", message: "no answer" };
        dbg.status = { kind: "error", text: `${err.code}: ${err.message}` };
      } else {
        dbg.results[name] = answer.result;
        dbg.timing = answer.timing;
        dbg.status = { kind: "ok", text: `re-ran ${name} on the same snapshot` };
      }
      renderDebugger();
    } });
    const timing = `collect ${fmt(t.collect_ms)} ms \u00b7 transfer ${fmt(t.transfer_ms)} ms \u00b7 host ${fmt(t.host_ms)} ms` +
      (t.recollected ? " \u00b7 snapshot re-collected" : "");
    const algoMs = result.timing_ms ? Object.entries(result.timing_ms).map(([k, v]) => `${k} ${fmt(v)}`).join(", ") : "";
    panel.replaceChildren(
      h("button", { class: "x", title: "close (restores the page)", text: "\u00d7", onclick: () => view.restore() }),
      h("h2", { text: "Centrum debugger" }),
      h("div", { class: "timing", text: timing }),
      select,
      h("div", { class: "answer", text: result.nodes && result.nodes.length
        ? `answer: ${result.nodes.length} node(s) (${result.nodes.slice(0, 8).map((i) => element(i)?.localName || i).join(", ")})`
        : `no answer${result.message ? `: ${result.message}` : ""}` }),
      h("div", { class: "hint", text: `${name} ms: ${algoMs}` }),
      h("label", {}, overlayToggle, ` overlay (${name === "gce" ? "grid, C_w, C_d, C1\u2013C3, E1\u2013E3" :
        name === "zoning" ? "zones, columns" : name === "r4" ? "c-SET with distances" : "none for this algorithm"})`),
      h("div", { class: "hint", text: `${(result.candidates || []).length} candidate(s); hover to outline` }),
      list,
      h("div", { class: "hint", text: "parameters to override (JSON), defaults below (null = the preset's value):" }),
      params, rerun, status,
      h("div", { class: "defaults", text: JSON.stringify((dbg.defaults || {})[name] || {}, null, 1) }),
    );
    // The chosen algorithm's answer is outlined; switching algorithm re-highlights.
    const answer = layer("answer");
    answer.replaceChildren();
    outlineNodes(answer, result.nodes, "answer", `${name} answer`);
    if (dbg.overlay) drawAlgorithmOverlay(name, result);
    else layer("overlay").replaceChildren();
  }

  // ---- annotator ----

  function nodeIds() {
    if (state.annot.ids) return state.annot.ids;
    const ids = new Map();
    nodeList().forEach((el, i) => ids.set(el, i));
    state.annot.ids = ids;
    return ids;
  }

  function mapped(el) {
    // The nearest element the collector listed (it lists every element, but not e.g. ones added since).
    const ids = nodeIds();
    while (el && !ids.has(el)) el = el.parentElement || (el.getRootNode && el.getRootNode().host) || null;
    return el;
  }

  function renderAnnot(statusText, kind = "") {
    const a = state.annot;
    const { panel, created } = ensurePanel("annot", "dialog");
    if (created) {
      a.name = h("input", { class: "annotator", placeholder: "annotator name", value: a.annotator || "" });
      a.status = h("div", { class: "status", role: "status" });
      a.list = h("ol", { class: "picked" });
      const button = (cls, text, fn) => h("button", { class: cls, text, onclick: fn });
      panel.append(
        h("button", { class: "x", title: "close (restores the page)", text: "\u00d7", onclick: () => view.restore() }),
        h("h2", { text: "Centrum annotator" }),
        h("div", { class: "hint", text: "Click a word in the main content. \u2191 / + grows the selection to the parent, " +
          "\u2193 / \u2212 shrinks it back, Enter adds it (several disjoint nodes allowed), S saves." }),
        a.name,
        h("div", {}, button("grow", "Grow \u2191", () => annot.grow()), button("shrink", "Shrink \u2193", () => annot.shrink()),
          button("add", "Add", () => annot.add()), button("undo", "Remove last", () => annot.undo()),
          button("save", "Save label", () => annot.save())),
        a.list, a.status);
    }
    a.list.replaceChildren(...a.picked.map((el) => h("li", { text: describe(el) })));
    if (statusText !== undefined) {
      a.status.textContent = statusText;
      a.status.className = `status ${kind}`;
    }
    const lay = layer("annot");
    lay.replaceChildren();
    for (const el of a.picked) drawBox(lay, docRect(el), "picked", describe(el));
    if (a.current) drawBox(lay, docRect(a.current), "current", `${describe(a.current)} (Enter adds)`);
  }

  function describe(el) {
    const id = nodeIds().get(el);
    const words = (el.innerText || el.textContent || "").trim().split(/\s+/).filter(Boolean).length;
    return `<${el.localName}${el.id ? `#${el.id}` : ""}> node ${id}, ${words} words`;
  }

  const annot = {
    pick(el) {
      const a = state.annot;
      el = mapped(el);
      if (!el) return;
      a.current = el;
      a.below = [];
      renderAnnot(`selected ${describe(el)}`);
    },
    grow() {
      const a = state.annot;
      if (!a.current) return renderAnnot("click a word first", "error");
      const up = mapped(a.current.parentElement);
      if (!up || up === document.documentElement) return renderAnnot("already at the top", "error");
      a.below.push(a.current);
      a.current = up;
      return renderAnnot(`selected ${describe(up)}`);
    },
    shrink() {
      const a = state.annot;
      if (!a.current) return renderAnnot("click a word first", "error");
      if (a.below.length) a.current = a.below.pop();
      else {
        // Nothing to go back to: step into the child holding most of the text.
        const kids = [...a.current.children].filter((c) => nodeIds().has(c));
        if (!kids.length) return renderAnnot("no smaller element", "error");
        a.current = kids.reduce((x, y) => ((y.textContent || "").length > (x.textContent || "").length ? y : x));
      }
      return renderAnnot(`selected ${describe(a.current)}`);
    },
    add() {
      const a = state.annot;
      if (!a.current) return renderAnnot("click a word first", "error");
      const el = a.current;
      if (a.picked.some((p) => p === el || p.contains(el))) return renderAnnot("already inside the selection", "error");
      // Disjoint: a node that contains earlier picks replaces them.
      a.picked = a.picked.filter((p) => !el.contains(p));
      a.picked.push(el);
      a.current = null;
      a.below = [];
      return renderAnnot(`${a.picked.length} node(s) selected`);
    },
    undo() {
      state.annot.picked.pop();
      renderAnnot(`${state.annot.picked.length} node(s) selected`);
    },
    async save() {
      const a = state.annot;
      if (a.current && !a.picked.length) annot.add();
      const annotator = a.name.value.trim();
      if (!a.picked.length) return renderAnnot("select the main content first", "error");
      if (!annotator) return renderAnnot("enter the annotator name", "error");
      if (api) await api.storage.local.set({ annotatorName: annotator });
      const ids = nodeIds();
      const nodes = a.picked.map((el) => ids.get(el)).sort((x, y) => x - y);
      renderAnnot("saving\u2026");
      const answer = await send({ type: "centrum.label", annotator, nodes });
      if (!answer || answer.error) {
        const err = (answer && answer.error) || { code: "E_INTERNAL", message: "no answer" };
        return renderAnnot(`not saved: ${err.code}: ${err.message}`, "error");
      }
      a.saved = answer.label_id;
      return renderAnnot(`Saved label #${answer.label_id} (${nodes.length} node(s))`, "ok");
    },
  };

  function inUi(event) {
    return state.ui && event.composedPath().includes(state.ui);
  }

  function startAnnotator(annotator) {
    state.annot = { current: null, below: [], picked: [], ids: null, annotator: annotator || "" };
    // Capture phase on window: the page's own handlers (links, menus) never see the annotator's clicks.
    listen(window, "click", (e) => {
      if (inUi(e)) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      const target = e.composedPath().find((n) => n.nodeType === 1);
      if (target) annot.pick(target);
    }, true);
    listen(window, "keydown", (e) => {
      // Typing in the panel's own fields. From window the closed tree is hidden in composedPath(): ask the root.
      const focused = inUi(e) && state.shadow ? state.shadow.activeElement : null;
      if (focused && ["input", "textarea", "select"].includes(focused.localName)) return;
      const act = { ArrowUp: "grow", "+": "grow", "=": "grow", ArrowDown: "shrink", "-": "shrink", Enter: "add",
        Backspace: "undo", s: "save", S: "save" }[e.key];
      if (!act || e.ctrlKey || e.metaKey || e.altKey) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      annot[act]();
    }, true);
    const redraw = () => renderAnnot();
    listen(window, "resize", redraw);
    renderAnnot("click a word inside the main content");
  }

  const view = {
    get stage() {
      return state.stage;
    },

    busy() {
      toast("Centrum: analysing the page\u2026");
      return { stage: state.stage };
    },

    highlight(result) {
      const map = nodeList();
      const nodes = (result.nodes || []).map((i) => map[i]).filter((el) => el && el.nodeType === 1 && el.isConnected);
      state.algorithm = result.algorithm || "";
      if (!nodes.length && !result.text) {
        state.stage = "message";
        toast(`Centrum found no main content on this page${result.message ? `: ${result.message}` : "."}`, "error",
          ["debugger", "annotate"]);
        return { stage: state.stage, nodes: 0, message: result.message || "" };
      }
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
    },

    /* The clean reader content as data (for the reader tab). */
    readerData() {
      return clean.tree(state.nodes, state.text);
    },

    reader(settings) {
      unmark();
      const reader = showReader(clean.tree(state.nodes, state.text), settings);
      document.documentElement.setAttribute(STAGE, "reader");
      state.stage = "reader";
      return { stage: state.stage, chars: reader.textContent.length };
    },

    debugger(data) {
      unmark();
      clearShadow();
      state.scroll = state.scroll || [window.scrollX, window.scrollY];
      const params = {};
      const defaults = {};
      for (const a of data.algorithms || []) {
        params[a.name] = {};
        defaults[a.name] = a.params || {};
      }
      state.debug = { ...data, params, defaults, overlay: true, status: null };
      document.documentElement.setAttribute(STAGE, "debugger");
      state.stage = "debugger";
      const redraw = () => state.stage === "debugger" && renderDebugger();
      listen(window, "resize", redraw);
      renderDebugger();
      return { stage: state.stage, algorithms: Object.keys(data.results) };
    },

    annotate(options) {
      unmark();
      clearShadow();
      state.scroll = state.scroll || [window.scrollX, window.scrollY];
      document.documentElement.setAttribute(STAGE, "annotate");
      state.stage = "annotate";
      startAnnotator(options && options.annotator);
      return { stage: state.stage };
    },

    /* The closed shadow root, for code running in this isolated world only (the end-to-end tests reach the panels
       through it over the DevTools protocol); the page has no way to call this. */
    uiRoot() {
      return state.shadow;
    },

    restore() {
      detach();
      unmark();
      if (state.ui) state.ui.remove();
      state.ui = null;
      state.shadow = null;
      if (state.scroll) window.scrollTo(state.scroll[0], state.scroll[1]);
      state.nodes = [];
      state.text = null;
      state.scroll = null;
      state.debug = null;
      state.annot = null;
      state.stage = "idle";
      return { stage: state.stage };
    },

    error(err) {
      unmark();
      state.nodes = [];
      state.stage = "message";
      const field = err.field ? ` (${err.field})` : "";
      toast(`Centrum: ${err.message}${field}\n[${err.code}]`, "error");
      return { stage: state.stage, error: err };
    },
  };

  // A symbol key: no element id, form control name or frame name on the page can stand in for it.
  globalThis[KEY] = view;
})();
