from centrum.core.textmetrics import count_words, count_words_many, tokens


def test_spaced_scripts_split_on_whitespace_and_punctuation():
    assert tokens("Hello, world! It's 2026.") == ["Hello", "world", "It's", "2026"]
    assert tokens("Привет, мир") == ["Привет", "мир"]
    assert tokens("مرحبا بالعالم") == ["مرحبا", "بالعالم"]
    assert tokens("안녕하세요 세계") == ["안녕하세요", "세계"]


def test_unspaced_scripts_count_characters():
    assert tokens("日本語のテキスト") == list("日本語のテキスト")
    assert count_words("中文文本。") == 4
    assert tokens("ภาษาไทย") == list("ภาษาไทย")
    assert tokens("東京 Tokyo") == ["東", "京", "Tokyo"]


def test_count_words_many_matches_count_words():
    texts = ["one two", "", "日本 and 中文", "  "]
    assert count_words_many(texts).tolist() == [count_words(t) for t in texts] == [2, 0, 5, 0]


def test_combining_marks_stay_in_their_word():
    # Devanagari vowel signs and Arabic harakat are combining marks, not word boundaries.
    assert tokens("समिति ने पूरे क्षेत्र") == ["समिति", "ने", "पूरे", "क्षेत्र"]
    assert tokens("مَرْحَبًا بِكُم") == ["مَرْحَبًا", "بِكُم"]


def test_joiners_and_vectorized_count_agree_with_tokens():
    texts = ["It's e.g. well-known", "a..b", "x-", "-y", "'q'", "😀 ok", "x_y", "Ölçü", "a\x00b"]
    assert tokens(texts[0]) == ["It's", "e.g", "well-known"]
    assert count_words_many(texts).tolist() == [len(tokens(t)) for t in texts]


def test_count_words_many_gives_the_same_counts_in_runs_of_any_length(monkeypatch):
    # The texts are counted in runs of about _COUNT_PIECE characters (bounded memory on a large page): a run boundary
    # falls between two texts, so no count may depend on where it falls.
    import centrum.core.textmetrics as tm

    texts = ["It's e.g. well-known", "", "日本語 text", "x-", "-y", "समिति ने पूरे", "😀 ok", "a" * 40, "  ", "b c"] * 5
    expected = [len(tokens(t)) for t in texts]
    for piece in (1, 7, 41, 1 << 18):
        monkeypatch.setattr(tm, "_COUNT_PIECE", piece)
        counts = count_words_many(texts)
        assert counts.dtype.name == "int64" and counts.tolist() == expected
