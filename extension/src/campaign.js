/* Centrum background: annotation campaigns (host requests campaign.*, PROTOCOL.md "Campaigns").
 *
 * The campaign the annotator joined lives in storage.local ("campaign": name, annotator, the served origin), so a
 * browser restart resumes: the host answers campaign.next with the open assignment. Pages are keyed by campaign
 * page id; a page served by `centrum serve` is opened at <origin>/p/<id> (host name and port change between runs:
 * joining again from any page of the new server updates it). activeTab ends when the tab navigates: the panel
 * comes back on the annotator's next press on the new page.
 *
 * Loaded before background.js (importScripts / manifest order); uses its host port, collect(), snapshots,
 * getHostInfo() and settings() at call time. Every field a panel relays is checked here (campaignChecked) before
 * anything is done, and the host checks them again.
 */
"use strict";

const CAMPAIGN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const CAMPAIGN_PAGE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const MAX_REASON = 1000; // characters
const CAMPAIGN_FIELDS = {
  "centrum.campaign.join": ["campaign", "annotator"],
  "centrum.campaign.submit": ["nodes"],
  "centrum.campaign.skip": [],
  "centrum.campaign.flag": ["reason"],
  "centrum.campaign.leave": [],
  "centrum.campaign.review": [],
  "centrum.campaign.adjudicate": ["pick", "nodes"],
  "centrum.campaign.goto": ["page_id"],
};
// The suggestion shown on each tab (the default extractor's nodes in the tab's snapshot), for campaign.submit.
const suggestions = new Map();

function campaignRefuse(message) {
  throw new CentrumError("E_REQUEST", message);
}

