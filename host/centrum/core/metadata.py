"""Article metadata from a page's serialized source: title, author, date, sitename, language, image, description
(one vocabulary with the JSON and the front matter, docs/outputs.md).

Sources, most explicit first: JSON-LD ``Article``-family objects (``@graph``, lists, nesting and broken JSON
tolerated), OpenGraph / ``article:*`` / Twitter / Dublin Core ``<meta>`` tags, ``<html lang>``, ``<time datetime>``
and a visible byline marked up as such (``itemprop=author``, ``rel=author``, a class naming an author or byline)
near the title. Everything is read from markup conventions, never from words of one language, so it works the same
on any page. The title loses its site-name suffix or prefix ("Story - Site", "Site | Story"). Dates come out as ISO
8601 (``2026-11-20`` or ``2026-11-20T08:30:00+01:00``), URLs absolute.

The caller parses the source once (``centrum.output.outputs.SourcePage``) and shares it with the output builders.
"""

from __future__ import annotations

import copy
import html
import json
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import ParseResult, urljoin, urlparse

if TYPE_CHECKING:
    from lxml.html import HtmlElement

    from .snapshot import Snapshot


class SourcePage(Protocol):
    """What metadata reads of a parsed page (``centrum.output.outputs.SourcePage`` is one): metadata sits below the
    outputs, which read it in turn."""

    root: HtmlElement
    by_id: dict[int, HtmlElement]
    snapshot: Snapshot | None
    url: str
    base_url: str

    def node_id(self, el: HtmlElement) -> int | None: ...

    def shown(self, el: HtmlElement) -> bool: ...

    def inside(self, nodes: set[int], el: HtmlElement) -> bool: ...

# schema.org types whose fields describe the page's article (Article and its usual subtypes, plus the generic
# CreativeWork kinds pages use for posts).
ARTICLE_TYPES = frozenset({
    "article", "newsarticle", "blogposting", "reportagenews", "analysisnewsarticle", "opinionnewsarticle",
    "reviewnewsarticle", "backgroundnewsarticle", "askpublicnewsarticle", "techarticle", "scholarlyarticle",
    "liveblogposting", "socialmediaposting", "discussionforumposting", "report", "medicalscholarlyarticle",
    "satiricalarticle", "advertisercontentarticle", "creativework", "webpage", "qapage", "howto", "recipe",
})
SITE_TYPES = frozenset({"website", "organization", "newsmediaorganization", "corporation"})
# schema.org types by which a page says it is no article: a product, a shop's category, a search result.
NOT_ARTICLE_TYPES = frozenset({"product", "productgroup", "collectionpage", "itempage", "searchresultspage"})
# Separators between a story title and the site name, as pages write them.
TITLE_SEPARATORS = (" | ", " - ", " — ", " – ", " :: ", " · ", " » ", " / ", "_")
EXCERPT_CHARS = 500
# Silent reading rates for the reading-time estimate: words of spaced scripts (Brysbaert 2019, non-fiction: 238 wpm)
# and characters of scripts written without spaces (Chinese/Japanese readers: several hundred characters a minute;
# 500 is the rate Japanese reading-time tools use). Script-fair: a Chinese page is not "one word" long.
WORDS_PER_MINUTE = 238
UNSPACED_CHARS_PER_MINUTE = 500
BYLINE_MAX_CHARS = 120
_AUTHOR_CLASS = re.compile(r"(^|[\s_-])(author|byline|writer)", re.I)
_DATE_PARTS = re.compile(r"(\d{4})\D{1,3}?(\d{1,2})\D{1,3}?(\d{1,2})(?!\d)")


@dataclass
class Metadata:
    # One vocabulary for the API, JSON and front matter: trafilatura's names where they mean the same.
    title: str | None = None
    author: str | None = None
    date: str | None = None  # ISO 8601, the page's own day and offset
    sitename: str | None = None
    language: str | None = None  # BCP 47 tag as the page declares it (en, zh-CN, ar)
    image: str | None = None  # absolute URL of the lead image
    description: str | None = None
    url: str | None = None  # canonical URL when declared, else the page's URL
    direction: str | None = None  # "rtl" or "ltr": the body's computed direction (or the <html dir> markup)
    reading_minutes: int | None = None  # estimated reading time of the main content (see reading_minutes)

    def to_json(self) -> dict[str, str | None]:
        return asdict(self)


def _clean(value: object) -> str | None:
    """Whitespace-collapsed string, or None for empty / non-string values."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        return None
    out = " ".join(value.split())
    return out or None


# ---- JSON-LD --------------------------------------------------------------------------------------------------------
def _url_parts(value: str | None) -> ParseResult:
    """``urlparse``, an address it cannot read ("http://[broken", from a page's markup) read as empty: a hostile
    attribute costs that value, never the page's metadata."""
    try:
        return urlparse(value or "")
    except ValueError:
        return urlparse("")


def _web_address(text: str) -> bool:
    """``text`` is a web address (a profile URL given as a name), readable or not."""
    return text.lstrip().lower().startswith(("http://", "https://"))


def _resolve(base: str, url: str) -> str | None:
    try:
        return urljoin(base, url)
    except ValueError:
        return None


def _load_json_ld(text: str) -> Any:
    """Parse one ld+json block; tolerates HTML comment / CDATA wrappers, raw control characters and trailing commas
    (all seen on real pages). None when it still does not parse."""
    text = text.strip()
    for wrapper in (("<!--", "-->"), ("<![CDATA[", "]]>"), ("//<![CDATA[", "//]]>")):
        if text.startswith(wrapper[0]) and text.endswith(wrapper[1]):
            text = text[len(wrapper[0]): -len(wrapper[1])].strip()
    for attempt in (text, re.sub(r",\s*([}\]])", r"\1", text)):
        try:
            return json.loads(attempt, strict=False)
        except (ValueError, RecursionError):
            continue
    return None


def _types(obj: dict[str, Any]) -> set[str]:
    t = obj.get("@type")
    values = t if isinstance(t, list) else [t]
    # "schema:NewsArticle" and "http://schema.org/NewsArticle" spellings name the same type.
    return {v.rsplit("/", 1)[-1].rsplit(":", 1)[-1].lower() for v in values if isinstance(v, str)}


def _ld_objects(data: Any, out: list[dict[str, Any]], budget: list[int]) -> None:
    """Every object of the JSON-LD data in document order (lists, @graph, nested values), bounded."""
    stack = [data]
    while stack and budget[0] > 0:
        budget[0] -= 1
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, dict):
            out.append(item)
            stack.extend(reversed([v for v in item.values() if isinstance(v, (list, dict))]))


def _ld_name(value: Any) -> str | None:
    """A person / organization name: a string, {"name": ...}, or a list of either (joined)."""
    if isinstance(value, list):
        names = [n for n in (_ld_name(v) for v in value) if n]
        return ", ".join(dict.fromkeys(names)) or None
    if isinstance(value, dict):
        return _clean(value.get("name"))
    name = _clean(value)
    # An author given only as a profile URL names nobody.
    return None if name and _web_address(name) else name


def _ld_url(value: Any) -> str | None:
    if isinstance(value, list):
        return next((u for u in (_ld_url(v) for v in value) if u), None)
    if isinstance(value, dict):
        return _ld_url(value.get("url") or value.get("contentUrl") or value.get("@id"))
    return _clean(value)


@dataclass
class _JsonLd:
    title: str | None = None
    author: str | None = None
    published: str | None = None
    site: str | None = None
    image: str | None = None
    description: str | None = None
    language: str | None = None
    article: bool = False  # an object of an Article type (not the generic WebPage / CreativeWork) was found
    article_published: str | None = None  # the datePublished of such an object
    modified: str | None = None  # the dateModified of the first article-like object that declares one
    author_org: bool = False  # the author is an Organization (a publisher named as author), not a Person
    not_article: bool = False  # an object says the page is a product, a category or a search result
    sections: list[str] = field(default_factory=list)  # BreadcrumbList names


