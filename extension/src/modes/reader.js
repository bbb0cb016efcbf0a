/* Centrum reader mode in the page: the main content rebuilt from the clean description (clean.js), laid out by
 * readerview.js with the host's metadata, in the closed shadow root over the page. Esc or the button restores the
 * page. (src/reader.js is the reader in its own tab.) */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.mode.reader");
  if (globalThis[KEY]) return;
  const { clean, state, STAGE, view, h, unmark, clearShadow, listen, addStyle, nodeList } =
    globalThis[Symbol.for("centrum.ui")];
  const readerview = globalThis[Symbol.for("centrum.readerview")];

  addStyle(".reader { position: fixed; inset: 0; z-index: 2147483646; overflow: auto; }");

  /* The clean reader content as data, with what the host said of the page (for the reader here and in a tab). */
  function readerData() {
    const r = state.result || {};
    // The host's `disclosed` ids (collapsed panels whose text is in the answer), as this page's elements.
    const map = nodeList();
    const ids = Array.isArray(r.disclosed) ? r.disclosed.filter((i) => Number.isSafeInteger(i) && i >= 0) : [];
    const disclosed = ids.map((i) => map[i]).filter((el) => el && el.nodeType === 1);
    const data = clean.tree(state.nodes, state.text, disclosed);
    data.meta = r.metadata && typeof r.metadata === "object" ? r.metadata : null;
    data.markdown = typeof r.markdown === "string" ? r.markdown : null;
    data.html = typeof r.html === "string" ? r.html : null;
    return data;
  }

  /* What the host sent for the reader (an outputs answer): kept with the highlight's result, read by readerData. */
  function setOutputs(o) {
    const r = state.result;
    if (r && o && typeof o === "object") {
      r.metadata = o.metadata && typeof o.metadata === "object" ? o.metadata : null;
      r.markdown = typeof o.markdown === "string" ? o.markdown : null;
      r.html = typeof o.html === "string" ? o.html : null;
    }
    return { stage: state.stage };
  }

  function reader(settings) {
    unmark();
    const shadow = clearShadow();
    const shown = h("div", { class: "reader", role: "document" });
    shadow.appendChild(shown);
    readerview.fill(document, shown, readerData(), settings, () => view().restore(), readerview.t("readerNote"));
    // Capture phase on window: Esc reaches this before the page's own handlers and before the shadow root, which
    // keeps key events to itself.
    listen(window, "keydown", (e) => {
      if (e.key !== "Escape" || state.stage !== "reader" || e.ctrlKey || e.metaKey || e.altKey) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      view().restore();
    }, true);
    document.documentElement.setAttribute(STAGE, "reader");
    state.stage = "reader";
    return { stage: state.stage, chars: shown.textContent.length };
  }

  globalThis[KEY] = { reader, readerData, setOutputs };
})();
