/* Centrum reader mode in the page: the main content rebuilt from the clean description (clean.js), in the closed
 * shadow root over the page. (src/reader.js is the reader in its own tab.) */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.mode.reader");
  if (globalThis[KEY]) return;
  const { clean, state, STAGE, view, h, unmark, clearShadow, addStyle } = globalThis[Symbol.for("centrum.ui")];

  addStyle(".reader { position: fixed; inset: 0; z-index: 2147483646; overflow: auto; }");

  function showReader(data, settings) {
    const shadow = clearShadow();
    const reader = h("div", { class: "reader", role: "document" });
    const prefs = { ...clean.SETTINGS, ...(settings || {}) };
    reader.appendChild(clean.toolbar(document, reader, prefs, () => view().restore()));
    reader.appendChild(clean.article(data, document, `Centrum (${state.algorithm}) \u00b7 press the button again to restore`));
    shadow.appendChild(reader);
    return reader;
  }

  /* The clean reader content as data (for the reader tab). */
  function readerData() {
    return clean.tree(state.nodes, state.text);
  }

  function reader(settings) {
    unmark();
    const shown = showReader(readerData(), settings);
    document.documentElement.setAttribute(STAGE, "reader");
    state.stage = "reader";
    return { stage: state.stage, chars: shown.textContent.length };
  }

  globalThis[KEY] = { reader, readerData };
})();