def json_ld(texts: list[str]) -> _JsonLd:
    """The first article-like object's fields across all ld+json blocks; site name from its publisher or a
    WebSite / Organization object."""
    found = _JsonLd()
    objects: list[dict[str, Any]] = []
    budget = [20000]  # objects visited over all blocks: a huge or hostile graph cannot stall the host
    for text in texts:
        data = _load_json_ld(text)
        if data is not None:
            _ld_objects(data, objects, budget)
    site_fallback = None
    found.sections = _breadcrumb(objects)
    own_pages: set[int] = set()  # the pages an article names as its mainEntityOfPage: the article's, not a product's
    for obj in objects:
        types = _types(obj)
        found.not_article = found.not_article or bool(types & NOT_ARTICLE_TYPES and id(obj) not in own_pages)
        if types & ARTICLE_TYPES and not (types & SITE_TYPES):
            if isinstance(obj.get("mainEntityOfPage"), dict):
                own_pages.add(id(obj["mainEntityOfPage"]))
            # WebPage and CreativeWork are weaker than a real Article: they only fill what is still missing.
            found.article = found.article or bool(types - {"webpage", "creativework", "qapage"})
            found.title = found.title or _clean(obj.get("headline")) or (
                _clean(obj.get("name")) if types - {"webpage", "creativework"} else None)
            if not found.author:
                author = obj.get("author") or obj.get("creator")
                found.author = _ld_name(author)
                found.author_org = all(isinstance(a, dict) and _types(a) & SITE_TYPES
                                       for a in (author if isinstance(author, list) else [author]))
            published = _clean(obj.get("datePublished") or obj.get("dateCreated"))
            found.published = found.published or published
            found.modified = found.modified or _clean(obj.get("dateModified"))
            if types - {"webpage", "creativework", "qapage"}:
                found.article_published = found.article_published or published
            found.image = found.image or _ld_url(obj.get("image") or obj.get("thumbnailUrl"))
            found.description = found.description or _clean(obj.get("description"))
            language = obj.get("inLanguage")
            found.language = found.language or _clean(language.get("name") if isinstance(language, dict)
                                                      else language)
            publisher = obj.get("publisher")
            if publisher is not None:
                found.site = found.site or _ld_name(publisher)
            part_of = obj.get("isPartOf")
            if isinstance(part_of, dict) and _types(part_of) & SITE_TYPES:
                found.site = found.site or _ld_name(part_of)
        elif types & SITE_TYPES and site_fallback is None:
            site_fallback = _clean(obj.get("name"))
    found.site = found.site or site_fallback
    return found


def _breadcrumb(objects: list[dict[str, Any]]) -> list[str]:
    """Names of a JSON-LD BreadcrumbList's items (the site's sections, as a title's suffix repeats them)."""
    out: list[str] = []
    for obj in objects:
        if "breadcrumblist" in _types(obj) and isinstance(obj.get("itemListElement"), list):
            for item in obj["itemListElement"]:
                if isinstance(item, dict):
                    inner = item.get("item")
                    name = _clean(item.get("name")) or (_clean(inner.get("name")) if isinstance(inner, dict) else None)
                    if name:
                        out.append(name)
    return out[:-1]  # the last item is the page itself, often its very title


# ---- dates ----------------------------------------------------------------------------------------------------------
def iso_date(value: str | None) -> str | None:
    """ISO 8601 for the date spellings pages use: ISO (with or without time / zone, ``Z``), RFC 2822, and
    year-first digits with any separators (2026/11/20, 2026.11.20, 2026年11月20日). None when not a date."""
    value = _clean(value)
    if not value:
        return None
    text = value.replace("Z", "+00:00") if value.endswith("Z") else value
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)  # nanoseconds ("…:13.157234586Z"): Python reads six digits
    try:
        dt = datetime.fromisoformat(text)
        if len(text) <= 10:  # a bare date stays a date
            return dt.date().isoformat()
        return dt.isoformat()
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError, IndexError):
        pass
    m = _DATE_PARTS.search(value)
    if m:
        y, mo, d = (int(g) for g in m.groups())
        try:
            return datetime(y, mo, d).date().isoformat()
        except ValueError:
            return None
    return None


# ---- title ----------------------------------------------------------------------------------------------------------
def _norm(s: str) -> str:
    return " ".join(s.casefold().split())


_PAGE_NUMBER = re.compile(r"[^\W\d_]{1,12}\.?\s?\d{1,4}\s?[^\W\d_]{0,2}")


def strip_site_name(title: str, site_names: list[str], host: str = "", headings: list[str] | None = None,
                    sections: list[str] | None = None) -> str:
    """``title`` without the site's name before or after a separator ("Story | Site", "Site - Story").

    A part is the site name when it equals one of ``site_names`` or ``sections`` (a breadcrumb's) or the page's
    host name spells it ("WIRED" on wired.com); otherwise, when a visible heading equals one part of the title,
    that part wins. A title that is only the site name stays as it is.
    """
    sites = {_norm(s) for s in [*site_names, *(sections or [])] if s}
    host_key = re.sub(r"[^0-9a-z]", "", host.casefold())
    # The host's own names ("promatcher" of www.promatcher.com, "doom9" of forum.doom9.org): a short part that
    # contains one is the site's ("ProMatcher Cost Report", "Doom9's Forum").
    labels = [x for x in host.casefold().split(".")[:-1] if len(x) >= 4 and x not in ("www", "blog", "forum", "news")]

    shown = {_norm(h) for h in headings or [] if h}

    def is_site(part: str, tail: bool) -> bool:
        key = _norm(part)
        if key in sites:
            return True
        if key in shown:
            return False  # the page shows it as its heading: the story, whatever the host is called
        squashed = re.sub(r"[^0-9a-z]", "", key)
        if len(squashed) >= 3 and squashed in host_key:
            return True
        words = key.split()
        if tail and 1 < len(words) <= 6 and any(x in squashed for x in labels):
            return True
        # An organisation's initials are its host ("Occupational Safety and Health Administration", osha.gov).
        initials = "".join(w[0] for w in part.split() if w[0].isupper()).casefold()
        if len(words) >= 3 and len(initials) >= 3 and initials in host_key:
            return True
        # A page number ("Page 3", "Seite 3", "第3页") is no part of a headline.
        return bool(_PAGE_NUMBER.fullmatch(key))

    out = _strip_named(title.strip(), site_names, sections or [], host)
    for _ in range(5):  # "Story | Section | Site", "Story__Section_Subsection_Site": at most a few layers
        changed = False
        for sep in TITLE_SEPARATORS:
            if sep not in out:
                continue
            head, _, tail = out.rpartition(sep)
            head = head.strip().rstrip(sep.strip() or sep).strip()  # "Story__Section": a doubled separator
            if head and is_site(tail, True):
                out, changed = head, True
                break
            first, _, rest = out.partition(sep)
            rest = rest.strip().lstrip(sep.strip() or sep).strip()
            if rest and is_site(first, False):
                out, changed = rest, True
                break
        if not changed:
            break
    if headings:
        keys = {_norm(h): h for h in headings if h}
        for sep in TITLE_SEPARATORS:
            if sep in out:
                for part in out.split(sep):
                    if _norm(part) in keys and len(part.strip()) >= 2:
                        return keys[_norm(part)]
    return out


_SEPARATOR_CHARS = frozenset("|·•:»«/\\_-–—~*+=<>›‹⋅∙◆■●★｜：＿－・")


