"""Comment threads and title lists by shape (feature set v14) and node-level supervision of the block filter
(token alignment of the page to the gold), on hand-built snapshots and small synthetic records."""

from __future__ import annotations

import numpy as np

from centrum.algorithms import ensemble as Ens
from centrum.algorithms.ensemble import blocks as B
from centrum.algorithms.ensemble import features as F
from centrum.algorithms.ensemble import model as M
from centrum.core.builders import E, build
from centrum.core.builders import T as Tx
from centrum.gold.metrics import Gold
from centrum.training import learner as T

W = 1200
WORDS = ("river bridge council morning harbour station winter garden market ferry lantern orchard meadow valley "
         "quarry mill tower chapel").split()


def sentence(seed: int, n: int = 24) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), n)).capitalize() + "."


def para(y: float, text: str, name: str | None = None, cls: str | None = None) -> E:
    return E("p", (100, y, 800, 40), [Tx(text)], name=name, cls=cls)


def thread(posts: int, seed: int = 0, quote: int = 1):
    """A forum page: every post has a user card (name, "Posts: N", "Joined: ..."), a body, and a "Reply" button;
    post ``quote`` quotes the first post's first sentence; a pagination line and a "Post Reply" button close it.
    Class names say nothing (``c1``, ``c2``...). Returns (built page, gold text, texts of the thread's noise)."""
    kids, gold, y = [], [], 100.0
    title = "Thread " + sentence(seed, 5)
    kids.append(E("h1", (100, 40, 800, 40), [Tx(title)]))
    gold.append(title)
    first = ""
    for k in range(posts):
        body = [sentence(seed * 100 + k), sentence(seed * 100 + k + 50)]
        first = first or body[0]
        card = E("div", (100, y, 160, 90), [
            E("b", (100, y, 100, 20), [Tx(f"user{k}")]), E("br", (0, 0, 0, 0)),
            E("span", (100, y + 20, 100, 20), [Tx(f"Posts: {10 + k}")]), E("br", (0, 0, 0, 0)),
            E("span", (100, y + 40, 100, 20), [Tx(f"Joined: {2010 + k}")])], cls="c1")
        inner = []
        if k == quote:
            inner.append(E("blockquote", (300, y, 600, 40), [Tx(first)], cls="c3"))
            gold.append(first)
        inner += [para(y + 50 + 50 * i, t) for i, t in enumerate(body)]
        gold += body
        inner.append(E("a", (300, y + 160, 60, 20), [Tx("Reply")], attrs={"href": "#r"}))
        kids.append(E("div", (100, y, 900, 200), [card, E("div", (300, y, 600, 200), inner, cls="c2")],
                      cls="c0", name=f"post{k}"))
        y += 220
    kids.append(E("div", (100, y, 800, 20), [Tx("Page 1 of 99")], cls="c4"))
    kids.append(E("button", (100, y + 30, 100, 20), [Tx("Post Reply")]))
    root = E("html", (0, 0, W, y + 100), [E("body", (0, 0, W, y + 100), kids, name="body")])
    return build(root), "\n".join(gold)


def test_aligned_tokens_keep_order_quotes_and_reordered_runs():
    gold = "a b c d e f g h i j".split()
    assert T.aligned_tokens("x a b c d e y".split(), gold).tolist() == [False] + [True] * 5 + [False]
    # The gold holds a quoted passage twice: both copies on the page align, each to its own place.
    g2 = "q1 q2 q3 q4 m1 m2 m3 m4 m5 q1 q2 q3 q4 r1 r2 r3 r4".split()
    page = "q1 q2 q3 q4 Posts 12 m1 m2 m3 m4 m5 Reply q1 q2 q3 q4 r1 r2 r3 r4 Reply".split()
    got = dict(zip(range(len(page)), T.aligned_tokens(page, g2).tolist(), strict=True))
    assert all(got[i] for i, t in enumerate(page) if t[0] in "qmr") and not any(
        got[i] for i, t in enumerate(page) if t in ("Posts", "12", "Reply"))
    # A block the gold has elsewhere (another order) aligns when it is a run; a stray shingle does not.
    g3 = "s1 s2 s3 s4 s5 s6 s7 s8 a1 a2 a3 a4 a5 a6 a7 a8".split()
    p3 = "a1 a2 a3 a4 a5 a6 a7 a8 s1 s2 s3 s4 s5 s6 s7 s8".split()
    assert T.aligned_tokens(p3, g3).all()
    assert T.aligned_tokens(["b"], ["a", "b"]).tolist() == [True]  # short texts align word by word
    assert not T.aligned_tokens([], ["a"]).size and not T.aligned_tokens(["a"], []).any()


