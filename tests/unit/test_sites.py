"""Sites of data-set pages and site-grouped folds (centrum.gold.sites)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from centrum.gold.datasets import PageItem
from centrum.gold.metrics import Gold
from centrum.gold.sites import declared_url, page_site, registered_domain, site_folds


def test_registered_domain_follows_the_public_suffix_list() -> None:
    assert registered_domain("https://news.bbc.co.uk/world/x?y=1") == "bbc.co.uk"
    assert registered_domain("http://health.in.gr/news/") == "in.gr"
    assert registered_domain("www.Express.GR") == "express.gr"  # a bare host name, as some meta files give
    assert registered_domain("https://someone.blogspot.com/p") == "someone.blogspot.com"  # a private suffix
    assert registered_domain("http://127.0.0.1:8000/") is None
    assert registered_domain("not a url") is None and registered_domain("") is None


def test_declared_url_reads_canonical_before_og_url_in_any_attribute_order() -> None:
    html = (b"<html><head><meta content='https://og.example.org/a' property='og:url'>"
            b"<link href=\"https://www.canon.example.com/story\" rel=\"canonical\"></head>")
    assert declared_url(html) == "https://www.canon.example.com/story"
    assert declared_url(b"<meta property=og:url content=https://og.example.org/a>") == "https://og.example.org/a"
    assert declared_url(b"<html><body>no head</body></html>") is None


def item(tmp_path: Path, pid: str, meta: dict, html: bytes = b"<html></html>") -> PageItem:
    path = tmp_path / f"{pid}.html"
    path.write_bytes(html)
    return PageItem("set", pid, path, Gold(text="x"), meta=meta)


def test_page_site_prefers_meta_url_then_domain_then_the_page(tmp_path: Path) -> None:
    canon = b'<link rel="canonical" href="https://m.shop.example.co.jp/p/1">'
    assert page_site(item(tmp_path, "a", {"url": "https://a.example.com/x", "domain": "other.org"}, canon)) == \
        "example.com"
    assert page_site(item(tmp_path, "b", {"url": None, "domain": "www.other.org"}, canon)) == "other.org"
    assert page_site(item(tmp_path, "c", {"url": None}, canon)) == "example.co.jp"
    assert page_site(item(tmp_path, "d", {})) == "page:set/d"  # nothing known: a site of its own


def test_site_folds_never_split_a_site_and_balance_pages() -> None:
    sites = ["big"] * 30 + ["mid"] * 12 + [f"s{i}" for i in range(58)]
    folds = site_folds(sites, 5)
    by_site: dict[str, set[int]] = {}
    for s, f in zip(sites, folds, strict=True):
        by_site.setdefault(s, set()).add(f)
    assert all(len(f) == 1 for f in by_site.values())
    sizes = Counter(folds)
    assert set(sizes) == set(range(5)) and sizes[by_site["big"].pop()] == 30  # the big site's fold takes no more
    others = sorted(n for f, n in sizes.items() if n != 30)
    assert others[-1] - others[0] <= 1  # the remaining 70 pages spread evenly over the other four folds
    # Same folds whatever the order of the pages.
    shuffled = sites[::-1]
    again = dict(zip(shuffled, site_folds(shuffled, 5), strict=True))
    assert all(again[s] == f for s, f in zip(sites, folds, strict=True))


def test_one_benchmarks_folders_share_sites_and_lodo_folds(tmp_path: Path) -> None:
    """wcxb and wcxb-dev2 are two folders of one benchmark with shared domains: a domain's pages of both folders are
    one site (one CV fold), and leave-one-data-set-out holds both folders out together."""
    from centrum.training.learner import benchmark_folds

    a = PageItem("wcxb", "wcxb-0006", tmp_path / "a.html", Gold(text="x"), meta={"url": "https://talkreal.org/a"})
    b = PageItem("wcxb-dev2", "wcxb-0001", tmp_path / "b.html", Gold(text="x"), meta={"url": "https://talkreal.org/b"})
    assert page_site(a) == page_site(b) == "talkreal.org"
    sites = [page_site(a), page_site(b), "x.org", "y.org", "z.org"]
    folds = site_folds(sites, 2)
    assert folds[0] == folds[1]
    got = benchmark_folds({"wcxb": "WCXB v1.0", "wcxb-dev2": "WCXB v1.0", "dragnet": "Dragnet", "mine": None})
    assert got == {"wcxb": "wcxb+wcxb-dev2", "wcxb-dev2": "wcxb+wcxb-dev2", "dragnet": "dragnet", "mine": "mine"}