_OPENERS = "([{\"'“‘«¿¡#*"
_CLOSERS = ")]}\"'”’»?!.…*+#%"  # what ends a word: "(2025)", "Yahoo!", "C++", "C#", "100%"


def _separates(run: str, bare_host: bool) -> bool:
    """A run of characters between a name and the story separates them: spaces around anything, or separator
    characters alone ("Forum-Story"); not an apostrophe or a full stop ("Nike's", "Nike.com"). Spaces alone only
    after a bare host name."""
    if not run.strip():
        return bare_host
    if run[0] in "'’.,&" and not run[0].isspace():
        return False
    return run != run.strip() or all(c in _SEPARATOR_CHARS for c in run)


def _strip_named(title: str, site_names: list[str], sections: list[str], host: str) -> str:
    """``title`` without a declared site name (or the bare host, "davidbau.com Vibe Coding") before it or a site or
    section name after it, whatever stands between them: any run of punctuation or spaces ("Forum-Story", "Story •
    Site", "故事＿网站"), in any script. A colon after a leading name makes it part of the title ("Figma: The
    Design Tool", a product's name), as does an apostrophe ("Nike's")."""
    def names(items: list[str]) -> list[str]:
        return sorted({n.strip() for n in items if n and len(n.strip()) >= 2}, key=len, reverse=True)

    bare = host.casefold().removeprefix("www.")
    hosts = [bare] if "." in bare else []
    for name in names(site_names) + hosts:
        n = len(name)
        if len(title) - n >= 2 and title[:n].casefold() == name.casefold():
            run = re.match(r"[\W_]*", title[n:]).group().rstrip(_OPENERS)  # type: ignore[union-attr]
            rest = title[n + len(run):].strip()
            if run and run.strip() not in (":", "：") and _separates(run, name == bare) and rest:
                return rest
    for name in names([*site_names, *sections]) + hosts:
        n = len(name)
        if len(title) - n >= 2 and title[-n:].casefold() == name.casefold():
            run = re.search(r"[\W_]*$", title[:-n]).group().lstrip(_CLOSERS)  # type: ignore[union-attr]
            head = title[:len(title) - n - len(run)]
            if run and _separates(run, False) and head.strip():
                return head.strip()
    return title


# ---- the page -------------------------------------------------------------------------------------------------------
def _meta_tags(root: HtmlElement) -> dict[str, str]:
    """First content of each <meta name|property|itemprop|http-equiv>, keys lower-cased."""
    out: dict[str, str] = {}
    for el in root.iter("meta"):
        content = el.get("content")
        if content is None or not content.strip():
            continue
        for key_attr in ("property", "name", "itemprop", "http-equiv"):
            key = el.get(key_attr)
            if key:
                out.setdefault(key.strip().lower(), content.strip())
    return out


def _first(meta: dict[str, str], *keys: str) -> str | None:
    for k in keys:
        if meta.get(k):
            return meta[k]
    return None


# Text fields a page declares as its content: an article's body, a product's or page's description, a post's text.
_DECLARED_KEYS = ("articleBody", "description", "text", "reviewBody")
_LD_SCRIPT = re.compile(r"<script\b[^>]*?\btype\s*=\s*[\"']?\s*application/ld\+json[^>]*>(.*?)</script\s*>",
                        re.I | re.S)
_TAG = re.compile(r"<[^>]{0,2000}>")
DECLARED_MAX_CHARS = 200_000  # a page declaring more is cut there: the feature needs the content, not all of it


def ld_json_texts(source: str | None) -> list[str]:
    """The texts of the ld+json scripts of a serialized page source, in page order."""
    if not source or "ld+json" not in source:
        return []
    return [m.group(1) for m in _LD_SCRIPT.finditer(source)]


def declared_text(scripts: Sequence[str]) -> str:
    """The content a page declares in its JSON-LD ``scripts`` (``articleBody``, ``description``, ``text``,
    ``reviewBody`` of any object: an Article's body, a Product's description, a forum post), markup stripped,
    whitespace collapsed, casefolded, one field per line; "" when it declares none. The scripts are read from the
    serialized page source (:func:`ld_json_texts`) or sent on their own by a press without the source (the
    snapshot's ``json_ld``): the same texts either way; bounded like :func:`json_ld`."""
    objects: list[dict[str, Any]] = []
    budget = [20000]
    for text in scripts:
        data = _load_json_ld(text)
        if data is not None:
            _ld_objects(data, objects, budget)
    out: dict[str, None] = {}
    size = 0
    for obj in objects:
        for key in _DECLARED_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and len(value) >= 20:
                text = " ".join(html.unescape(_TAG.sub(" ", value)).split()).casefold()
                if text and text not in out:
                    out[text] = None
                    size += len(text)
        if size >= DECLARED_MAX_CHARS:
            break
    return "\n".join(out)[:DECLARED_MAX_CHARS]


def _language(tag: str | None) -> str | None:
    """A BCP 47-ish tag: og:locale's underscore form (zh_CN) becomes zh-CN."""
    tag = _clean(tag)
    if not tag:
        return None
    tag = tag.split(",")[0].strip().replace("_", "-")
    return tag if re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*", tag) else None


def extract_metadata(page: SourcePage, nodes: list[int] | None = None, text: str | None = None) -> Metadata:
    """Metadata of the page; ``nodes`` (the main content) focuses the byline and date search on the article,
    ``text`` (its text) gives the excerpt when no description is declared."""
    page_title = page.snapshot.page.title if page.snapshot is not None else None
    page_lang = page.snapshot.page.lang if page.snapshot is not None else None
    root = page.root
    meta = _meta_tags(root)
    ld = json_ld([el.text or "" for el in root.iter("script")
                  if (el.get("type") or "").strip().lower() == "application/ld+json"])
    base = page.base_url
    host = _url_parts(page.url).hostname or ""

    site = _not_an_address(_clean(_first(meta, "og:site_name", "application-name", "twitter:site:name")) or ld.site)
    headings = _visible_headings(page)
    declared = [_not_an_address(_unescape(t)) for t in (
        _clean(_first(meta, "og:title", "twitter:title", "dc.title", "dcterms.title")), ld.title,
        _clean(_title_tag(root)), _clean(page_title))]
    # What the page declares and repeats in its titles: its name and its sections (breadcrumb, visible or JSON-LD),
    # and a title's tail that the page writes on its own elsewhere (a masthead, a logo's text or alt).
    sections = [n for n in (*ld.sections, *_visible_breadcrumb(page), *_repeated_tails(page, declared)) if n]
    # og:type says what the page is; a page that names a kind other than an article (a site's page, a product, a
    # shop's category) and no JSON-LD Article is named by its declared title.
    kind = (meta.get("og:type") or "").strip().casefold()
    named = bool(kind) and "article" not in kind and not ld.article
    titles = [t for t in declared if t]
    banners = _banners(headings, _visible_headings(page, "h2"), declared)
    title = choose_title(headings, titles, [n for n in (site, *banners) if n], sections, host, named)
    # The date rules look next to the main heading the page shows, which the reported title may have replaced
    # (a declared name, a chapter under a book's banner).
    shown = choose_title(headings, titles, [site] if site else [], sections, host) if named or banners else title

    byline = _byline(page, meta, ld, nodes or [])

    published = published_date(page, meta, ld, nodes or [], shown)

    language = (_language(root.get("lang")) or _language(page_lang) or _language(ld.language)
                or _language(_first(meta, "content-language", "language", "dc.language")) or _language(
                    _first(meta, "og:locale")))

    image = _clean(_first(meta, "og:image", "og:image:url", "og:image:secure_url", "twitter:image",
                          "twitter:image:src")) or ld.image
    image = _resolve(base, image) if image else None
    if image and _url_parts(image).scheme not in ("http", "https"):
        image = None  # a local file's relative image resolves to file:, which no reader of the output can load

    excerpt = _clean(_first(meta, "description", "og:description", "twitter:description", "dc.description")) or (
        ld.description)
    if not excerpt:
        excerpt = _first_paragraph(page, nodes or []) or _first_line(text)

    canonical = next((el.get("href") for el in root.iter("link")
                      if "canonical" in (el.get("rel") or "").lower().split() and el.get("href")), None)
    url = (_resolve(base, canonical.strip()) or page.url) if canonical else page.url
    if url and url.startswith("about:"):
        url = None  # HTML handed over without an address
    direction = page.snapshot.page.dir if page.snapshot is not None else (root.get("dir") or "").lower()
    return Metadata(title=title, author=byline, date=published, sitename=site, language=language,
                    image=image, description=excerpt, url=url or None,
                    direction=direction if direction in ("ltr", "rtl") else None, reading_minutes=reading_minutes(text))


