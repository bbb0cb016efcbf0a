"""Plan, build and assemble the styled corpus in the shared data-set layout.

Output (``--out``): ``pages/<id>.html`` (the built article page with a ``<base>`` pointing at its site),
``pages/_sites/<site>/`` (the whole built site: theme stylesheets, scripts, fonts, the other pages),
``gold/<id>.txt`` (the inserted body), ``meta.jsonl`` and ``README.md``. Everything follows from the seed and the
source data sets: the same command gives the same bytes.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import re
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .engines import BUILDERS, THEMES, Article, EngineError, Site, available
from .sources import Source

AUTHORS = ("Anna K.", "M. Rossi", "jwalker", "Olga", "Nikos P.", "li_wei", "Tomasz", "guest", "Sam", "Marta")
TAGS = ("news", "health", "world", "science", "opinion", "culture", "economy", "local", "travel", "tech")
COMMENT_CHARS = (40, 400)
SITES_DIR = "_sites"
_HEAD = re.compile(rb"<head\b[^>]*>", re.IGNORECASE)
_ROOT_URL = re.compile(rb"""(\s(?:href|src)=["'])/(?!/)""")


@dataclass(frozen=True)
class Planned:
    site: Site
    sources: dict[str, Source]  # article slug -> its source


def plan(sources: Sequence[Source], engines: Sequence[str], per_engine: int, seed: int,
         languages: Sequence[str], neutral_names: bool = False) -> list[Planned]:
    """Sites for each engine: (language, theme) pairs, themes first, each with an equal share of ``per_engine``
    articles; bodies drawn without replacement per language until the language runs out, then again.
    ``neutral_names``: comment sections and related lists without their usual class names (same pages otherwise)."""
    rng = random.Random(seed)
    pools: dict[str, list[Source]] = {}
    for lang in languages:
        pool = [s for s in sources if s.language == lang]
        rng.shuffle(pool)
        if pool:
            pools[lang] = pool
    cursor = dict.fromkeys(pools, 0)
    out: list[Planned] = []
    for engine in engines:
        pairs = [(lang, theme) for lang in pools for theme in THEMES[engine]]
        if not pairs:
            continue
        per_site = max(2, math.ceil(per_engine / len(pairs)))
        for lang, theme in pairs[: math.ceil(per_engine / per_site)]:
            chosen = []
            for _ in range(per_site):
                pool = pools[lang]
                chosen.append(pool[cursor[lang] % len(pool)])
                cursor[lang] += 1
            out.append(_site(engine, theme, lang, chosen, pools[lang], rng, neutral_names))
    return out


def _site(engine: str, theme: str, lang: str, chosen: list[Source], pool: list[Source],
          rng: random.Random, neutral_names: bool = False) -> Planned:
    name = f"{engine}-{theme}-{lang}"
    slugs = [f"{lang}-{i:03d}" for i in range(len(chosen))]
    day0 = dt.date(2023, 1, 2) + dt.timedelta(days=rng.randrange(300))
    articles = []
    for i, (slug, src) in enumerate(zip(slugs, chosen, strict=True)):
        related = tuple((s, c.body.title) for s, c in zip(slugs, chosen, strict=True) if s != slug)[:5]
        comments = tuple((rng.choice(AUTHORS), _comment(src, pool, rng)) for _ in range(rng.randint(2, 4)))
        articles.append(Article(slug=slug, body=src.body, date=(day0 + dt.timedelta(days=3 * i)).isoformat(),
                                tags=tuple(rng.sample(TAGS, 3)), related=related, comments=comments))
    title = f"{theme.capitalize()} {lang.upper()} Journal"
    site = Site(name=name, engine=engine, theme=theme, language=lang, title=title, articles=tuple(articles),
                neutral_names=neutral_names)
    return Planned(site, dict(zip(slugs, chosen, strict=True)))


def _comment(own: Source, pool: list[Source], rng: random.Random) -> str:
    """A paragraph of another page of the same language (never of the article itself), cut at a word boundary."""
    others = [s for s in pool if s is not own] or [own]
    paras = [b.text for b in rng.choice(others).body.blocks if b.kind == "p" and len(b.text) >= COMMENT_CHARS[0]]
    text = rng.choice(paras) if paras else rng.choice(others).body.blocks[0].text
    if len(text) > COMMENT_CHARS[1]:
        cut = text.rfind(" ", 0, COMMENT_CHARS[1])
        text = text[: cut if cut > COMMENT_CHARS[0] else COMMENT_CHARS[1]] + "…"
    return text


def relative_root_urls(data: bytes, depth: int) -> bytes:
    """Root-relative ``href``/``src`` (``/assets/main.css``) made relative to a page ``depth`` folders deep: a page
    loaded from a file resolves ``/`` to the disk's root."""
    prefix = b"../" * depth or b"./"
    return _ROOT_URL.sub(lambda m: m.group(1) + prefix, data)


def with_base(data: bytes, base: str) -> bytes:
    """The page with ``<base href>`` first in its head, so its relative URLs resolve inside its site's folder."""
    tag = f'<base href="{base}">'.encode()
    m = _HEAD.search(data)
    if m is None:
        raise EngineError("built page has no <head>")
    return data[: m.end()] + tag + data[m.end():]


def _copy_site(built: Path, dest: Path) -> None:
    # Dot files (Sphinx's pickled doctrees, .buildinfo) and feeds/sitemaps (stamped with the build time by some
    # engines) are not part of any page.
    shutil.copytree(built, dest, ignore=shutil.ignore_patterns(".*", "*.xml", "*.xml.gz", "objects.inv"))
    for page in sorted(dest.rglob("*.html")):
        depth = len(page.relative_to(dest).parts) - 1
        data = page.read_bytes()
        fixed = relative_root_urls(data, depth)
        if fixed != data:
            page.write_bytes(fixed)


def assemble(out: Path, work: Path, planned: Sequence[Planned],
             progress: Callable[[str], None] = lambda s: None) -> list[dict[str, object]]:
    """Build every planned site under ``work`` and write the data set to ``out``; returns the meta rows."""
    pages, gold = out / "pages", out / "gold"
    for d in (pages, gold):
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    rows: list[dict[str, object]] = []
    for p in planned:
        site = p.site
        progress(site.name)
        site_work = work / site.name
        if site_work.exists():
            shutil.rmtree(site_work)
        site_work.mkdir(parents=True)
        built, paths = BUILDERS[site.engine](site, site_work)
        _copy_site(built, pages / SITES_DIR / site.name)
        for i, a in enumerate(site.articles):
            rel = Path(paths[a.slug])
            data = (pages / SITES_DIR / site.name / rel).read_bytes()
            base = "/".join([SITES_DIR, site.name, *rel.parent.parts]) + "/"
            pid = f"{site.name}-{i:02d}"
            (pages / f"{pid}.html").write_bytes(with_base(data, base))
            (gold / f"{pid}.txt").write_text(a.body.gold, encoding="utf-8")
            src = p.sources[a.slug]
            rows.append({"id": pid, "language": site.language, "engine": site.engine, "theme": site.theme,
                         "source_set": src.dataset, "source_id": src.id, "source_site": src.site,
                         "title": a.body.title, "corpus_site": site.name, "page_type": "article",
                         "page": f"{SITES_DIR}/{site.name}/{rel.as_posix()}",
                         **({"names": "neutral"} if site.neutral_names else {})})
        shutil.rmtree(site_work)
    rows.sort(key=lambda r: str(r["id"]))
    (out / "meta.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows),
                                    encoding="utf-8")
    return rows


def check_engines(engines: Sequence[str]) -> dict[str, str]:
    """Engine -> why it cannot run (only the missing ones)."""
    missing = {}
    for e in engines:
        if e not in BUILDERS:
            missing[e] = f"unknown engine (known: {', '.join(BUILDERS)})"
        elif reason := available(e):
            missing[e] = reason
    return missing