def test_aligned_labels_leave_cards_buttons_and_pagination_out():
    texts = ["user0", "Posts: 12", "Joined: 2010", "The reply came from the station by the river.", "Reply",
             "Page 1 of 99", "Post Reply"]
    gold = Gold(text="Posts here come by Page 2. Reply: The reply came from the station by the river. Join us.")
    shingles, aligned = T.block_labels(gold, texts), T.aligned_labels(gold, texts)
    # Word by word, "Reply" and "Posts" are in the gold; aligned in page order, they are not.
    assert shingles[4] == 1.0 and shingles[1] > 0
    assert aligned.tolist() == [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    assert np.isnan(T.aligned_labels(gold, ["", "..."])).all()
    snip = Gold(with_=("station by the river",), without=("Page 1",))
    assert np.array_equal(T.aligned_labels(snip, texts), T.block_labels(snip, texts), equal_nan=True)


def test_shapes_find_comment_items_and_title_lists_without_their_names():
    b, _ = thread(3)
    s = b.snapshot
    A = F.page_arrays(s)
    items = np.nonzero(A.shapes.item)[0]
    assert sorted(items.tolist()) == sorted(b.ids[f"post{k}"] for k in range(3))
    assert A.shapes.form_at == -1
    # A related list: four items of one link each, the links' texts titles; a menu of short words is no such list.
    titles = [E("li", (0, 20 * i, 400, 20), [E("a", (0, 20 * i, 400, 20), [Tx(sentence(i, 5))],
                                              attrs={"href": f"/p{i}"})]) for i in range(4)]
    menu = [E("li", (0, 20 * i, 100, 20), [E("a", (0, 20 * i, 100, 20), [Tx(w)], attrs={"href": f"/{w}"})])
            for i, w in enumerate(("Home", "About", "News", "Shop"))]
    body = [E("ul", (0, 0, 400, 80), titles, name="related"), E("ul", (0, 100, 100, 80), menu, name="menu"),
            para(300, sentence(9, 40), name="text")]
    b2 = build(E("html", (0, 0, W, 600), [E("body", (0, 0, W, 600), body)]))
    sh = F.page_arrays(b2.snapshot).shapes
    owner = b2.snapshot.text_owner
    inside = {b2.snapshot.texts[t] for t in np.nonzero(sh.titles_t)[0]}
    assert len(inside) == 4 and not sh.item.any()
    assert not sh.titles_t[owner == b2.ids["text"]].any()


def test_shape_features_of_candidates_and_blocks():
    b, _ = thread(3)
    s = b.snapshot
    pm = Ens.prepare(s, {}, Ens.Config())
    names = F.feature_names()
    cands = [(b.ids["post1"],), (b.ids["body"],)]
    X = F.features(s, cands, pm.proposals, pm.arrays)
    col = {n: i for i, n in enumerate(names)}
    assert X[0, col["shape_item_share"]] == 1.0 and X[0, col["shape_items_log"]] == np.log1p(1)
    assert 0.8 < X[1, col["shape_item_share"]] < 1.0 and X[1, col["shape_items_log"]] == np.log1p(3)
    pb = B.page_blocks(s, (b.ids["post1"],), pm.arrays, pm.proposals, with_texts=True, scope="page")
    bcol = {n: i for i, n in enumerate(B.feature_names())}
    rows = {t: pb.X[i] for i, t in enumerate(pb.texts)}
    assert rows["Reply"][bcol["shape_item"]] == 1.0 and rows["Reply"][bcol["shape_control"]] == 1.0
    assert rows["Page 1 of 99"][bcol["shape_item"]] == 0.0
    assert rows["Reply"][bcol["shape_run_log"]] == np.log1p(3)


def _records(pages: list[tuple[object, str]], labels: str) -> list[T.PageRecord]:
    """One record per page: the block rows of the page scope around its first post, labelled by ``labels``."""
    label = T.aligned_labels if labels == "aligned" else T.block_labels
    out = []
    for k, (b, gold) in enumerate(pages):
        s = b.snapshot
        pm = Ens.prepare(s, {}, Ens.Config())
        pb = B.page_blocks(s, (b.ids["post0"],), pm.arrays, pm.proposals, with_texts=True, scope="page")
        rec = T.PageRecord("synthetic", str(k), "text", np.zeros((0, len(F.feature_names()))), np.zeros(0), [], s.n)
        rec.blocks.append((0, pb.X, label(Gold(text=gold), pb.texts)))
        out.append(rec)
    return out


def test_a_block_filter_trained_on_aligned_labels_reads_a_thread_whole():
    """Trained on node-level labels of a few synthetic threads, the block filter keeps every post of an unseen
    thread, the quoted post included, and leaves the user cards, reply buttons and pagination out."""
    train = [thread(posts, seed) for seed, posts in enumerate((3, 4, 5, 3, 4, 6), 1)]
    opts = T.FitOptions(learner="stumps", block_rounds=60, block_min_leaf=3, seed=0)
    model = T.fit_blocks(_records(train, "aligned"), opts)
    b, gold = thread(4, seed=42, quote=2)
    s = b.snapshot
    pm = Ens.prepare(s, {}, Ens.Config())
    cfg = Ens.Config(scope="page", comments="keep")
    out = Ens.output(s, (b.ids["post0"],), pm, cfg, block_model=model)
    lines = out.text.splitlines()
    assert all(line in lines for line in gold.splitlines()[1:])  # every post, the quote included
    assert lines.count(gold.splitlines()[1]) == 2  # the quoted sentence: in the quote and in its post
    noise = [line for line in lines if line.startswith(("user", "Posts:", "Joined:", "Page 1")) or "Reply" in line]
    assert noise == []
    # The word-by-word labels teach another filter: "Reply" is gold whenever a post says "reply".
    shingle = T.block_labels(Gold(text="We Reply to Posts on this Page."), ["Reply", "Posts: 12", "Page 2"])
    assert shingle.tolist() == [1.0, 0.5, 0.5]


def article_with_comments():
    """An article (four long paragraphs) followed by three comments whose classes say nothing (``s-item``)."""
    kids = [para(100 + 60 * i, sentence(200 + i, 40)) for i in range(4)]
    for k in range(3):
        y = 400 + 100 * k
        kids.append(E("div", (100, y, 800, 90), [
            E("p", (100, y, 800, 20), [E("b", (100, y, 80, 20), [Tx(f"reader{k}")]),
                                       E("span", (200, y, 80, 20), [Tx("2023-03-0" + str(k + 1))])], cls="s-by"),
            para(y + 25, sentence(300 + k, 20)),
            E("p", (100, y + 70, 800, 20), [E("a", (100, y + 70, 40, 20), [Tx("Reply")], attrs={"href": "#f"})])],
            cls="s-item", name=f"c{k}"))
    art = E("div", (100, 100, 800, 700), kids, name="art")
    return build(E("html", (0, 0, W, 900), [E("body", (0, 0, W, 900), [art], name="body")]))


def test_comment_shapes_set_neutrally_named_comments_aside_and_keep_a_thread():
    names = B.feature_names()
    keep_all = M.Stumps(names, 1.0, [], [], [], [])  # a block filter that keeps every block
    b = article_with_comments()
    s = b.snapshot
    pm = Ens.prepare(s, {}, Ens.Config())
    by_names = Ens.output(s, (b.ids["art"],), pm, Ens.Config(comment_shapes=False), block_model=keep_all).text
    by_shape = Ens.output(s, (b.ids["art"],), pm, Ens.Config(comment_shapes=True), block_model=keep_all).text
    assert "reader0" in by_names and sentence(300, 20) in by_names  # no comment name: kept before
    assert "reader0" not in by_shape and sentence(300, 20) not in by_shape and sentence(203, 40) in by_shape
    # A thread is all items: nothing comes before them, so its posts stay.
    t, _ = thread(3)
    pmt = Ens.prepare(t.snapshot, {}, Ens.Config())
    out = Ens.output(t.snapshot, (t.ids["body"],), pmt, Ens.Config(comment_shapes=True), block_model=keep_all)
    assert all(f"user{k}" in out.text for k in range(3))