_WORDS = re.compile(r"\w+")
_GENERIC_KEYS = frozenset({"home", "homepage", "home page", "index", "untitled", "default", "welcome"})


def _words(text: str) -> set[str]:
    return set(_WORDS.findall(text.casefold()))


def _agrees(heading: str, title: str) -> bool:
    """A visible heading and a declared title name the same thing: one contains the other, or they share at least
    two words and a third of the shorter one's (a headline and its SEO variant, "Top 10: Best Language App" and
    "Best Apps to Learn a Language - Top 10 Picks")."""
    a, b = _norm(heading), _norm(title)
    if a in b or b in a:
        return True
    wa, wb = _words(a), _words(b)
    shared = len(wa & wb)
    return shared >= 2 and shared * 3 >= min(len(wa), len(wb))


def headline(headings: list[str], declared: list[str]) -> str | None:
    """The page's headline: the first visible main heading that agrees with a declared title (what readers see is
    the headline; og:title and <title> are often SEO or share variants of it), else the first declared title that
    is more than a generic word ("Home"), else the first heading."""
    useful = [t for t in declared if _norm(t) not in _GENERIC_KEYS]
    for h in headings:
        if any(_agrees(h, t) for t in useful):
            return h
    if useful:
        return useful[0]
    return headings[0] if headings else (declared[0] if declared else None)


def choose_title(headings: list[str], declared: list[str], sites: list[str], sections: list[str],
                 host: str, named: bool = False) -> str | None:
    """The headline (:func:`headline`) from the visible h1 texts and the declared titles (og:title, JSON-LD,
    <title>), both without what the page declares and repeats as its site name, its sections (a breadcrumb's,
    except the page's own heading) and its host.

    An h1 that is the site's name (a logo heading: "Bogleheads.org", "Arch Linux", the part a declared title's
    suffix repeats) names no story. A heading that holds a declared title plus a few words of decoration ("Thread:
    Story", "Story Posted on July 1 by jo", "Story (latimes.com) 87") gives the declared title. On a page ``named``
    by its declared title (:func:`_named_by_declared`), a heading worded otherwise gives way to that title."""
    sections = [n for n in sections if not any(_agrees(h, n) for h in headings)]
    stripped = [(t, strip_site_name(t, sites, host, sections=sections)) for t in declared]
    host_key = re.sub(r"[^0-9a-z]", "", host.casefold())

    others = {_norm(t) for t in declared}

    def is_site(h: str) -> bool:
        key = _norm(h)
        squashed = re.sub(r"\W", "", key)
        if any(key == _norm(n) for n in sites) or (len(squashed) >= 3 and squashed in host_key):
            return True
        # "Story — Blog" where og:title says "Story": the heading is the blog's name.
        if any(_norm(t.rpartition(sep)[2]) == key and _norm(t.rpartition(sep)[0]) in others
               for t in declared for sep in TITLE_SEPARATORS if sep in t):
            return True
        return any(key in _norm(t) and key not in _norm(s) for t, s in stripped if s != t)

    shown = [strip_site_name(h, sites, host, sections=sections) for h in headings if not is_site(h)]
    titles = [strip_site_name(t, sites, host, shown, sections) for t in declared]
    # "Site - its slogan": a declared title that only followed the site's name is the site's, not the page's; the
    # one heading the page shows names the page.
    slogans = {_norm(s) for t, s in zip(declared, titles, strict=True)
               if len(s) < len(t) and _norm(t).endswith(_norm(s))}
    if len(shown) == 1 and slogans and all(_norm(t) in slogans for t in titles) and not any(
            _agrees(shown[0], t) for t in titles):
        return shown[0]
    # A declared title that is only the site's name ("Robomow" where <title> says "Which mower? | Robomow") names
    # no page.
    titles = [t for t in titles if not is_site(t)] or titles
    title = _before_pipe(headline(shown, titles))
    if title in shown:
        name = next((_before_pipe(t) for t in titles if _norm(t) not in _GENERIC_KEYS), None)
        if named and name and _named_by_declared(title, name):
            return name
        # A heading typed in capitals (a style's) gives the declared title it spells in the page's own case.
        if title.isupper():
            return next((t for t in titles if _norm(t) == _norm(title) or (_agrees(title, t) and not t.isupper())),
                        title)
        return next((t for t in titles if _decorated(title, t)), title)
    return title


_NUMBER = re.compile(r"\d+")


def _named_by_declared(heading: str, name: str) -> bool:
    """On a page whose og:type is no article (a site's page, a product, a category), the visible heading is often a
    slogan or a reworded label ("Space to figure things out", "Managed Analytics Services") where the page's name is
    the declared one ("Managed Data Analytics Services"): the declared name wins over a heading worded otherwise,
    except a heading that is a piece of it (a short label, "Camping Tents" of "Camping Tents: Large Tents for
    Family"), a declared title cut short ("Wedding Checklist Wedding Planning…"), or a heading that writes a number
    the declared title does not (the page updated its heading: "... in 2025" where the title still says 2024)."""
    h, n = _norm(heading), _norm(name)
    if h == n or h in n or n.endswith(("…", "...")):
        return False
    return not set(_NUMBER.findall(h)) - set(_NUMBER.findall(n))


def _before_pipe(title: str | None) -> str | None:
    """A title without what follows its first " | " (the separator of a title's SEO tail, which a headline itself
    seldom writes: "Story | Top 19 Companies", "Story | Opinion") or a short tail after its last " - "."""
    if not title:
        return title
    if " | " in title:
        head = title.split(" | ", 1)[0].strip()
        if len(head.split()) >= 2:
            return head
    # "Story - Infographic", "Product name - black", "Thread - Forum Section": a few words after the last " - " of a
    # longer title qualify it; the headline is before them.
    head, _, tail = title.rpartition(" - ")
    if head and len(head.split()) >= 3 and len(tail.split()) <= 3 and not tail.strip().isdigit():  # "2024 - 2025"
        return head.strip()
    return title


def _decorated(heading: str, title: str) -> bool:
    """``heading`` is ``title`` with decoration: a label before it ending in a separator ("Thread: Story"), or a
    date or count before or after it ("Dec 18 2025 Story", "Story Posted on July 1, 2024 by jo", "Story (x.com) 87")."""
    h, t = _norm(heading), _norm(title)
    if h == t or len(_words(t)) < 2 or t not in h:
        return False
    before, _, after = h.partition(t)
    if before and after:
        return False
    words = (before or after).split()
    dated = sum(any(c.isdigit() for c in w) for w in words)
    if before:  # "Thread:", "News -", "Dec 18 2025"
        return (len(words) <= 2 and before.rstrip()[-1:] in ":|»›-–—/") or (2 <= len(words) <= 4 and dated > 0)
    return dated >= 2 or (dated and len(words) <= 3)  # "Posted on July 1, 2024 by jo", "(latimes.com) 87"


