/* Centrum: the press's snapshot, made in the page for its trip to the host (host/PROTOCOL.md "Compressed snapshot").
 *
 * The press profile: collect.js's snapshot without what no algorithm reads. Its `unseen` judgement (SEEN in
 * collect.js: what lies under each element's text and whether a reader sees it) costs about half of the walk
 * (docs/speed.md), and the page `source` (unless the algorithm reads it; its ld+json texts go instead, `json_ld`)
 * another part, and both serve the reader's
 * outputs only, so the press collects without them and the reader, when it opens, collects the full snapshot and
 * hands its `unseen` and `source` to the host (background.js readerOutputs). Every column
 * the algorithms read is the collector's own, made by the same walk: their answers are the same
 * (tests/e2e/test_transport.py checks the features). collect.js itself is unchanged, so the render cache, keyed by
 * its text, stays valid.
 *
 * The wrapping: one string, `{json: text}` or `{gzip: base64 of its gzip}`, instead of the object itself: the browser
 * then moves one string from the page to the background and on to the host, where the object would be converted
 * value by value on each hop. Gzip (CompressionStream) only above GZIP_ABOVE characters, where the bytes it saves
 * the pipe outweigh its own time in the page (measured per size on docs/speed.md).
 */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.pack");
  if (globalThis[KEY]) return;
  const SEEN = Symbol.for("centrum.seen");
  // Characters of JSON text. Measured per size (docs/speed.md): gzip cut the transfer stage by a third at 10k
  // elements (2.3 MB of JSON with the source) and 50k (11.6 MB); at 1k (233 KB) neither form won beyond the noise.
  const GZIP_ABOVE = 256 * 1024;

  function base64(bytes) {
    if (typeof bytes.toBase64 === "function") return bytes.toBase64();
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(binary);
  }

  /* Base64 of the gzip of `text` as UTF-8 (JSON.stringify escapes lone surrogates, so the text always encodes). */
  async function gzipBase64(text) {
    const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
    return base64(new Uint8Array(await new Response(stream).arrayBuffer()));
  }

  /* collect.js's snapshot; with `press`, the press profile: the walk runs with the unseen judgement switched off
     (collect.js reads SEEN.under and SEEN.judge through its exported object) and the snapshot has no `unseen`
     section, as from a collector before 1.4.0. The judgement is put back before anything else can run. */
  function snapshot(options, press) {
    if (!press) return globalThis.centrumCollect(options);
    const seen = globalThis[SEEN];
    const { judge, under } = seen;
    seen.judge = () => 0;
    seen.under = () => null;
    try {
      const out = globalThis.centrumCollect(options);
      delete out.unseen;
      return out;
    } finally {
      seen.judge = judge;
      seen.under = under;
    }
  }

  // The host's limits on `json_ld` (PROTOCOL.md "Limits": json_ld_scripts, json_ld_chars): collection stops there.
  const JSON_LD_SCRIPTS = 256;
  const JSON_LD_CHARS = 4 * 1024 * 1024;
  const LD_JSON_TYPE = /^\s*application\/ld\+json/i;
  const byTag = Document.prototype.getElementsByTagName;
  const attrOf = Element.prototype.getAttribute;
  const textOf = Object.getOwnPropertyDescriptor(Node.prototype, "textContent").get;

  /* The texts of the page's ld+json scripts in document order, as the page source holds them: what the ensemble's
     declared-text features read, sent on their own when the press does not collect the source. */
  function jsonLd() {
    const out = [];
    let chars = 0;
    for (const script of byTag.call(document, "script")) {
      if (!LD_JSON_TYPE.test(attrOf.call(script, "type") || "")) continue;
      const text = String(textOf.call(script) || "");
      if (out.length >= JSON_LD_SCRIPTS || chars + text.length > JSON_LD_CHARS) break;
      out.push(text);
      chars += text.length;
    }
    return out;
  }

  /* The snapshot wrapped for the host. `how`: {press: bool, form: "json" | "gzip" (default: by size)}. A press
     without the source sends the page's ld+json texts (`json_ld`) instead. */
  async function collect(options, how = {}) {
    const snap = snapshot(options, Boolean(how.press));
    if (how.press && typeof snap.source !== "string") snap.json_ld = jsonLd();
    const text = JSON.stringify(snap);
    const form = how.form || (text.length > GZIP_ABOVE ? "gzip" : "json");
    return form === "gzip" ? { gzip: await gzipBase64(text) } : { json: text };
  }

  /* What the full collection adds to a press-profile snapshot, for the reader opening after it: its `unseen`
     section and, with options.source, its `source`. */
  function rest(options) {
    const full = globalThis.centrumCollect(options);
    const out = { unseen: full.unseen || null };
    if (typeof full.source === "string") out.source = full.source;
    return out;
  }

  globalThis[KEY] = { collect, rest, gzipBase64, base64 };
})();
