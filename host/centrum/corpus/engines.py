"""The static-site engines of the styled corpus: each writes a site's sources in its own format, runs the real
engine with a real theme, and names the built page of every article.

Every engine is run as a subprocess with ``SOURCE_DATE_EPOCH`` and a fixed locale and time zone, so two builds of the
same site are the same bytes. Settings keep every asset local: no web fonts, CDNs, analytics or feeds that would
reach outside the machine, and URLs relative to the page (a page is loaded from a file, where ``/`` is the disk's
root).
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .bodies import Body, rst_escape, rst_title, to_html, to_rst

EPOCH = 1_700_000_000  # SOURCE_DATE_EPOCH of every build (2023-11-14)


class EngineError(RuntimeError):
    """An engine is missing or its build failed; the message says which and why."""


@dataclass(frozen=True)
class Article:
    slug: str
    body: Body
    date: str  # YYYY-MM-DD
    tags: tuple[str, ...]
    related: tuple[tuple[str, str], ...]  # (slug, title) of other articles of the site
    comments: tuple[tuple[str, str], ...]  # (author, paragraph from another page)


@dataclass(frozen=True)
class Site:
    name: str  # folder name, unique in the corpus
    engine: str
    theme: str
    language: str
    title: str
    articles: tuple[Article, ...]
    neutral_names: bool = False  # comment section and related list without their usual class names


# Class and id names of the related list and the comment section: as themes and comment plugins name them, or
# neutral (`centrum corpus styled --neutral-names`), so that a comment section is found by its shape or not at all.
NAMES = {"related": "related-posts", "comments": "comments", "comments_id": "comments", "comment": "comment",
         "author": "comment-author", "date": "comment-date", "reply": "comment-reply", "form": "comment-form",
         "form_id": "respond"}
NEUTRAL_NAMES = {"related": "s-list", "comments": "s-block", "comments_id": "s2", "comment": "s-item",
                 "author": "s-by", "date": "s-when", "reply": "s-act", "form": "s-form", "form_id": "s3"}


def extras_html(a: Article, link: Callable[[str], str], neutral: bool = False) -> str:
    """Boilerplate the article source carries itself: related posts and a comment section (other pages' text),
    with the usual class names or, ``neutral``, names that say nothing (NEUTRAL_NAMES)."""
    n = NEUTRAL_NAMES if neutral else NAMES
    rel = "".join(f'<li><a href="{html.escape(link(s))}">{html.escape(t, quote=False)}</a></li>'
                  for s, t in a.related)
    comments = "".join(
        f'<div class="{n["comment"]}"><p class="{n["author"]}"><b>{html.escape(who, quote=False)}</b> '
        f'<span class="{n["date"]}">{a.date}</span></p><p>{html.escape(text, quote=False)}</p>'
        f'<p class="{n["reply"]}"><a href="#{n["form_id"]}">Reply</a></p></div>' for who, text in a.comments)
    return (f'<aside class="{n["related"]}"><h3>Related posts</h3><ul>{rel}</ul></aside>\n\n'
            f'<section class="{n["comments"]}" id="{n["comments_id"]}"><h3>{len(a.comments)} comments</h3>{comments}'
            f'<form id="{n["form_id"]}" class="{n["form"]}"><label>Leave a reply <textarea name="c"></textarea></label>'
            '<button type="button">Post comment</button></form></section>\n')


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG"))}
    env.update(SOURCE_DATE_EPOCH=str(EPOCH), TZ="UTC", LANG="C.UTF-8", LC_ALL="C.UTF-8", PYTHONHASHSEED="0")
    return env


def run(cmd: list[str], cwd: Path, what: str) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=900)
    except FileNotFoundError as e:
        raise EngineError(f"{what}: {cmd[0]} not found ({e.strerror}); install it") from None
    except subprocess.TimeoutExpired:
        raise EngineError(f"{what}: build did not finish in 900 s") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-8:]
        raise EngineError(f"{what}: build failed (exit {proc.returncode}):\n" + "\n".join(tail))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


# ---- Sphinx ------------------------------------------------------------------------------------------------------
SPHINX_THEMES = {"furo": "furo", "pydata": "pydata_sphinx_theme", "rtd": "sphinx_rtd_theme",
                 "book": "sphinx_book_theme", "alabaster": "alabaster"}


def build_sphinx(site: Site, work: Path) -> tuple[Path, dict[str, str]]:
    src, out = work / "src", work / "out"
    conf = {
        "project": site.title, "author": site.title, "copyright": "2023", "language": site.language,
        "html_theme": SPHINX_THEMES[site.theme], "smartquotes": False, "html_permalinks": False,
        "html_show_sourcelink": False, "html_copy_source": False, "html_last_updated_fmt": None,
        "html_title": site.title, "root_doc": "index", "exclude_patterns": ["_build"],
    }
    _write(src / "conf.py", "".join(f"{k} = {v!r}\n" for k, v in conf.items()))
    toc = "\n".join(f"   {a.slug}" for a in site.articles)
    _write(src / "index.rst", rst_title(site.title, "=") + "\n.. toctree::\n   :maxdepth: 1\n\n" + toc + "\n")
    for a in site.articles:
        extra = extras_html(a, lambda s: f"{s}.html", site.neutral_names)
        raw = "\n.. raw:: html\n\n" + "".join(f"   {line}\n" for line in extra.splitlines() if line.strip())
        _write(src / f"{a.slug}.rst", rst_title(a.body.title, "=") + "\n" + to_rst(a.body.blocks) + raw)
    run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E", "-j", "1", str(src), str(out)], work,
        f"sphinx/{site.theme}")
    return out, {a.slug: f"{a.slug}.html" for a in site.articles}


# ---- MkDocs ------------------------------------------------------------------------------------------------------
def build_mkdocs(site: Site, work: Path) -> tuple[Path, dict[str, str]]:
    docs, out = work / "docs", work / "site"
    theme: dict[str, object] = {"name": site.theme}
    if site.theme == "material":
        # font: false keeps Google Fonts out (the theme's default loads Roboto from fonts.googleapis.com).
        theme.update(font=False, language=site.language, features=["navigation.sections"])
    else:
        theme.update(highlightjs=False)  # highlight.js comes from a CDN
    config = {"site_name": site.title, "use_directory_urls": False, "theme": theme, "docs_dir": "docs",
              "site_dir": "site", "nav": [{"Home": "index.md"}] + [{a.body.title[:60]: f"{a.slug}.md"}
                                                                   for a in site.articles]}
    _write(work / "mkdocs.yml", json.dumps(config, ensure_ascii=False, indent=1))  # JSON is YAML
    _write(docs / "index.md", f"# {html.escape(site.title, quote=False)}\n")
    for a in site.articles:
        extra = extras_html(a, lambda s: f"{s}.html", site.neutral_names)
        _write(docs / f"{a.slug}.md", f"<h1>{html.escape(a.body.title, quote=False)}</h1>\n\n"
               + to_html(a.body.blocks) + "\n" + extra)
    run([sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(work / "mkdocs.yml")], work,
        f"mkdocs/{site.theme}")
    return out, {a.slug: f"{a.slug}.html" for a in site.articles}


# ---- Pelican -----------------------------------------------------------------------------------------------------
def build_pelican(site: Site, work: Path) -> tuple[Path, dict[str, str]]:
    content, out = work / "content", work / "output"
    conf = {
        "SITENAME": site.title, "SITEURL": "", "RELATIVE_URLS": True, "THEME": site.theme, "TIMEZONE": "UTC",
        "DEFAULT_LANG": site.language, "PATH": "content", "AUTHOR": "Editorial team",
        "FEED_ALL_ATOM": None, "CATEGORY_FEED_ATOM": None, "TRANSLATION_FEED_ATOM": None,
        "AUTHOR_FEED_ATOM": None, "AUTHOR_FEED_RSS": None, "DEFAULT_PAGINATION": 10,
        "LINKS": [("Archives", "archives.html"), ("Tags", "tags.html"), ("Categories", "categories.html")],
        "SOCIAL": [("RSS", "#"), ("Mastodon", "#")], "ARTICLE_URL": "{slug}.html", "ARTICLE_SAVE_AS": "{slug}.html",
        "LOAD_CONTENT_CACHE": False, "CACHE_CONTENT": False,
    }
    _write(work / "pelicanconf.py", "".join(f"{k} = {v!r}\n" for k, v in conf.items()))
    for a in site.articles:
        head = (f"<title>{html.escape(a.body.title, quote=False)}</title>"
                f'<meta name="date" content="{a.date} 09:00"><meta name="slug" content="{a.slug}">'
                f'<meta name="tags" content="{html.escape(", ".join(a.tags))}">'
                f'<meta name="category" content="{html.escape(a.tags[0])}">')
        _write(content / f"{a.slug}.html", f"<html><head>{head}</head><body>\n{to_html(a.body.blocks)}\n"
               f"{extras_html(a, lambda s: f'{s}.html', site.neutral_names)}</body></html>\n")
    run([sys.executable, "-m", "pelican", "content", "-o", str(out), "-s", "pelicanconf.py", "-q"], work,
        f"pelican/{site.theme}")
    return out, {a.slug: f"{a.slug}.html" for a in site.articles}


# ---- Nikola ------------------------------------------------------------------------------------------------------
def _nikola_local_theme(site: Site, work: Path) -> str:
    """bootblog4 loads Playfair Display from Google Fonts unconditionally: a child theme whose base_helper is the
    parent's without that line (the theme then falls back to its local font stack)."""
    if site.theme != "bootblog4":
        return site.theme
    import nikola

    parent = Path(nikola.__file__).parent / "data" / "themes" / "bootblog4" / "templates" / "base_helper.tmpl"
    lines = [x for x in parent.read_text(encoding="utf-8").splitlines(True) if "fonts.googleapis.com" not in x]
    child = work / "themes" / "bootblog4-local"
    _write(child / "templates" / "base_helper.tmpl", "".join(lines))
    _write(child / "bootblog4-local.theme", "[Theme]\nengine = mako\nparent = bootblog4\n")
    return "bootblog4-local"


NIKOLA_LANGUAGES = {"zh": "zh_cn"}  # Nikola's names for these (it has no plain "zh")


def build_nikola(site: Site, work: Path) -> tuple[Path, dict[str, str]]:
    lang = NIKOLA_LANGUAGES.get(site.language, site.language)
    conf = {
        "BLOG_AUTHOR": "Editorial team", "BLOG_TITLE": site.title, "SITE_URL": "https://example.invalid/",
        "BLOG_EMAIL": "editor@example.invalid", "BLOG_DESCRIPTION": f"{site.title}: news and notes",
        "DEFAULT_LANG": lang, "TRANSLATIONS": {lang: ""}, "THEME": _nikola_local_theme(site, work),
        "POSTS": (("posts/*.html", "posts", "post.tmpl"),), "PAGES": (("pages/*.html", "pages", "page.tmpl"),),
        "PRETTY_URLS": False, "USE_CDN": False, "USE_BUNDLES": False, "TIMEZONE": "UTC", "COMMENT_SYSTEM": "",
        "GENERATE_RSS": False, "GENERATE_ATOM": False, "COPY_SOURCES": False, "SHOW_SOURCELINK": False,
        "NAVIGATION_LINKS": {lang: (("archive.html", "Archive"), ("categories/index.html", "Tags"))},
        "INDEX_DISPLAY_POST_COUNT": 5, "CREATE_SINGLE_ARCHIVE": True, "USE_BASE_TAG": False,
        "CONTENT_FOOTER": f"Contents © 2023 {site.title}", "LICENSE": "", "SEARCH_FORM": "",
    }
    _write(work / "conf.py", "".join(f"{k} = {v!r}\n" for k, v in conf.items()))
    for a in site.articles:
        meta = {"title": a.body.title, "slug": a.slug, "date": f"{a.date} 09:00:00 UTC", "tags": ", ".join(a.tags),
                "category": a.tags[0]}
        head = "<!--\n" + "".join(f".. {k}: {v.replace(chr(10), ' ')}\n" for k, v in meta.items()) + "-->\n\n"
        _write(work / "posts" / f"{a.slug}.html", head + to_html(a.body.blocks) + "\n"
               + extras_html(a, lambda s: f"{s}.html", site.neutral_names))
    (work / "pages").mkdir(exist_ok=True)
    run([sys.executable, "-m", "nikola", "build"], work, f"nikola/{site.theme}")
    return work / "output", {a.slug: f"posts/{a.slug}.html" for a in site.articles}


# ---- Jekyll ------------------------------------------------------------------------------------------------------
def build_jekyll(site: Site, work: Path) -> tuple[Path, dict[str, str]]:
    src, out = work / "src", work / "_site"
    config = {"title": site.title, "description": f"{site.title}: news and notes", "theme": site.theme,
              "lang": site.language, "permalink": "/:title:output_ext", "plugins": ["jekyll-feed", "jekyll-seo-tag"],
              "url": "", "baseurl": "", "show_excerpts": True}
    _write(src / "_config.yml", json.dumps(config, ensure_ascii=False))
    _write(src / "index.md", "---\nlayout: home\n---\n")
    _write(src / "about.md", "---\nlayout: page\ntitle: About\npermalink: /about.html\n---\n\n"
           f"{html.escape(site.title, quote=False)} is an editorial site.\n")
    for a in site.articles:
        front = {"layout": "post", "title": a.body.title, "date": f"{a.date} 09:00:00 +0000", "tags": list(a.tags)}
        _write(src / "_posts" / f"{a.date}-{a.slug}.html",
               "---\n" + json.dumps(front, ensure_ascii=False) + "\n---\n" + to_html(a.body.blocks) + "\n"
               + extras_html(a, lambda s: f"{s}.html", site.neutral_names))
    run(["jekyll", "build", "--quiet", "-s", str(src), "-d", str(out)], work, f"jekyll/{site.theme}")
    return out, {a.slug: f"{a.slug}.html" for a in site.articles}


BUILDERS: dict[str, Callable[[Site, Path], tuple[Path, dict[str, str]]]] = {
    "sphinx": build_sphinx, "mkdocs": build_mkdocs, "pelican": build_pelican, "nikola": build_nikola,
    "jekyll": build_jekyll,
}
THEMES: dict[str, tuple[str, ...]] = {
    "sphinx": tuple(SPHINX_THEMES), "mkdocs": ("material", "readthedocs"), "pelican": ("notmyidea",),
    "nikola": ("bootblog4", "bootstrap4", "base"), "jekyll": ("minima",),
}


def available(engine: str) -> str | None:
    """None when the engine can run here, else why not."""
    if engine == "jekyll":
        return None if shutil.which("jekyll") else "jekyll not installed (Debian: jekyll jekyll-theme-minima)"
    module = {"sphinx": "sphinx", "mkdocs": "mkdocs", "pelican": "pelican", "nikola": "nikola"}[engine]
    import importlib.util

    return None if importlib.util.find_spec(module) else f"{module} not installed (pip install 'centrum[corpus]')"


__all__ = ["Article", "BUILDERS", "EngineError", "Site", "THEMES", "available", "rst_escape"]