def _unescape(text: str | None) -> str | None:
    """Entities left in an attribute value (written escaped twice: ``&amp;#39;`` arrives as ``&#39;``)."""
    return _clean(html.unescape(text)) if text and "&" in text else text


_ADDRESS = re.compile(r"(?:\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9a-f]{0,4}(?::[0-9a-f]{0,4}){2,7}\]?|localhost)"
                      r"(?::\d+)?(?:/\S*)?|file:\S*|[^\s/]*/?[^\s/]+\.(?:x?html?|php|aspx?)", re.I)


def _not_an_address(text: str | None) -> str | None:
    """None for what a browser shows when a page names itself nothing: an IP address, localhost, a file name."""
    return None if text and _ADDRESS.fullmatch(text) else text


def _title_tag(root: HtmlElement) -> str | None:
    for el in root.iter("title"):
        return el.text_content()
    return None


def _repeated_tails(page: SourcePage, titles: list[str | None]) -> list[str]:
    """The last parts of the declared titles ("Story - Daily News": "Daily News") that the page also writes as a
    whole text of their own outside its headings (a masthead, a logo's text or alt, a footer line): the site's
    name, in any script, declared or not."""
    tails = {_norm(t.rpartition(sep)[2]): t.rpartition(sep)[2].strip() for t in titles if t
             for sep in TITLE_SEPARATORS if sep in t}
    tails = {k: v for k, v in tails.items() if k and len(k) <= 60}
    if not tails:
        return []
    found: dict[str, None] = {}
    for k, text in enumerate(page.root.xpath("//body//text()[not(ancestor::h1 or ancestor::script or ancestor::style)]"
                                             " | //body//img/@alt")):
        key = _norm(str(text))
        if key in tails and page.shown(text.getparent()):
            found[tails[key]] = None
        if k >= 20000:  # bounded on huge pages
            break
    return list(found)


def _visible_breadcrumb(page: SourcePage) -> list[str]:
    """Link texts of the page's breadcrumb trail (an element whose class, id or aria-label names a breadcrumb)."""
    out: list[str] = []
    for el in page.root.iter("nav", "ol", "ul", "div"):
        marks = " ".join(el.get(a) or "" for a in ("class", "id", "aria-label")).casefold()
        if "breadcrumb" in marks:
            out.extend(t for t in (_clean(a.text_content()) for a in el.iter("a")) if t)
            if out:
                break
    return out[:10]  # a trail that links the current page too ends with its title: choose_title drops that one


def _banners(headings: list[str], subheadings: list[str], declared: Sequence[str | None]) -> list[str]:
    """The h1s that name the site or the book, not the page: a declared title "Chapter - Book" whose one part an h1
    shows while an h2 shows the other (a documentation book's bar holds its name as the h1, the chapter is an h2)."""
    h1s, h2s = {_norm(h) for h in headings}, {_norm(h) for h in subheadings}
    out: list[str] = []
    for title in declared:
        for sep in TITLE_SEPARATORS:
            if title and sep in title:
                head, _, tail = title.rpartition(sep)
                if _norm(tail) in h1s and _norm(head) in h2s and _norm(tail) not in h2s:
                    out.append(tail.strip())
    return out


def _visible_headings(page: SourcePage, tag: str = "h1") -> list[str]:
    """Text of the visible h1 (or ``tag``) elements (the page's own idea of its title), in document order, at most
    a few."""
    out = []
    for el in page.root.iter(tag):
        if page.shown(el):
            # A documentation theme's anchor link ("Installation¶", "Usage #") is no part of the heading's words.
            text = _clean(heading_text(page, el).rstrip().rstrip("¶§#🔗").rstrip())
            if text:
                out.append(text)
                if len(out) >= 5:
                    break
    return out


# Inline pieces a heading carries that are not its words: a forum thread's prefix ("News", "Info", "2024"), a
# badge, a screen-reader-only copy.
_LABEL_CLASS = re.compile(r"(^|[\s_-])(label|prefix|badge|sr-only|visually-hidden|screen-reader)", re.I)
_SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg", "button"})
HEADING_MAX_DEPTH = 40


def heading_text(page: SourcePage, el: HtmlElement, labels: bool = False) -> str:
    """A heading's words as a reader sees them: block children and ``<br>`` separate words ("News Product<br>
    Management", "Title<div>Subtitle</div>"); the CSS or script a component library puts inside, hidden copies (a
    responsive duplicate), soft hyphens and (unless ``labels``) labels left out. A heading that is all label keeps
    it."""
    from .html import BLOCK_TAGS

    parts: list[str] = []

    def walk(node: HtmlElement, depth: int) -> None:
        parts.append(node.text or "")
        for child in node:
            tag = child.tag if isinstance(child.tag, str) else ""
            skip = (not tag or tag in _SKIPPED_TAGS or depth >= HEADING_MAX_DEPTH or not page.shown(child)
                    or (not labels and bool(_LABEL_CLASS.search(child.get("class") or ""))))
            block = tag in BLOCK_TAGS or tag == "br"
            if block:
                parts.append(" ")
            if not skip:
                walk(child, depth + 1)
            if block:
                parts.append(" ")
            parts.append(child.tail or "")

    walk(el, 0)
    text = "".join(parts).replace("\u00ad", "")
    return text if labels or text.strip() else heading_text(page, el, labels=True)


def _near(page: SourcePage, candidates: list[HtmlElement], nodes: list[int]) -> HtmlElement | None:
    """The candidate inside the main content, else the first one after the first visible <h1>, else the first."""
    if not candidates:
        return None
    chosen = set(nodes)
    for el in candidates:
        if chosen and page.inside(chosen, el):
            return el
    h1 = next((page.node_id(el) for el in page.root.iter("h1") if page.shown(el)), None)
    if h1 is not None:
        for el in candidates:
            i = page.node_id(el)
            if i is not None and i > h1:
                return el
    return candidates[0]


_REPLY_ITEMS = frozenset({"comment", "answer", "review"})


def _item_type(el: HtmlElement) -> str:
    """The schema.org type (lower case, last path segment) of the microdata item ``el`` belongs to, "" outside one."""
    scope = next((a for a in el.iterancestors() if a.get("itemscope") is not None), None)
    return (scope.get("itemtype") or "").strip().rstrip("/").rsplit("/", 1)[-1].lower() if scope is not None else ""


def _in_reply(el: HtmlElement) -> bool:
    return _item_type(el) in _REPLY_ITEMS


def _visible_byline(page: SourcePage, nodes: list[int]) -> str | None:
    """A short visible author name marked up as such: itemprop=author (its itemprop=name when given),
    rel=author, then an element whose class names an author or byline."""
    strong: list[HtmlElement] = []
    weak: list[HtmlElement] = []
    budget = 200  # candidates looked at: a page of author links cannot make this quadratic
    for el in page.root.iter():
        if not isinstance(el.tag, str) or not page.shown(el):
            continue
        if "author" in (el.get("itemprop") or "").lower().split() or "author" in (el.get("rel") or "").lower().split():
            if _in_reply(el):
                continue  # a comment's or an answer's author, not the page's
            strong.append(el)
        elif _AUTHOR_CLASS.search(el.get("class") or "") and el.tag not in ("body", "html", "article", "main"):
            weak.append(el)
        else:
            continue
        budget -= 1
        if budget <= 0:
            break
    for group in (strong, weak):
        el = _near(page, [e for e in group if _byline_text(e)], nodes)
        if el is not None:
            return _byline_text(el)
    return None


