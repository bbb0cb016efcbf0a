/* Centrum settings: every stored option and its default, in one place for the background, the options page, the
 * reader (in the page and in its tab) and the debugger. Stored in storage.local under these names. */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.settings");
  if (globalThis[KEY]) return;

  const DEFAULTS = Object.freeze({
    algorithm: "", // "" = the host's default algorithm
    params: null, // parameters of `algorithm` ({name: value}); null = its defaults
    timeoutMs: 120000,
    maxRequestBytes: 0, // 0 = the browser's own limit (messaging.js)
    readerTheme: "light", // "light" | "dark"
    readerFontSize: 20, // px
    readerIn: "page", // "page" | "tab"
    // Send the page's HTML along (to the local host only) so the reader shows byline, site and date and can copy
    // or save the article as Markdown / HTML; without it only title and reading time are known.
    readerMetadata: true,
  });
  const READER_KEYS = ["readerTheme", "readerFontSize", "readerIn", "readerMetadata"];
  const pick = (keys) => Object.fromEntries(keys.map((k) => [k, DEFAULTS[k]]));

  // Values as stored may come from an older version or a hand edit: every one is checked before use.
  const VALID = {
    algorithm: (v) => typeof v === "string" && /^([a-z][a-z0-9_-]{0,39})?$/.test(v),
    params: (v) => v === null || (typeof v === "object" && !Array.isArray(v)),
    timeoutMs: (v) => Number.isInteger(v) && v >= 1 && v <= 3600000,
    maxRequestBytes: (v) => Number.isInteger(v) && v >= 0,
    readerTheme: (v) => v === "light" || v === "dark",
    readerFontSize: (v) => Number.isInteger(v) && v >= 12 && v <= 40,
    readerIn: (v) => v === "page" || v === "tab",
    readerMetadata: (v) => typeof v === "boolean",
  };

  /* The stored settings of `keys` (default: all) with defaults for missing or invalid values. */
  async function load(storage, keys = Object.keys(DEFAULTS)) {
    const stored = await storage.get(pick(keys));
    return Object.fromEntries(keys.map((k) => [k, VALID[k](stored[k]) ? stored[k] : DEFAULTS[k]]));
  }

  globalThis[KEY] = { DEFAULTS, READER: Object.freeze(pick(READER_KEYS)), READER_KEYS, VALID, load };
})();
