/* Centrum reader tab: shows the clean content the page-side view described as data (clean.js tree), handed over
 * through chrome.storage.local under the key in the URL fragment and deleted once read. Elements are created one by
 * one by centrumClean.build, which checks the allow-lists again: nothing from the page is parsed as HTML here.
 * Esc closes the tab. */
"use strict";

(() => {
  const clean = globalThis[Symbol.for("centrum.clean")];
  const readerview = globalThis[Symbol.for("centrum.readerview")];
  const settings = globalThis[Symbol.for("centrum.settings")];
  const api = clean.api;

  async function closeTab() {
    const tab = await api.tabs.getCurrent();
    if (tab) await api.tabs.remove(tab.id);
  }

  async function show() {
    const key = decodeURIComponent(location.hash.slice(1));
    const style = document.createElement("style");
    style.textContent = `${readerview.READER_CSS} html, body { margin: 0; } .reader { min-height: 100vh; }`;
    document.head.appendChild(style);
    const reader = document.createElement("div");
    reader.className = "reader";
    reader.setAttribute("role", "document");
    document.body.appendChild(reader);
    document.addEventListener("keydown", clean.trusted((e) => {
      if (e.key === "Escape" && !e.ctrlKey && !e.metaKey && !e.altKey) closeTab();
    }));
    if (!key.startsWith("reader:")) return;
    const stored = await api.storage.local.get(key);
    const data = stored[key];
    if (!data) {
      reader.textContent = readerview.t("readerGone");
      return;
    }
    await api.storage.local.remove(key);
    const prefs = await settings.load(api.storage.local, settings.READER_KEYS);
    document.title = (data.meta && data.meta.title) || data.title || "Centrum";
    readerview.fill(document, reader, data, prefs, null, "");
    document.documentElement.dataset.ready = "1";
  }

  document.addEventListener("DOMContentLoaded", () => {
    show().catch((e) => {
      document.body.textContent = `Centrum: ${e.message}`;
    });
  });
})();