# What a byline writes before the name, in the languages of the pages seen ("By", "Written by", "Post by", "Par",
# "Von", "Автор", "作者"), longest first so that "written by" is not read as "by".
BYLINE_PREFIXES = sorted({
    "by", "written by", "posted by", "post by", "published by", "words by", "story by", "author", "authors",
    "written", "par", "écrit par", "publié par", "auteur", "von", "geschrieben von", "autor", "autorin", "por",
    "escrito por", "di", "scritto da", "door", "av", "af", "skrevet av", "przez", "autorka", "автор", "作者", "著者",
    "작성자", "yazar", "kirjoittanut", "συντάκτης",
}, key=len, reverse=True)
_SEPARATOR = re.compile(r"\s*(?:[|•·–—»]|\s-\s|-\s|\s-|-(?=[^\W\d_]+\.?\s*\d)|,\s*(?=\S*\d))\s*")
_CAMEL_GLUE = re.compile(r"(?<=[a-zà-ÿ])(?=[A-ZÀ-Þ])")
_NOT_A_NAME = frozenset({"undefined", "null", "none", "admin", "anonymous", "unknown"})


# The word for "by" before a name in a longer phrase ("This post was written by Jo", "Recipe by Jo", "Texte par Jo").
_BY_PHRASE = re.compile(r"^.{0,40}?(?<!\w)(?:by|von|par|por|door|av|af|przez|di|da)\s*:?\s+(?=[^\W\d_])", re.I)


def _strip_prefix(text: str) -> str:
    m = _BY_PHRASE.match(text)
    if m and text[m.end():m.end() + 1].isupper():
        return text[m.end():]
    low = text.casefold()
    for prefix in BYLINE_PREFIXES:
        if not low.startswith(prefix):
            continue
        rest = text[len(prefix):]
        if rest[:1] in (":", "：") or rest[:1].isspace():
            return rest.lstrip(" :：\t")
        if rest[:1].isupper() and prefix[-1:].islower():  # glued: "BySummer Swann", "Written byAAA"
            return rest
    return text


def clean_byline(text: str | None) -> str | None:
    """A byline as a name: without the words before it ("By", "Written by:"), without what the markup glued after
    it (a date: "Luke KimDecember 17, 2025", "Dr. Vahid Osman - Mar 27, 2024", "Alan Woinski | 3 days ago"), and
    None for a form label or placeholder ("Name *", "Jiobal says:", "undefined") or a bare prefix ("Author")."""
    text = _clean(text)
    if not text:
        return None
    stripped = _strip_prefix(text)
    if stripped is not text and not stripped.strip():
        return None
    text = stripped.strip()
    digit = next((i for i, c in enumerate(text) if c.isdigit()), None)
    if digit is not None:
        # A date or count glued after the name: cut at the last separator or letter-case seam before it.
        head = text[:digit]
        cuts = [m.start() for m in _SEPARATOR.finditer(text) if 0 < m.start() < digit] + [
            m.start() for m in _CAMEL_GLUE.finditer(head)
            if " " in head[:m.start()].strip() or len(head[:m.start()]) >= 4]  # "SupermoveFebruary 8", not "McD"
        if cuts:
            text = text[:max(cuts)]
        elif digit == 0:
            return None
        else:  # "FlowGuard EMEA on 04-ago-2021": the lower-case words that led to the date go too
            words = head.split()
            while len(words) > 1 and words[-1].islower() and any(w[:1].isupper() for w in words[:-1]):
                words.pop()
            text = " ".join(words)
        if len(text.strip(" ,;|-–—·•")) <= 3 and len(head.split()) == 1 and "," in head:
            return None  # "Sat, 20 Dec, 2025": a weekday, not a name
    text = text.strip(" ,;|-–—·•")
    if (not text or text[-1] in "*:" or text.casefold() in _NOT_A_NAME or text.casefold() in BYLINE_PREFIXES
            or not any(c.isalpha() for c in text)):
        return None
    return text


# An author's profile link: where sites file their people ("/author/jo", "/members/12", "?user=jo", "/@jo").
_PROFILE_HREF = re.compile(r"[/?&=](?:authors?|users?|members?|profiles?|people|person|staff|writers?|contributors?"
                           r"|journalists?|reporters?|experts?|team|by|u)(?:[/=_-]|$)|/@[^/]", re.I)


def _profile_link(a: HtmlElement) -> bool:
    href = _url_parts(a.get("href"))
    return "author" in (a.get("rel") or "").lower().split() or bool(_PROFILE_HREF.search(f"{href.path}?{href.query}"))


def _byline_text(el: HtmlElement) -> str | None:
    """The name a byline element gives: its itemprop=name part, else its links to author profiles (the name without
    the words around it: "Written by: <a>Sean Peek</a>, Senior Editor"), else all its text."""
    names = [n for n in el.iter() if "name" in (n.get("itemprop") or "").lower().split()]
    if names:
        text = _clean(names[0].text_content())
    else:
        # One name per profile: a second link to it is a button ("View full profile").
        by_href = {a.get("href"): _clean(a.text_content()) for a in reversed(list(el.iter("a"))) if _profile_link(a)}
        links = [t for t in dict.fromkeys(reversed(by_href.values())) if t and clean_byline(t)]
        text = ", ".join(links) if links and len(links) <= 5 else _clean(el.text_content())
    return text if text and len(text) <= BYLINE_MAX_CHARS else None


_PUBLISHED_META = ("article:published_time", "og:article:published_time", "datepublished", "date", "dc.date",
                   "dc.date.issued", "dcterms.created", "dcterms.issued", "publish-date", "pubdate", "sailthru.date")


def published_date(page: SourcePage, meta: dict[str, str], ld: _JsonLd, nodes: list[int],
                   title: str | None = None) -> str | None:
    """The publication date as the page states it, most explicit first:

    1. a declared date (JSON-LD, meta tags) the page also writes somewhere;
    2. the ``datePublished`` of the page's one posting item in microdata (a thread's first post, a question);
    3. an ``article:published_time``, or the datePublished of a JSON-LD Article (or an ``itemprop`` meta) on a page
       whose og:type says article: an article's own date even where it is not written;
    4. a visible <time> next to the headline (a listing's dates elsewhere are its items'), or marked published;
    5. a date written next to the headline, read with htmldate (the ``dates`` extra): its whole-page answer when
       the headline's neighbourhood writes it, else the one day the texts there write, each read on its own;
    6. on a page with an author that is no product page, the date htmldate reads in its markup and the page writes
       anywhere;
    7. the day the page's address names ("/2025/12/18/"), which also settles a date a day away from it.

    A JSON-LD Article's date alone is often a template's (service pages), as are dates written elsewhere on the page
    (a listing's, a "today" widget's): they date nothing. A page that declares itself a product, a category or a
    search result (JSON-LD) has no article date.

    A declared UTC timestamp ("…T23:30Z") on a page that writes the neighbouring day (a story dated the 19th) gives
    the day written; a timestamp with its own offset is the page's day already. Measured on the WCXB pages in
    docs/evaluation.md."""
    return next((found for _, found in date_steps(page, meta, ld, nodes, title)), None)


def date_steps(page: SourcePage, meta: dict[str, str], ld: _JsonLd, nodes: list[int],
               title: str | None = None) -> Iterator[tuple[str, str]]:
    """(step, date) of each rule of :func:`published_date` that dates the page, in its order, computed lazily: the
    first is the answer; the step names say which rule gave it (the evaluation counts them).

    A day in the page's address ("/2025/12/18/slug") is the day it was published: it settles the day of a rule's
    date a day away from it (a timestamp in another zone than the page's), and dates a page no rule dates."""
    url_day = url_date(page.url)
    for step, found in _rule_steps(page, meta, ld, nodes, title):
        yield ("url-day", url_day) if url_day and _days_apart(found, url_day) == 1 else (step, found)
    if url_day:
        yield "url-day", url_day


