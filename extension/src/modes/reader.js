/* Centrum reader mode in the page: the main content rebuilt from the clean description (clean.js), laid out by
 * readerview.js with the host's metadata, in the closed shadow root over the page. Esc (ui.js), × or the button
 * restores the page. (src/reader.js is the reader in its own tab.) */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.mode.reader");
  if (globalThis[KEY]) return;
  const { clean, state, STAGE, view, h, unmark, clearShadow, addStyle, nodeList } =
    globalThis[Symbol.for("centrum.ui")];
  const readerview = globalThis[Symbol.for("centrum.readerview")];

  addStyle(".reader { position: fixed; inset: 0; z-index: 2147483646; overflow: auto; outline: none; }");

  /* Host node ids as this page's elements (ids that are not elements here are skipped). */
  function elementsOf(ids) {
    const map = nodeList();
    return (Array.isArray(ids) ? ids : []).filter((i) => Number.isSafeInteger(i) && i >= 0).map((i) => map[i])
      .filter((el) => el && el.nodeType === 1 && el.isConnected);
  }

  /* The comments the answer set aside (the host's `comments`, PROTOCOL.md "Comments"), cleaned as the content is,
     with their count; null without any. */
  function commentsData(comments) {
    if (!comments || typeof comments !== "object") return null;
    const els = elementsOf(comments.nodes);
    const blocks = els.length ? clean.tree(els, "").blocks : [];
    const count = Number.isSafeInteger(comments.count) && comments.count > 0 ? comments.count : 0;
    return blocks.length ? { count, blocks } : null;
  }

  /* The clean reader content as data, with what the host said of the page (for the reader here and in a tab). */
  function readerData() {
    const r = state.result || {};
    // The host's `disclosed` ids (collapsed panels whose text is in the answer), as this page's elements.
    const data = clean.tree(state.nodes, state.text, elementsOf(r.disclosed));
    data.comments = commentsData(r.comments);
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
      // From the full snapshot's judgement when the press collected without it (background.js readerOutputs).
      if (Array.isArray(o.disclosed)) r.disclosed = o.disclosed;
    }
    return { stage: state.stage };
  }

  function reader(settings) {
    unmark();
    const shadow = clearShadow();
    const shown = h("div", { class: "reader", role: "document" });
    shadow.appendChild(shown);
    readerview.fill(document, shown, readerData(), settings, () => view().restore(), readerview.t("readerNote"));
    document.documentElement.setAttribute(STAGE, "reader");
    state.stage = "reader";
    // The keyboard goes to the reader at once: Esc (ui.js) and the arrow keys work without a click first. Firefox
    // otherwise leaves the focus where the press left it (the toast's button, removed with the toast) and sends
    // the keys nowhere until the reader is clicked.
    shown.setAttribute("tabindex", "-1");
    shown.focus({ preventScroll: true });
    return { stage: state.stage, chars: shown.textContent.length };
  }

  globalThis[KEY] = { reader, readerData, setOutputs };
})();
