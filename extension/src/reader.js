/* Centrum reader tab: shows the clean content the page-side view described as data (clean.js tree), handed over
 * through chrome.storage.local under the key in the URL fragment and deleted once read. Elements are created one by
 * one by centrumClean.build, which checks the allow-lists again: nothing from the page is parsed as HTML here. */
"use strict";

(() => {
  const clean = globalThis[Symbol.for("centrum.clean")];
  const api = clean.api;

  async function show() {
    const key = decodeURIComponent(location.hash.slice(1));
    const style = document.createElement("style");
    style.textContent = `${clean.READER_CSS} html, body { margin: 0; } .reader { min-height: 100vh; }`;
    document.head.appendChild(style);
    const reader = document.createElement("div");
    reader.className = "reader";
    reader.setAttribute("role", "document");
    document.body.appendChild(reader);
    if (!key.startsWith("reader:")) return;
    const stored = await api.storage.local.get(key);
    const data = stored[key];
    if (!data) {
      reader.textContent = "This reader view is gone (it is shown once): press the button on the page again.";
      return;
    }
    await api.storage.local.remove(key);
    const prefs = await api.storage.local.get(clean.SETTINGS);
    document.title = data.title || "Centrum reader";
    reader.appendChild(clean.toolbar(document, reader, prefs, null));
    reader.appendChild(clean.article(data, document, "Centrum reader"));
    document.documentElement.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", () => {
    show().catch((e) => {
      document.body.textContent = `Centrum reader: ${e.message}`;
    });
  });
})();