_URL_DAY = re.compile(r"/((?:19|20)\d\d)(?:/(\d\d?)/(\d\d?)|-(\d\d)-(\d\d))(?!\d)")


def url_date(url: str | None) -> str | None:
    """The day a page's address names in its path ("/2025/12/18/", "/2025-12-18-slug"), as ``YYYY-MM-DD``."""
    m = _URL_DAY.search(_url_parts(url).path)
    if not m:
        return None
    y, mo, d = (int(g) for g in m.groups() if g)
    try:
        return datetime(y, mo, d).date().isoformat()
    except ValueError:
        return None


def _days_apart(a: str, b: str) -> int | None:
    try:
        return abs((datetime.fromisoformat(a[:10]) - datetime.fromisoformat(b[:10])).days)
    except ValueError:
        return None


def _rule_steps(page: SourcePage, meta: dict[str, str], ld: _JsonLd, nodes: list[int],
                title: str | None) -> Iterator[tuple[str, str]]:
    shown = _ShownText(page, title)
    declared = next((d for d in map(iso_date, (ld.published, *(meta.get(k) for k in _PUBLISHED_META))) if d), None)
    if declared and shown.has_day(declared):
        yield "declared-written", declared
    posted = _item_date(page)
    if posted:
        yield "microdata-posting", shown.as_written(posted)
    article = (meta.get("og:type") or "").strip().lower() == "article"
    strong = iso_date(_first(meta, "article:published_time", "og:article:published_time")) or (
        iso_date(ld.article_published or meta.get("datepublished")) if article else None)
    if strong and not ld.not_article:
        yield "declared-article", shown.as_written(strong)
    when, marked = _time_element(page, nodes)
    if when and (marked or shown.near_headline(when)):
        yield "time-element", when
    found = text_date(page)
    if found and shown.near_headline(found):
        yield "text-near-headline", found
    written = shown.written_day()
    if written:
        yield "written-near-headline", written
    product = ld.not_article or "product" in (meta.get("og:type") or "").lower()
    if found and not product and _byline(page, meta, ld, nodes) and shown.has_day(found):
        # A page with an author is a story, a post or a thread: the date htmldate reads in its markup (meta tags,
        # <time>, its address) and finds written on the page is its date, even far from the headline.
        marked = text_date(page, extensive=False)
        if marked and marked[:10] == found[:10]:
            yield "marked-written-authored", found


# Microdata items whose date is the page's own: a posting (the Article family, a forum thread's first post, a
# question), not a comment, answer or review inside it.
_POSTING_ITEMS = (ARTICLE_TYPES - {"webpage", "creativework", "qapage"}) | {"question"}
_POSTING_DATES = ("datepublished", "datecreated")
MICRODATA_MAX_DATES = 200


def _item_date(page: SourcePage) -> str | None:
    """The ``datePublished`` (or ``dateCreated``) of the page's one posting item in microdata (a ``<meta
    content>``, a ``<time datetime>`` or the text): a thread declares its first post's date so while it shows the
    last post's ("last post Jun 5"), a question its asking date next to its answers'."""
    dates: dict[HtmlElement, str] = {}
    for k, el in enumerate(page.root.xpath("//*[@itemprop]")):
        if k >= MICRODATA_MAX_DATES or len(dates) > 1:
            break
        if not set(el.get("itemprop", "").lower().split()) & set(_POSTING_DATES):
            continue
        scope = next((a for a in el.iterancestors() if a.get("itemscope") is not None), None)
        if scope is None or scope in dates or _item_type(el) not in _POSTING_ITEMS:
            continue
        found = iso_date(el.get("content") or el.get("datetime")) or written_date(el.text_content())
        if found:
            dates[scope] = found
    # Several postings, each with its date (related stories, a list of posts): none of them is the page's.
    return next(iter(dates.values())) if len(dates) == 1 else None


def written_date(text: str | None) -> str | None:
    """A date as a page writes it in words or digits ("October 17, 2018", "12. März 2025", "2025年3月12日"): ISO and
    year-first digits here, other spellings with htmldate's patterns (the ``dates`` extra) when installed."""
    text = _clean(text)
    if not text or len(text) > 80:
        return None
    found = iso_date(text)
    if found:
        # A day after today is no publication date (a product code "9999-11-20", an offer's expiry).
        return found if found[:10] <= (datetime.now() + timedelta(days=2)).date().isoformat() else None
    try:
        from htmldate.extractors import try_date_expr
        from htmldate.settings import MIN_DATE
    except ImportError:
        return None
    try:
        return try_date_expr(text, "%Y-%m-%d", False, MIN_DATE, datetime.now() + timedelta(days=2))
    except Exception:  # noqa: BLE001 - a hostile string is no date
        return None


def _time_element(page: SourcePage, nodes: list[int]) -> tuple[str | None, bool]:
    """The datetime of a visible <time> (one marked itemprop=datePublished or pubdate first) near the article, as
    its own words date it (a UTC timestamp behind "19 July" gives the 19th), and whether it was marked."""
    marked: list[HtmlElement] = []
    plain: list[HtmlElement] = []
    for el in page.root.iter("time"):
        if not el.get("datetime") or not iso_date(el.get("datetime")):
            continue
        if "datepublished" in (el.get("itemprop") or "").lower() or el.get("pubdate") is not None:
            marked.append(el)
        elif page.shown(el):
            plain.append(el)
        if len(marked) + len(plain) >= 200:
            break
    el = marked[0] if marked else _near(page, plain, nodes)
    when = iso_date(el.get("datetime")) if el is not None else None
    if el is None or not when:
        return None, False
    return _day_shown(when, _digits(el.text_content())), bool(marked)


def _byline(page: SourcePage, meta: dict[str, str], ld: _JsonLd, nodes: list[int]) -> str | None:
    """The author: JSON-LD's, else the meta tags', else the visible byline. A visible byline wins over JSON-LD that
    names an organization (a publisher filed as author); a declared profile URL names nobody."""
    declared = ld.author or _clean(_first(meta, "author", "article:author", "dc.creator", "dcterms.creator",
                                          "sailthru.author", "parsely-author"))
    if declared and (_web_address(declared) or len(declared) > BYLINE_MAX_CHARS):
        declared = None
    declared = clean_byline(declared)
    if declared and not (ld.author and ld.author_org):
        return declared
    return clean_byline(_visible_byline(page, nodes)) or declared


def _ascii_digit(m: re.Match[str]) -> str:
    c = m.group()
    return str(unicodedata.digit(c)) if c.isdigit() and not c.isascii() else c


_TEXT = "text()[not(ancestor::script or ancestor::style or ancestor::noscript or ancestor::template)]"
HEADLINE_BEFORE_CHARS = 200  # a dateline or kicker above the headline
HEADLINE_AFTER_CHARS = 600  # the byline, date and standfirst below it
HEADINGS_LOOKED_AT = 50
TEXTS_LOOKED_AT = 20000


def _digits(text: str) -> str:
    # Digits of any script count as the date's (Arabic-Indic ٢٠٢٦, full-width ２０２６).
    return re.sub(r"[^\W0-9_a-zA-Z]|\d", _ascii_digit, text) if not text.isascii() else text


