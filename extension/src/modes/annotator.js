/* Centrum annotator mode: the user picks the main content node by node (click a word, grow / shrink to the parent
 * or child, add disjoint nodes) and saves it as a label through the background. */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.mode.annotator");
  if (globalThis[KEY]) return;
  const { api, state, view, send, h, listen, layer, docRect, drawBox, nodeList, ensurePanel, enterMode,
    addStyle } = globalThis[Symbol.for("centrum.ui")];

  addStyle(`
    .box.current { outline: 3px dashed #1971c2; background: rgba(25,113,194,.10); }
    .box.picked { outline: 3px solid #2f9e44; background: rgba(47,158,68,.12); }
    .panel.annot { top: auto; left: 12px; right: auto; bottom: 12px; width: 380px; max-height: 60vh;
      border: 1px solid #bbb; border-radius: 4px; }
    .panel.annot ol { padding-left: 22px; margin: 6px 0; }
  `);

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

  function describe(el) {
    const id = nodeIds().get(el);
    const words = (el.innerText || el.textContent || "").trim().split(/\s+/).filter(Boolean).length;
    return `<${el.localName}${el.id ? `#${el.id}` : ""}> node ${id}, ${words} words`;
  }

  function buildPanel(a, panel) {
    a.name = h("input", { class: "annotator", placeholder: "annotator name", value: a.annotator || "" });
    a.status = h("div", { class: "status", role: "status" });
    a.list = h("ol", { class: "picked" });
    const button = (cls, text, fn) => h("button", { class: cls, text, onclick: fn });
    panel.append(
      h("button", { class: "x", title: "close (restores the page)", text: "\u00d7", onclick: () => view().restore() }),
      h("h2", { text: "Centrum annotator" }),
      h("div", { class: "hint", text: "Click a word in the main content. \u2191 / + grows the selection to the parent, " +
        "\u2193 / \u2212 shrinks it back, Enter adds it (several disjoint nodes allowed), S saves." }),
      a.name,
      h("div", {}, button("grow", "Grow \u2191", () => annot.grow()), button("shrink", "Shrink \u2193", () => annot.shrink()),
        button("add", "Add", () => annot.add()), button("undo", "Remove last", () => annot.undo()),
        button("save", "Save label", () => annot.save())),
      a.list, a.status);
  }

  function renderAnnot(statusText, kind = "") {
    const a = state.annot;
    const { panel, created } = ensurePanel("annot", "dialog");
    if (created) buildPanel(a, panel);
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

  function onKey(e) {
    // Typing in the panel's own fields. From window the closed tree is hidden in composedPath(): ask the root.
    const focused = inUi(e) && state.shadow ? state.shadow.activeElement : null;
    if (focused && ["input", "textarea", "select"].includes(focused.localName)) return;
    const act = { ArrowUp: "grow", "+": "grow", "=": "grow", ArrowDown: "shrink", "-": "shrink", Enter: "add",
      Backspace: "undo", s: "save", S: "save" }[e.key];
    if (!act || e.ctrlKey || e.metaKey || e.altKey) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    annot[act]();
  }

  function open(options) {
    enterMode("annotate");
    state.annot = { current: null, below: [], picked: [], ids: null, annotator: (options && options.annotator) || "" };
    // Capture phase on window: the page's own handlers (links, menus) never see the annotator's clicks.
    listen(window, "click", (e) => {
      if (inUi(e)) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      const target = e.composedPath().find((n) => n.nodeType === 1);
      if (target) annot.pick(target);
    }, true);
    listen(window, "keydown", onKey, true);
    listen(window, "resize", () => renderAnnot());
    renderAnnot("click a word inside the main content");
    return { stage: state.stage };
  }

  globalThis[KEY] = { open };
})();
