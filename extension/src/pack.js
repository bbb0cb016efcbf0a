/* Centrum: the snapshot packed in the page for its trip to the host (host/PROTOCOL.md "Compressed snapshot").
 *
 * The press sends the snapshot as {gzip: base64 of the gzip of its JSON text} instead of the object itself: the
 * browser then moves one short string from the page to the background and on to the host, where the object would be
 * converted value by value twice (page to background, background to the native-messaging JSON) and travel whole.
 * The snapshot is made by collect.js exactly as before; only its wrapping differs.
 */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.pack");
  if (globalThis[KEY]) return;

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

  /* collect.js's snapshot of the page, packed. */
  async function collect(options) {
    return { gzip: await gzipBase64(JSON.stringify(globalThis.centrumCollect(options))) };
  }

  globalThis[KEY] = { collect, gzipBase64, base64 };
})();