def _day_written(text: str, iso: str) -> bool:
    """Whether the day of ``iso`` is written in ``text`` in a language-free way: the year with the day number within
    a few characters ("March 12, 2025", "12 mars 2025", "12. März 2025", "2025年3月12日", "12/03/2025")."""
    m = re.match(r"(\d{4})-(\d{2})-(\d{2})", iso)
    if not m:
        return False
    year, day = m.group(1), int(m.group(3))
    near = re.compile(rf"(?<!\d)0?{day}(?!\d)")
    for y in re.finditer(rf"(?<!\d)({year}|{year[2:]})(?!\d)", text):
        window = text[max(0, y.start() - 24): y.end() + 24]
        if near.search(window.replace(y.group(0), " ", 1)):
            return True
    return False


def _utc(iso: str) -> bool:
    """A timestamp in UTC (or without a zone): a server's clock, which the page may show in another zone's day. One
    with its own offset is the page's local time already."""
    zone = re.search(r"([+-]\d{2}:?\d{2})$", iso)
    return zone is None or zone.group(1).replace(":", "") in ("+0000", "-0000")


def _day_shown(iso: str, text: str) -> str:
    """``iso``, or the neighbouring calendar day that ``text`` writes instead (a timestamp in another zone than the
    page's: "2025-07-18T23:30Z" shown as "19 July 2025"); ``iso`` when ``text`` writes neither."""
    if len(iso) <= 10 or _day_written(text, iso) or not _utc(iso):
        return iso
    try:
        stamp = datetime.fromisoformat(iso.replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        return iso
    for step in (1, -1):
        # Only a day some zone's clock (UTC-12:00 to UTC+14:00) shows for the stamp: "…T09:39Z" is the 7th anywhere
        # west of UTC+14:21, so an "8 May" next to it is another date (an update), not this stamp's day.
        local = stamp + timedelta(hours=14 if step > 0 else -12)
        other = (stamp.date() + timedelta(days=step)).isoformat()
        if local.date().isoformat() == other and _day_written(text, other):
            return other
    return iso


class _ShownText:
    """The page's text (scripts and styles left out), searched for a day written near its year: anywhere, or next
    to the headline (the shown heading that carries the title, else the first shown <h1>: a logo's <h1> is often
    first), where an article and a thread write when they were published."""

    def __init__(self, page: SourcePage, title: str | None = None) -> None:
        self.page = page
        self.title = _norm(title or "")
        self._text: str | None = None
        self._headline: str | None = None
        self._segments: list[str] = []  # the texts next to the headline, each whole

    def has_day(self, iso: str) -> bool:
        if self._text is None:
            self._text = _digits(" ".join(self.page.root.xpath("//body//" + _TEXT)))
        return _day_written(self._text, iso)

    def as_written(self, iso: str) -> str:
        """``iso`` as the page dates it next to its headline (:func:`_day_shown`)."""
        self.near_headline(iso)
        return _day_shown(iso, self._headline or "")

    def _heading(self) -> HtmlElement | None:
        first = None
        for k, el in enumerate(self.page.root.iter("h1", "h2")):
            if k >= HEADINGS_LOOKED_AT:
                break
            if not self.page.shown(el):
                continue
            if first is None and el.tag == "h1":
                first = el
            text = _norm(el.text_content())
            if self.title and text and (self.title in text or (len(text) >= 8 and text in self.title)):
                return el
        if self.title and len(self.title) >= 8:
            # A headline in another element (a <div class=title>, an <h3>): where the page writes the title.
            for k, t in enumerate(self.page.root.xpath("//body//" + _TEXT)):
                if k >= TEXTS_LOOKED_AT:
                    break
                if _norm(t) == self.title and self.page.shown(t.getparent()):
                    return t.getparent()
        return first

    def near_headline(self, iso: str) -> bool:
        if self._headline is None:
            self._read_headline()
        return _day_written(self._headline or "", iso)

    def _read_headline(self) -> None:
        self._headline, self._segments = "", []
        h1 = self._heading()
        if h1 is None:
            return
        # Characters of words: the indentation of a template's source is no distance.
        texts = [" ".join(t.split()) for t in h1.xpath("preceding::" + _TEXT)[-40:]]
        before = " ".join(" ".join(texts).split())[-HEADLINE_BEFORE_CHARS:]
        size = 0
        for t in reversed([t for t in texts if t]):
            size += len(t) + 1
            if size > HEADLINE_BEFORE_CHARS:
                break
            self._segments.insert(0, t)
        after: list[str] = []
        size = 0
        for t in h1.xpath("descendant::" + _TEXT + " | following::" + _TEXT):
            t = " ".join(t.split())
            if not t:
                continue
            after.append(t)
            size += len(t) + 1
            if size >= HEADLINE_AFTER_CHARS:
                break
            self._segments.append(t)
        self._headline = _digits(before + " " + " ".join(after)[:HEADLINE_AFTER_CHARS])

    def written_day(self) -> str | None:
        """The one day the texts next to the headline write ("20 December 2025", "Published: January 3, 2024"),
        each text read on its own (:func:`written_date`); None when they write none or several days (a publication
        and an update: the earlier rules weigh those)."""
        if self._headline is None:
            self._read_headline()
        days = [d for d in map(written_date, self._segments) if d]
        return days[0] if len({d[:10] for d in days}) == 1 else None


def text_date(page: SourcePage, extensive: bool = True) -> str | None:
    """The publication date written in the page's text ("12 Nov 2025", "Updated November 18, 2025"), read with
    htmldate (the ``dates`` extra) when it is installed: its original-date search weighs the page's date patterns
    in any of the languages it knows. None without it."""
    try:
        from htmldate import find_date
    except ImportError:
        return None
    try:
        # htmldate prunes the tree it reads: it gets a copy, the outputs still need the page.
        return find_date(copy.deepcopy(page.root), original_date=True, extensive_search=extensive,
                         url=page.url)
    except Exception:  # noqa: BLE001 - a parser failure on a hostile page means no date, never a failed extraction
        return None


def reading_minutes(text: str | None) -> int | None:
    """Estimated reading time in whole minutes (at least 1) of ``text``; None when it has no words.

    Counted in one numpy pass over the characters (no token list): the tokens are ``textmetrics.tokens``'s, and
    every character of an unspaced script is one token of its own."""
    import numpy as np

    from .textmetrics import UNSPACED, char_classes, count_words_many

    if not text:
        return None
    count = int(count_words_many([text])[0])
    if not count:
        return None
    unspaced = int(np.count_nonzero(char_classes(np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)) == UNSPACED))
    minutes = (count - unspaced) / WORDS_PER_MINUTE + unspaced / UNSPACED_CHARS_PER_MINUTE
    return max(1, round(minutes))


def _shorten(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else text[:EXCERPT_CHARS].rstrip() + "…"


def _first_paragraph(page: SourcePage, nodes: list[int]) -> str | None:
    """The first shown <p> of the main content with some substance (40 characters)."""
    for i in nodes[:50]:
        el = page.by_id.get(i)
        if el is None:
            continue
        for k, p in enumerate(el.iter("p")):
            if k >= 200:
                break
            text = _clean(p.text_content())
            if text and len(text) >= 40 and page.shown(p):
                return _shorten(text)
    return None


def _first_line(text: str | None) -> str | None:
    line = next((x.strip() for x in (text or "").split("\n") if len(x.strip()) >= 40), None)
    return _shorten(line) if line else None


def snapshot_metadata(snapshot: Snapshot, text: str | None = None) -> Metadata:
    """What a snapshot without a ``source`` still says: its title, language and URL (and an excerpt)."""
    excerpt = _first_line(text)
    host = _url_parts(snapshot.page.url).hostname or ""
    title = _not_an_address(_clean(snapshot.page.title))
    return Metadata(title=strip_site_name(title, [], host) if title else None,
                    language=_language(snapshot.page.lang), description=excerpt, url=snapshot.page.url or None,
                    direction=snapshot.page.dir if snapshot.page.dir in ("ltr", "rtl") else None,
                    reading_minutes=reading_minutes(text))