function plainText(value, max) {
  const control = (c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127;
  return typeof value === "string" && value.trim() !== "" && value.length <= max && ![...value].some(control);
}

function nodeIdList(nodes) {
  return Array.isArray(nodes) && nodes.length > 0 && nodes.length <= 10000 &&
    nodes.every((n) => Number.isSafeInteger(n) && n >= 0) && new Set(nodes).size === nodes.length;
}

/* The fields of a valid campaign message, or E_REQUEST (a panel's message is relayed from a page's world). */
function campaignChecked(m) {
  const allowed = CAMPAIGN_FIELDS[m.type];
  const extra = Object.keys(m).filter((k) => k !== "type" && !allowed.includes(k));
  if (extra.length) campaignRefuse(`unknown field(s) ${extra.slice(0, 5).join(", ")} in ${m.type}`);
  if (m.type === "centrum.campaign.join") {
    if (typeof m.campaign !== "string" || !CAMPAIGN_NAME.test(m.campaign)) campaignRefuse("campaign must be a name");
    if (!plainText(m.annotator, 200)) campaignRefuse("annotator must be a name of 1 to 200 characters");
  }
  if (m.type === "centrum.campaign.submit" && !nodeIdList(m.nodes)) campaignRefuse("nodes must be node ids");
  if (m.type === "centrum.campaign.flag" && !plainText(m.reason, MAX_REASON)) {
    campaignRefuse(`a flag needs a reason of 1 to ${MAX_REASON} characters`);
  }
  if (m.type === "centrum.campaign.adjudicate" &&
      (m.pick === undefined) === (m.nodes === undefined || m.nodes === null)) {
    campaignRefuse("adjudicate takes pick (a label id) or nodes (a merged selection)");
  }
  if (m.pick !== undefined && !(Number.isSafeInteger(m.pick) && m.pick > 0)) campaignRefuse("pick must be a label id");
  if (m.nodes !== undefined && m.nodes !== null && !nodeIdList(m.nodes)) campaignRefuse("nodes must be node ids");
  if (m.type === "centrum.campaign.goto" && !(typeof m.page_id === "string" && CAMPAIGN_PAGE_ID.test(m.page_id))) {
    campaignRefuse("page_id must be a campaign page id");
  }
  return m;
}

async function joined() {
  const { campaign } = await api.storage.local.get({ campaign: null });
  return campaign && typeof campaign.name === "string" ? campaign : null;
}

// `centrum serve` answers at a host name of its own run (centrum/annotation/serve.py: 16 hex digits under centrum.localhost,
// which browsers resolve to the loopback interface), never at 127.0.0.1, whose cookie jar other local services share.
const SERVED_HOST = /^[0-9a-f]{16}\.centrum\.localhost$/;
const MAX_CAMPAIGN_URL = 8192; // characters, as the host's campaign URLs (centrum/annotation/campaigns.py)

/* The origin of a page served by `centrum serve`, or null. */
function servedOrigin(url) {
  try {
    const u = new URL(url);
    return u.protocol === "http:" && SERVED_HOST.test(u.hostname) && u.port !== "" ? u.origin : null;
  } catch {
    return null;
  }
}

/* `url` when it is an http(s) URL of sane length, else E_REQUEST: the host checks campaign URLs when a campaign is
 * made, and this is the second check before the annotator's tab is sent anywhere (never javascript:, file:, data:). */
function httpUrl(url) {
  let u = null;
  try {
    u = typeof url === "string" && url.length <= MAX_CAMPAIGN_URL ? new URL(url) : null;
  } catch {
    u = null;
  }
  if (!u || (u.protocol !== "http:" && u.protocol !== "https:")) {
    campaignRefuse(`not an http(s) URL: ${String(url).slice(0, 80)}`);
  }
  return u.href;
}

/* The address of a campaign page: <served origin>/p/<id>, or the page's own URL for a URL-list campaign. */
function campaignPageUrl(c, next) {
  if (next.dataset !== null && c.origin) return `${c.origin}/p/${encodeURIComponent(next.page_id)}`;
  return next.url === null ? null : httpUrl(next.url);
}

function samePage(a, b) {
  try {
    const x = new URL(a);
    const y = new URL(b);
    return x.origin === y.origin && x.pathname === y.pathname && x.search === y.search;
  } catch {
    return false;
  }
}

/* Is the tab on the joined campaign's server (a press there opens the annotator at once)? */
async function onCampaignPage(tab) {
  const c = await joined();
  return Boolean(c && c.origin && servedOrigin(tab.url) === c.origin);
}

/* The campaign page id of a tab showing a served page, or null. */
function servedPageId(c, url) {
  if (!c.origin || servedOrigin(url) !== c.origin) return null;
  const m = /^\/p\/([A-Za-z0-9][A-Za-z0-9._-]{0,199})$/.exec(new URL(url).pathname);
  return m ? m[1] : null;
}

async function campaignRequest(type, fields) {
  const opts = await settings();
  return await host.request(type, fields, opts.timeoutMs, opts.maxRequestBytes);
}

function progressOf(c, next) {
  return { name: c.name, annotator: c.annotator, page_id: next.page_id, position: next.position, total: next.total,
    finished: next.finished, assignment: next.assignment };
}

/* The annotator's next page: opened in the tab unless the tab shows it already. */
async function campaignNext(tab, c) {
  const next = await campaignRequest("campaign.next", { campaign: c.name, annotator: c.annotator });
  if (next.assignment === null) return { ...progressOf(c, next), done: true };
  const url = campaignPageUrl(c, next);
  if (!url) campaignRefuse("this campaign's pages are served: join it from a page of `centrum serve DIR`");
  if (!samePage(tab.url, url)) {
    await api.tabs.update(tab.id, { url: httpUrl(url) });
    return { ...progressOf(c, next), opening: url };
  }
  return { ...progressOf(c, next), here: true };
}

/* What the annotator panel shows in a campaign: progress, and on the assignment's page the suggestion. */
async function campaignContext(tab, snapshot) {
  const c = await joined();
  if (!c) return null;
  const next = await campaignRequest("campaign.next", { campaign: c.name, annotator: c.annotator });
  const out = { ...progressOf(c, next), done: next.assignment === null, here: false, suggestion: [],
    review: servedPageId(c, tab.url) };
  const url = next.assignment === null ? null : campaignPageUrl(c, next);
  if (url && samePage(tab.url, url)) {
    const opts = await settings();
    const info = await getHostInfo(opts.timeoutMs);
    // The extractor the reader uses (the options page's choice, else the host's default) makes the suggestion; a
    // page it fails on is labelled from nothing rather than not at all.
    const result = await host.request("extract", { algorithm: opts.algorithm || info.default, snapshot, debug: false },
      opts.timeoutMs, opts.maxRequestBytes).catch(() => ({ nodes: [] }));
    suggestions.set(tab.id, { assignment: next.assignment, nodes: result.nodes || [] });
    out.here = true;
    out.suggestion = result.nodes || [];
  }
  return out;
}

function campaignLabel(tab, nodes) {
  const snapshot = snapshots.get(tab.id);
  if (!snapshot) campaignRefuse("the page snapshot was lost: press the button and annotate again");
  const parent = snapshot.elements && snapshot.elements.parent;
  const n = Array.isArray(parent) ? parent.length : (parent && Number.isSafeInteger(parent.count) ? parent.count : 0);
  if (nodes.some((id) => id >= n)) campaignRefuse(`node ids must be below ${n}`);
  return { url: snapshot.page && snapshot.page.url ? snapshot.page.url : tab.url, nodes, snapshot,
    save_id: crypto.randomUUID() };
}

async function campaignHere(tab) {
  const c = await joined();
  if (!c) campaignRefuse("no campaign joined");
  const s = suggestions.get(tab.id);
  if (!s) campaignRefuse("this tab is not on the campaign's page: press the button on it again");
  return { c, s };
}

async function campaignSubmit(tab, nodes) {
  const { c, s } = await campaignHere(tab);
  const saved = await campaignRequest("campaign.submit", { campaign: c.name, annotator: c.annotator,
    assignment: s.assignment, label: campaignLabel(tab, nodes), suggestion: s.nodes });
  suggestions.delete(tab.id);
  return { ...saved, next: await campaignNext(tab, c) };
}

async function campaignEnd(tab, type, reason) {
  const { c, s } = await campaignHere(tab);
  const fields = { campaign: c.name, annotator: c.annotator, assignment: s.assignment };
  if (reason) fields.reason = reason;
  const done = await campaignRequest(type, fields);
  suggestions.delete(tab.id);
  return { ...done, next: await campaignNext(tab, c) };
}

async function campaignReview(tab, m) {
  const c = await joined();
  const pageId = c && servedPageId(c, tab.url);
  if (!pageId) campaignRefuse("review works on a served campaign page (<origin>/p/<id>)");
  const base = { campaign: c.name, reviewer: c.annotator, page_id: pageId };
  if (m.type === "centrum.campaign.review") {
    return await campaignRequest("campaign.review", { ...base, snapshot: snapshots.get(tab.id) || null });
  }
  const fields = m.pick !== undefined ? { ...base, pick: m.pick } : { ...base, label: campaignLabel(tab, m.nodes) };
  return await campaignRequest("campaign.adjudicate", fields);
}

async function campaignJoin(tab, m) {
  const previous = await joined();
  const origin = servedOrigin(tab.url) || (previous && previous.name === m.campaign ? previous.origin : null);
  const c = { name: m.campaign, annotator: m.annotator.trim(), origin };
  // Ask the host first: an unknown campaign or annotator is refused before anything is stored.
  await campaignRequest("campaign.next", { campaign: c.name, annotator: c.annotator });
  await api.storage.local.set({ campaign: c, annotatorName: c.annotator });
  return await campaignNext(tab, c);
}

/* One campaign message of a panel on `tab` (already checked by campaignChecked). */
async function campaignHandle(tab, m) {
  switch (m.type) {
    case "centrum.campaign.join": return await campaignJoin(tab, m);
    case "centrum.campaign.submit": return await campaignSubmit(tab, m.nodes);
    case "centrum.campaign.skip": return await campaignEnd(tab, "campaign.skip");
    case "centrum.campaign.flag": return await campaignEnd(tab, "campaign.flag", m.reason.trim());
    case "centrum.campaign.leave":
      await api.storage.local.remove("campaign");
      suggestions.delete(tab.id);
      return { left: true };
    case "centrum.campaign.goto": {
      const c = await joined();
      if (!c || !c.origin) campaignRefuse("no served campaign joined");
      const url = httpUrl(`${c.origin}/p/${encodeURIComponent(m.page_id)}`);
      await api.tabs.update(tab.id, { url });
      return { opening: url };
    }
    default: return await campaignReview(tab, m);
  }
}
