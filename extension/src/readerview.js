/* Centrum reader layout, shared by the in-page reader (modes/reader.js, inside the closed shadow root) and the
 * reader tab (reader.js): the header with the page's metadata, the clean content (clean.js build), the toolbar
 * (text size, theme, where it opens, Copy as Markdown, Save) and the reader's styles (screen and print).
 *
 * The metadata, Markdown and HTML come from the host's outputs answer, asked for when the reader opens (PROTOCOL.md
 * "Reader outputs"): the host is the one place that builds them. Strings come from _locales through i18n.getMessage.
 */
"use strict";

(() => {
  const KEY = Symbol.for("centrum.readerview");
  if (globalThis[KEY]) return;
  const clean = globalThis[Symbol.for("centrum.clean")];
  const settings = globalThis[Symbol.for("centrum.settings")];
  const { api, trusted } = clean;

  // i18n is looked up on its own: a page that hides `runtime` from this world (clean.js) may leave i18n reachable.
  const i18n = [globalThis.browser, globalThis.chrome].find((ns) => {
    try {
      return Boolean(ns) && typeof ns.i18n.getMessage === "function";
    } catch (e) {
      return false;
    }
  });
  /* The extension's own string `key` in the browser's language (the key itself when there is no i18n API). */
  const t = (key, ...subs) => (i18n && i18n.i18n.getMessage(key, subs.map(String))) || key;

  // Scripts whose text needs its own typography when the page does not say its language.
  const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/g;
  const RTL = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]/g;
  const LETTER = /\p{L}/gu;

  /* "cjk", "rtl" or "" from the characters of the first few thousand of `text` (half the letters or more). */
  function scriptOf(text) {
    const sample = String(text || "").slice(0, 4000);
    const letters = (sample.match(LETTER) || []).length;
    if (!letters) return "";
    if ((sample.match(CJK) || []).length * 2 >= letters) return "cjk";
    if ((sample.match(RTL) || []).length * 2 >= letters) return "rtl";
    return "";
  }

  function formatDate(iso, lang) {
    // A date without a time is a calendar day: shown as that day in every time zone.
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(iso);
    try {
      return new Intl.DateTimeFormat(lang || undefined, { dateStyle: "long", ...(dateOnly ? { timeZone: "UTC" } : {}) })
        .format(d);
    } catch (e) {
      return new Intl.DateTimeFormat(undefined, { dateStyle: "long" }).format(d);
    }
  }

  // A title as compared with a heading: letters and digits only, case and compatibility forms folded, so that
  // quotes, dashes, spaces and a trailing full stop do not make the same headline two.
  const titleKey = (s) => String(s || "").normalize("NFKC").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, "");
  const textOf = (item) => (typeof item === "string" ? item : (item.c || []).map(textOf).join(""));
  const TITLE_LOOK = 4; // text blocks looked at before the body's text is taken to have begun
  const TITLE_BODY = 200; // characters of one block that are the body's text, not a heading or a date line

  /* The one rule for a headline said twice (header, then the body's first line): the header says the title; the
     body's first text block that repeats it (a heading, or the line a page styled as one), before the text begins,
     is taken out of `items` (the clean tree, changed in place). Whatever comes first in the page (a section name,
     the date) may precede it. Returns whether it removed one. */
  function dropRepeatedTitle(items, title) {
    const key = titleKey(title);
    if (!key) return false;
    let looked = 0;
    const visit = (list, depth) => {
      for (let i = 0; list && i < list.length; i++) {
        const item = list[i];
        if (!item || typeof item !== "object" || depth > 20) {
          if (typeof item === "string" && item.trim()) looked++;
          continue;
        }
        const own = /^(h[1-6]|p|figcaption|li|dt|dd|td|th)$/.test(item.t) || !(item.c || []).some((c) =>
          c && typeof c === "object" && /^(h[1-6]|p|div|section|article|header|ul|ol|table|figure|blockquote)$/
            .test(c.t));
        if (!own) {
          const found = visit(item.c, depth + 1);
          if (found !== null) return found;
          continue;
        }
        const text = textOf(item);
        if (!text.trim()) continue;
        if (titleKey(text) === key) {
          list.splice(i, 1);
          return true;
        }
        if (++looked >= TITLE_LOOK || text.length > TITLE_BODY) return false;
      }
      return looked >= TITLE_LOOK ? false : null;
    };
    return visit(items, 0) === true;
  }

  function span(doc, cls, text, tag = "span") {
    const el = doc.createElement(tag);
    el.className = cls;
    el.textContent = text;
    return el;
  }

  /* The header: site, title, byline, date and reading time, each when known. */
  function header(data, doc, note) {
    const meta = data.meta || {};
    const head = doc.createElement("header");
    head.className = "head";
    // Without a declared site name the host names it, unless it is an address or this machine (a served file).
    const host = /^(\[.*\]|[\d.]+|localhost)$/i.test(data.host || "") ? "" : data.host || "";
    head.appendChild(span(doc, "site", meta.sitename || host));
    const title = meta.title || data.title || "";
    if (title) head.appendChild(span(doc, "title", title, "h1"));
    const line = doc.createElement("div");
    line.className = "meta";
    const parts = [];
    if (meta.author) parts.push(span(doc, "byline", meta.author));
    if (meta.date) {
      const time = span(doc, "date", formatDate(meta.date, meta.language || data.lang), "time");
      time.setAttribute("datetime", meta.date);
      parts.push(time);
    }
    if (meta.reading_minutes) parts.push(span(doc, "reading", t("readingMinutes", meta.reading_minutes)));
    parts.forEach((p, i) => line.append(...(i ? [" \u00b7 ", p] : [p])));
    if (parts.length) head.appendChild(line);
    if (note) head.appendChild(span(doc, "note", note));
    return head;
  }

  /* The whole reader <article>: header and content, laid out for the text's script. */
  function article(data, doc, note) {
    const art = doc.createElement("article");
    const lang = data.lang || (data.meta && data.meta.language) || "";
    if (lang) art.setAttribute("lang", lang);
    const body = doc.createElement("div");
    body.className = "content";
    // data is this opening's own (readerData, or the tab's stored copy): its tree may be changed in place.
    const blocks = Array.isArray(data.blocks) ? data.blocks : [];
    dropRepeatedTitle(blocks, (data.meta && data.meta.title) || data.title);
    clean.build(blocks, doc, body);
    // Without a declared language the characters decide: CJK typography, right to left for Arabic or Hebrew.
    const script = /^(zh|ja|ko)\b/i.test(lang) ? "cjk" : (lang ? "" : scriptOf(body.textContent));
    if (script === "cjk") art.classList.add("cjk");
    art.setAttribute("dir", data.dir === "rtl" || script === "rtl" ? "rtl" : "ltr");
    art.append(header(data, doc, note));
    const lead = leadImage(data, doc, body);
    if (lead) art.appendChild(lead);
    art.appendChild(body);
    const comments = commentsSection(data, doc);
    if (comments) art.appendChild(comments);
    return art;
  }

  /* The comments the answer set aside (data.comments, from the host's `comments`: PROTOCOL.md "Comments"), as a
     collapsed "Comments (N)" section at the end, built when the reader opens it. */
  function commentsSection(data, doc) {
    const c = data.comments;
    if (!c || typeof c !== "object" || !Array.isArray(c.blocks) || !c.blocks.length) return null;
    const section = doc.createElement("details");
    section.className = "comments";
    const summary = doc.createElement("summary");
    summary.textContent = Number.isSafeInteger(c.count) && c.count > 0 ? t("commentsCount", c.count) : t("comments");
    section.appendChild(summary);
    const body = doc.createElement("div");
    body.className = "content";
    section.appendChild(body);
    section.addEventListener("toggle", trusted(() => {
      if (section.open && !body.firstChild) clean.build(c.blocks, doc, body);
    }));
    return section;
  }

  /* The page's lead image (og:image, JSON-LD) above the text when the content does not show it already: news pages
     often keep their hero picture outside the article element. */
  function leadImage(data, doc, body) {
    const src = data.meta && data.meta.image;
    if (typeof src !== "string" || !/^https?:/i.test(src)) return null;
    if ([...body.querySelectorAll("img")].some((img) => img.getAttribute("src") === src)) return null;
    const figure = doc.createElement("figure");
    figure.className = "lead";
    const img = doc.createElement("img");
    // A picture that fails to load goes, rather than leave an empty band above the text (listened to before the
    // address is set, so that no failure comes first).
    img.addEventListener("error", () => figure.remove(), { once: true });
    img.setAttribute("src", src);
    img.setAttribute("alt", "");
    img.setAttribute("loading", "lazy");
    figure.appendChild(img);
    return figure;
  }

  const safeName = (title) => (String(title || "article").replace(/[\\/:*?"<>|\u0000-\u001f]+/g, " ").trim()
    .slice(0, 100) || "article");

  /* A standalone HTML file of the reader's article, when the host gave none (a snapshot without source). */
  function htmlFile(data, art) {
    const doc = art.ownerDocument.implementation.createHTMLDocument(data.meta?.title || data.title || "");
    const meta = doc.createElement("meta");
    meta.setAttribute("charset", "utf-8");
    doc.head.prepend(meta);
    doc.body.appendChild(doc.importNode(art, true));
    return `<!DOCTYPE html>\n${doc.documentElement.outerHTML}\n`;
  }

  /* Copy `text`: the async clipboard where the page is a secure context, else a selected field and the copy
     command (http pages have no navigator.clipboard; the click is the user's, so the command is allowed). */
  async function copyText(text, root) {
    if (globalThis.isSecureContext && navigator.clipboard && navigator.clipboard.writeText) {
      try {
        await navigator.clipboard.writeText(text);
        return true;
      } catch (e) {
        // no focus or refused: the copy command below may still work
      }
    }
    const doc = root.ownerDocument || root;
    const area = doc.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.cssText = "position: fixed; top: 0; left: 0; width: 1px; height: 1px; opacity: 0;";
    root.appendChild(area);
    area.focus();
    area.select();
    let ok = false;
    try {
      ok = doc.execCommand("copy");
    } finally {
      area.remove();
    }
    return ok;
  }

  /* Save `content` as a file through a blob link (a download the user started: no permission needed). */
  function saveFile(doc, content, type, name) {
    const url = URL.createObjectURL(new Blob([content], { type }));
    const a = doc.createElement("a");
    a.href = url;
    a.download = name;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }


  // Without the API (see clean.js) a setting applies to this reader only.
  const storage = () => (api ? api.storage.local : { set: () => Promise.resolve() });

  function barButton(doc, bar, name, label, title, fn) {
    const b = doc.createElement("button");
    b.type = "button";
    b.dataset.action = name;
    b.textContent = label;
    b.title = title;
    b.addEventListener("click", trusted(fn));
    bar.appendChild(b);
    return b;
  }

  /* Copy as Markdown and Save (HTML or Markdown), with a status line saying what happened. */
  function exportButtons(doc, bar, data, art, root) {
    const status = span(doc, "status", "");
    status.setAttribute("role", "status");
    const title = safeName(data.meta?.title || data.title);
    const say = (text) => {
      status.textContent = text;
    };
    const copy = barButton(doc, bar, "copy", t("copyMarkdown"), t("copyMarkdownTitle"), async () => {
      const ok = await copyText(data.markdown, root).catch(() => false);
      say(ok ? t("copied") : t("copyFailed"));
    });
    barButton(doc, bar, "save-html", t("saveHtml"), t("saveHtmlTitle"), () => {
      saveFile(doc, data.html || htmlFile(data, art), "text/html;charset=utf-8", `${title}.html`);
      say(t("saved", `${title}.html`));
    });
    const saveMd = barButton(doc, bar, "save-markdown", t("saveMarkdown"), t("saveMarkdownTitle"), () => {
      saveFile(doc, data.markdown, "text/markdown;charset=utf-8", `${title}.md`);
      say(t("saved", `${title}.md`));
    });
    // Markdown is made by the host from the page's HTML: without it (the option is off) there is none.
    if (typeof data.markdown !== "string") {
      for (const b of [copy, saveMd]) {
        b.disabled = true;
        b.title = t("markdownUnavailable");
      }
    }
    bar.appendChild(status);
  }

  /* Reader toolbar: text size, theme, where the reader opens (each change stored), Copy, Save, close. */
  function toolbar(doc, reader, prefs, onClose, exports) {
    const bar = doc.createElement("div");
    bar.className = "bar";
    const apply = () => {
      reader.classList.toggle("dark", prefs.readerTheme === "dark");
      reader.style.setProperty("--size", `${prefs.readerFontSize}px`);
      theme.textContent = prefs.readerTheme === "dark" ? t("themeLight") : t("themeDark");
      where.value = prefs.readerIn;
    };
    const save = (patch) => {
      Object.assign(prefs, patch);
      apply();
      return storage().set(patch);
    };
    if (exports) exportButtons(doc, bar, exports.data, exports.article, exports.root);
    const button = (...args) => barButton(doc, bar, ...args);
    button("smaller", "A\u2212", t("smallerText"), () => save({ readerFontSize: Math.max(12, prefs.readerFontSize - 2) }));
    button("larger", "A+", t("largerText"), () => save({ readerFontSize: Math.min(40, prefs.readerFontSize + 2) }));
    const theme = button("theme", "", t("themeTitle"), () =>
      save({ readerTheme: prefs.readerTheme === "dark" ? "light" : "dark" }));
    const where = doc.createElement("select");
    where.dataset.action = "reader-in";
    where.title = t("readerInTitle");
    for (const [value, label] of [["page", t("readerInPage")], ["tab", t("readerInTab")]]) {
      const o = doc.createElement("option");
      o.value = value;
      o.textContent = label;
      where.appendChild(o);
    }
    where.addEventListener("change", trusted(() => save({ readerIn: where.value })));
    bar.appendChild(where);
    if (onClose) button("close", "\u00d7", t("closeReader"), onClose);
    apply();
    return bar;
  }

  /* The reader: toolbar over the article, in `reader` (a div.reader the caller placed). */
  function fill(doc, reader, data, prefs, onClose, note) {
    const art = article(data, doc, note);
    reader.append(toolbar(doc, reader, { ...settings.READER, ...(prefs || {}) }, onClose,
      { data, article: art, root: reader }), art);
    return art;
  }

  // Reader styles: the in-page reader (inside a shadow root) and the reader tab use the same sheet. Printing gives
  // the article only: no toolbar, no page behind it (ui.css hides the page while the reader is shown), black on white.
  const READER_CSS = `
    .reader { --bg: #fbfaf7; --fg: #1b1b1b; --muted: #666; --link: #1c5fb0; --code: #f1efe9; --rule: #ccc;
      background: var(--bg); color: var(--fg); }
    .reader.dark { --bg: #1d1f21; --fg: #e6e3dc; --muted: #9a9a9a; --link: #8ab4f8; --code: #2a2d30; --rule: #555; }
    .reader article { max-width: 42em; margin: 0 auto; padding: 40px 24px 96px; font-size: var(--size, 20px);
      line-height: 1.65; font-family: Georgia, "Noto Serif", "Noto Serif CJK JP", serif; overflow-wrap: break-word; }
    .reader article article { padding: 0; margin: 0; max-width: none; font-size: inherit; }
    .reader article.cjk { line-height: 1.9; font-family: "Noto Sans CJK JP", "Noto Serif CJK JP", sans-serif;
      text-align: start; line-break: strict; }
    .reader .head { margin-bottom: 32px; font: 14px/1.5 system-ui, sans-serif; color: var(--muted); }
    .reader .head .site { display: block; text-transform: uppercase; letter-spacing: .04em; font-size: 12px; }
    .reader .head h1.title { font: bold 1.6em/1.25 system-ui, sans-serif; color: var(--fg); margin: 4px 0 8px; }
    .reader .head .byline { color: var(--fg); font-weight: 600; }
    .reader .head .note { display: block; font-size: 12px; margin-top: 4px; }
    .reader img { max-width: 100%; height: auto; }
    .reader figure { margin: 1em 0; } .reader figcaption { font-size: .85em; color: var(--muted); }
    .reader figure.lead { margin: 0 0 32px; }
    .reader .content small { font: .8em/1.4 system-ui, sans-serif; color: var(--muted); }
    .reader .content p:has(> small:only-child) { margin: 1.4em 0 .3em; line-height: 1.3; }
    .reader .content p:has(> small:only-child) + p:has(> small:only-child) { margin-top: 0; }
    .reader details.comments { margin-top: 48px; border-top: 1px solid var(--rule); padding-top: 12px; }
    .reader details.comments > summary { cursor: pointer; font: bold 16px system-ui, sans-serif; }
    .reader details.comments > .content { font-size: .85em; }
    .reader pre { overflow: auto; font-size: .75em; line-height: 1.45; background: var(--code); padding: 12px;
      white-space: pre; direction: ltr; text-align: left; }
    .reader code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
    .reader table { border-collapse: collapse; display: block; overflow-x: auto; }
    .reader td, .reader th { border: 1px solid var(--rule); padding: 4px 8px; }
    .reader a { color: var(--link); }
    .reader blockquote { border-inline-start: 3px solid var(--rule); margin-inline: 0; padding-inline-start: 1em; }
    .reader .bar { position: sticky; top: 0; display: flex; flex-wrap: wrap; gap: 6px; justify-content: flex-end;
      align-items: center; padding: 8px 12px; font: 13px system-ui, sans-serif; background: var(--bg);
      border-bottom: 1px solid var(--rule); z-index: 1; }
    .reader .bar button, .reader .bar select { font: 13px system-ui, sans-serif; padding: 3px 8px;
      color: var(--fg); background: var(--code); border: 1px solid var(--rule); border-radius: 3px; cursor: pointer; }
    .reader .bar button:disabled { opacity: .5; cursor: default; }
    .reader .bar .status { color: var(--muted); margin-inline-end: auto; }
    @media print {
      .reader { position: static !important; overflow: visible !important; --bg: #fff; --fg: #000; --link: #000; }
      .reader .bar, .reader .head .note { display: none !important; }
      .reader article { max-width: none; padding: 0; font-size: 12pt; }
      .reader pre { white-space: pre-wrap; }
    }
  `;

  globalThis[KEY] = { t, article, toolbar, fill, scriptOf, dropRepeatedTitle, READER_CSS, api };
})();
