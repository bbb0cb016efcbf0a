"""Which site a data-set page comes from, and cross-validation folds that never split a site.

Pages of one site share templates, so a model tested on a site it was trained on is measured too kindly. A page's
site is the *registered domain* (public-suffix list, offline: the ``tld`` package ships its copy) of, in order, its
meta.jsonl ``url``, its meta ``domain``/``site``, or the page's own ``<link rel=canonical>``/``og:url``; a page with
none of these is a site of its own.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .datasets import PageItem

# Tags and attributes in the head of the page bytes; attribute order varies between pages.
_TAG = re.compile(rb"<(?:link|meta)\b[^>]*>", re.IGNORECASE)
_ATTR = re.compile(rb"""([a-zA-Z:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
HEAD_BYTES = 256 * 1024


def registered_domain(url_or_host: str) -> str | None:
    """``news.bbc.co.uk`` for ``https://news.bbc.co.uk/x`` (public-suffix rules); None for IPs, localhost, junk."""
    from tld import get_fld

    value = url_or_host.strip()
    if not value:
        return None
    try:
        found = get_fld(value, fail_silently=True, fix_protocol=True)
    except Exception:  # noqa: BLE001 - a malformed URL has no site
        return None
    return str(found).lower() if found else None


def declared_url(html: bytes) -> str | None:
    """The page's canonical URL (``<link rel=canonical>``), else its ``og:url``, from the first 256 KiB."""
    canonical = og = None
    for tag in _TAG.finditer(html[:HEAD_BYTES]):
        attrs = {m.group(1).lower(): (m.group(2) or m.group(3) or m.group(4) or b"")
                 for m in _ATTR.finditer(tag.group(0))}
        if canonical is None and b"canonical" in attrs.get(b"rel", b"").lower().split() and attrs.get(b"href"):
            canonical = attrs[b"href"]
        if og is None and attrs.get(b"property", b"").lower() == b"og:url" and attrs.get(b"content"):
            og = attrs[b"content"]
    found = canonical or og
    return found.decode("utf-8", "replace").strip() if found else None


def page_site(item: PageItem, html: bytes | None = None) -> str:
    """The site key of a data-set page (see the module docstring); a generated page (the styled corpus) is grouped
    with the page its body came from."""
    if (source := source_site(item.meta)) is not None:
        return source
    for key in ("url", "domain", "site"):
        value = item.meta.get(key)
        if isinstance(value, str) and (site := registered_domain(value)):
            return site
    url = declared_url(item.html() if html is None else html)
    if url and (site := registered_domain(url)):
        return site
    return f"page:{item.dataset}/{item.id}"


def site_folds(sites: Sequence[str], k: int = 5) -> list[int]:
    """Fold (0..k-1) of each page such that no site is in two folds, folds as equal in pages as the sites allow.

    Largest sites first, each to the fold with the fewest pages so far (GroupKFold's rule); ties between sites of one
    size are broken by a hash of the site name, so the folds do not depend on the order of the data sets."""
    if k < 2:
        raise ValueError("cross-validation needs at least 2 folds")
    sizes = Counter(sites)
    order = sorted(sizes, key=lambda s: (-sizes[s], hashlib.sha256(s.encode()).hexdigest()))
    load = [0] * k
    fold_of: dict[str, int] = {}
    for s in order:
        f = min(range(k), key=lambda i: (load[i], i))
        fold_of[s] = f
        load[f] += sizes[s]
    return [fold_of[s] for s in sites]


def source_site(meta: Mapping[str, Any]) -> str | None:
    """The cross-validation group of a generated page: the site of the data-set page its body came from (so the
    generated page and its source are never on both sides of a fold); None for a page of any other data set."""
    if meta.get("source_set") and meta.get("source_id"):
        site = meta.get("source_site")
        return str(site) if site else f"page:{meta['source_set']}/{meta['source_id']}"
    return None
