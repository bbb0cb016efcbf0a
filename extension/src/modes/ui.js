/* Centrum page-side UI toolkit shared by the modes (highlight.js, reader.js, debugger.js, annotator.js) and view.js.
 *
 * A page must not be able to drive or read this UI: it lives in a *closed* shadow root whose only reference is kept
 * in this content script's isolated world (state.shadow), every handler ignores events the page dispatched
 * (isTrusted false), and nothing is found through page-shadowable names: every module is registered under a symbol,
 * not a window property an element id="centrumView" could stand in for. DOM methods are called from the isolated
 * world (Chromium) or through Xray wrappers (Firefox), so the page's overrides of them never run here.
 */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.ui");
  if (globalThis[KEY]) return;

  const clean = globalThis[Symbol.for("centrum.clean")];
  const api = clean.api;
  // On the answer's elements, saying what was chosen; no style keys on it (highlight.js draws the one outline).
  const MARK = "data-centrum-main";
  const DIM = "data-centrum-dim"; // what highlight.js dims by opacity (most of what it dims gets a cover instead)
  const STAGE = "data-centrum-stage";
  const view = () => globalThis[Symbol.for("centrum.view")];

  const BASE_CSS = `
    :host { all: initial !important; }
    .toast { position: fixed; top: 12px; right: 12px; z-index: 2147483647; max-width: 28em; padding: 10px 14px;
      font: 14px/1.4 system-ui, sans-serif; color: #1b1b1b; background: #fff; border-left: 5px solid #e8590c;
      box-shadow: 0 4px 18px rgba(0,0,0,.25); border-radius: 4px; white-space: pre-wrap; }
    .toast.error { border-left-color: #c92a2a; background: #fff5f5; }
    .toast.doubt { border-left-color: #f08c00; background: #fff9db; }
    .toast button.x { float: right; margin-left: 10px; border: 0; background: none; font-size: 16px; cursor: pointer; }
    .toast .modes { display: block; margin-top: 6px; white-space: normal; }
    .toast .modes button, .panel button { font: 12px system-ui, sans-serif; padding: 2px 8px; margin: 2px 4px 0 0;
      border: 1px solid #bbb; background: #f4f4f4; border-radius: 3px; cursor: pointer; color: #1b1b1b; }
    .layer { position: absolute; left: 0; top: 0; width: 0; height: 0; z-index: 2147483645; pointer-events: none; }
    .box { position: absolute; box-sizing: border-box; pointer-events: none; font: 11px/1.2 system-ui, sans-serif; }
    .box > span { position: absolute; left: 0; top: 0; background: rgba(255,255,255,.85); color: #000;
      padding: 0 3px; white-space: nowrap; }
    .panel { position: fixed; top: 0; right: 0; bottom: 0; width: 400px; z-index: 2147483647; overflow: auto;
      font: 13px/1.4 system-ui, sans-serif; color: #1b1b1b; background: #fff; border-left: 1px solid #bbb;
      box-shadow: -4px 0 18px rgba(0,0,0,.2); padding: 10px 12px; box-sizing: border-box; }
    .panel h2 { font: bold 15px system-ui, sans-serif; margin: 0 0 6px; }
    .panel .timing, .panel .status, .panel .hint { color: #555; font-size: 12px; margin: 4px 0; }
    .panel .status.error { color: #c92a2a; } .panel .status.ok { color: #2b8a3e; font-weight: bold; }
    .panel select, .panel input { font: 13px system-ui, sans-serif; width: 100%; box-sizing: border-box; }
    .panel input[type=checkbox] { width: auto; }
    .panel .x { position: absolute; top: 6px; right: 8px; border: 0; background: none; font-size: 18px; }
  `;
  // Each mode adds its own rules at load time (all modes are injected together, before the first ui() call).
  const styles = [BASE_CSS];

  const state = {
    stage: "idle", nodes: [], dimmed: [], undim: null, text: null, algorithm: "", ui: null, shadow: null, scroll: null,
    cleanup: [], // functions undoing listeners this view attached to the page
    busy: false, // an answer the background is working on is awaited (view.busy); cancelled: the user closed it
    cancelled: false,
    debug: null, // debugger data {results, algorithms, timing, selected}
    annot: null, // annotator state
    result: null, // the last extract answer shown (its metadata feeds the reader header)
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
    style.textContent = styles.join("\n") + globalThis[Symbol.for("centrum.readerview")].READER_CSS;
    shadow.appendChild(style);
    document.documentElement.appendChild(el); // outside <body>: never dimmed, never part of the page's layout
    state.ui = el;
    state.shadow = shadow;
    // Whatever is shown (a message, the highlight, the reader, a panel), Esc ends it and restores the page.
    listen(window, "keydown", onEscape, true);
    return shadow;
  }

  /* Esc: the user's way out of every mode. Capture phase on window: it reaches this before the page's handlers
     below the window and before the shadow root, which keeps key events to itself. In a field of a panel it first
     leaves the field (an annotator's name, the debugger's parameters), so Esc there never loses the work. */
  function onEscape(e) {
    if (e.key !== "Escape" || e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    const focused = state.shadow ? state.shadow.activeElement : null;
    if (focused && FIELDS.has(focused.localName) && focused.type !== "checkbox") focused.blur();
    else view().restore();
  }
  const FIELDS = new Set(["input", "textarea"]);

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

  function modeButtons(modes) {
    // The other modes, asked of the background (which holds the activeTab grant and the host port). With nothing
    // found there is nothing to read, but the debugger and the annotator are still useful.
    const open = (mode) => async () => {
      const answer = await send({ type: "centrum.open", mode });
      if (answer && answer.error && answer.error.code === "E_PAGE") view().error(answer.error);
    };
    const { t } = globalThis[Symbol.for("centrum.readerview")];
    const labels = { reader: t("modeReader"), debugger: t("modeDebugger"), annotate: t("modeAnnotate") };
    const list = Array.isArray(modes) ? modes : Object.keys(labels);
    return h("span", { class: "modes" },
      ...list.map((mode) => h("button", { "data-mode": mode, text: labels[mode], onclick: open(mode) })));
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
    // Closing the message ends what it is about too (the outline, the dimming): one click restores the page.
    const close = h("button", { class: "x", title: "close", text: "\u00d7", onclick: () => view().restore() });
    box.prepend(close);
    if (modes) box.appendChild(modeButtons(modes));
    return box;
  }

  function unmark() {
    for (const el of state.nodes) el.removeAttribute(MARK);
    for (const el of state.dimmed) el.removeAttribute(DIM);
    state.dimmed = [];
    if (state.undim) state.undim(); // the highlight's covers (highlight.js) and what keeps them in place
    state.undim = null;
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

  const CORNERS = [["right", "top"], ["right", "bottom"], ["left", "bottom"], ["left", "top"]];

  /* Put `el` (position: fixed) in the viewport corner where it covers least of `rects` (viewport rectangles of what
     it must not hide), the first of `corners` on a tie; its `data-corner` says which. */
  function placeInCorner(el, rects, corners = CORNERS, margin = 12) {
    const p = el.getBoundingClientRect();
    const [W, H] = [document.documentElement.clientWidth || window.innerWidth, window.innerHeight];
    const at = ([x, y]) => [x === "left" ? margin : W - margin - p.width, y === "top" ? margin : H - margin - p.height];
    const cover = (corner) => {
      const [left, top] = at(corner);
      return rects.reduce((sum, r) => sum + Math.max(0, Math.min(left + p.width, r.right) - Math.max(left, r.left)) *
        Math.max(0, Math.min(top + p.height, r.bottom) - Math.max(top, r.top)), 0);
    };
    const best = corners.reduce((x, y) => (cover(y) < cover(x) ? y : x));
    for (const side of ["left", "right", "top", "bottom"]) el.style[side] = "auto";
    el.style[best[0]] = `${margin}px`;
    el.style[best[1]] = `${margin}px`;
    el.dataset.corner = best.join("-");
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

  // Enter a panel mode: the page is unmarked, the UI emptied, the scroll position kept for restore.
  function enterMode(stage) {
    unmark();
    clearShadow();
    state.scroll = state.scroll || [window.scrollX, window.scrollY];
    document.documentElement.setAttribute(STAGE, stage);
    state.stage = stage;
  }

  globalThis[KEY] = {
    clean, api, state, MARK, DIM, STAGE, view, send, trusted, nodeList, ui, h, toast, unmark, detach, listen,
    clearShadow, layer, docRect, drawBox, placeInCorner, element, outlineNodes, ensurePanel, enterMode,
    addStyle: (css) => styles.push(css),
  };
})();
