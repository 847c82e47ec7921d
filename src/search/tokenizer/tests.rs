//! Tests of the tokenizer: every query and tokenizer example DSH documents, the ported tables against their fast
//! paths for every code point, the CJK mode, and (natively) differential tests against SQLite.

use super::{MAX_TERM_BYTES, Token, TokenizerMode, Tokens, tokenize, unicode61};

/// The folded terms of `text` in `Unicode61` mode.
fn terms(text: &str) -> Vec<String> {
    tokenize(text, TokenizerMode::Unicode61)
        .into_iter()
        .map(|t| t.text.into_owned())
        .collect()
}

/// The folded terms of `text` in `Cjk` mode.
fn cjk_terms(text: &str) -> Vec<String> {
    tokenize(text, TokenizerMode::Cjk)
        .into_iter()
        .map(|t| t.text.into_owned())
        .collect()
}

/// Phrase matching: the query's terms occur contiguously, in order, in the document's.
fn phrase_matches(document: &str, query: &str, mode: TokenizerMode) -> bool {
    let document = tokenize(document, mode);
    let query = tokenize(query, mode);
    !query.is_empty()
        && document
            .windows(query.len())
            .any(|w| w.iter().zip(&query).all(|(d, q)| d.text == q.text))
}

fn matches(document: &str, query: &str) -> bool {
    phrase_matches(document, query, TokenizerMode::Unicode61)
}

/// Structural invariants every token stream must satisfy (both modes).
fn check_invariants(text: &str, tokens: &[Token<'_>]) {
    let mut previous_start = 0;
    for (index, token) in tokens.iter().enumerate() {
        assert_eq!(token.position, index, "{text:?}: positions are consecutive");
        assert!(
            token.byte_range.start >= previous_start,
            "{text:?}: tokens in text order"
        );
        assert!(!token.byte_range.is_empty(), "{text:?}: tokens are not empty");
        let before = text.get(..token.byte_range.start).expect("range on a char boundary");
        let inside = text.get(token.byte_range.clone()).expect("range on a char boundary");
        assert_eq!(before.chars().count(), token.char_range.start, "{text:?}: char start");
        assert_eq!(inside.chars().count(), token.char_range.len(), "{text:?}: char length");
        if token.text.len() <= MAX_TERM_BYTES / 2 {
            // Re-tokenizing a token's own source range gives back exactly that term.
            assert_eq!(
                terms(inside),
                vec![token.text.to_string()],
                "{text:?}: range {:?}",
                token.byte_range
            );
        }
        previous_start = token.byte_range.start;
    }
}

// ---- query examples --------------------------------------------------------------

#[test]
fn query_examples_of_section_4() {
    assert!(matches("An AI helper", "AI"));
    assert!(!matches("BRAID", "AI"));
    assert!(!matches("alpha middle beta", "alpha beta"));
    assert!(matches("alpha, beta", "alpha beta"));
    assert!(matches("foo_bar", "foo bar"));
    assert!(matches("say \"needle\" exactly", "say \"needle\""));
    assert!(matches("needle OR absent", "needle OR absent"));
    assert!(matches("needle", "needle*"));
}

#[test]
fn queries_without_tokens_match_nothing() {
    for query in ["*", "!!!", "\"…\"", "  ", "😀", "\u{FFFD}"] {
        assert!(terms(query).is_empty(), "{query:?}");
        assert!(!matches("anything * !!! \"…\"", query));
    }
}

#[test]
fn operators_are_ordinary_words() {
    assert_eq!(
        terms("a AND b OR NOT c NEAR(d)"),
        ["a", "and", "b", "or", "not", "c", "near", "d"]
    );
    assert_eq!(terms("\"x\" ^y:z (w)"), ["x", "y", "z", "w"]);
}

// ---- token characters and separators ------------------------------------------

#[test]
fn underscore_separates() {
    assert_eq!(terms("foo_bar"), ["foo", "bar"]);
}

#[test]
fn apostrophe_separates() {
    assert_eq!(terms("don't"), ["don", "t"]);
    assert_eq!(terms("don\u{2019}t"), ["don", "t"]);
}

#[test]
fn dots_separate_numbers() {
    assert_eq!(terms("v1.2.3"), ["v1", "2", "3"]);
    assert_eq!(terms("3.14"), ["3", "14"]);
}

#[test]
fn ascii_punctuation_and_controls_separate() {
    let punctuation: String = (0u8..128)
        .filter(|b| !b.is_ascii_alphanumeric())
        .map(char::from)
        .collect();
    assert!(terms(&punctuation).is_empty());
    assert_eq!(
        terms("a-b/c@d#e$f%g\"h'i[j]k{l}m<n>o\0p\tq\nr"),
        [
            "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q", "r"
        ]
    );
}

#[test]
fn special_spaces_and_format_characters_separate() {
    for separator in [
        '\u{00A0}', '\u{00AD}', '\u{200B}', '\u{200C}', '\u{200D}', '\u{2060}', '\u{FEFF}', '\u{0085}', '\u{2019}',
        '\u{FFFD}', '\u{3000}', '\u{2028}', '\u{2029}', '\u{202F}', '\u{1680}',
    ] {
        assert_eq!(
            terms(&format!("ab{separator}cd")),
            ["ab", "cd"],
            "U+{:04X}",
            u32::from(separator)
        );
    }
}

#[test]
fn noncharacters_fffe_ffff_separate_like_fffd() {
    // SQLite's UTF-8 reader turns them into U+FFFD; other noncharacters are unassigned letters.
    assert_eq!(terms("a\u{FFFE}b\u{FFFF}c"), ["a", "b", "c"]);
    assert_eq!(terms("a\u{FDD0}b\u{1FFFE}c"), ["a\u{FDD0}b\u{1FFFE}c"]);
}

#[test]
fn superscript_two_is_a_token_character() {
    assert_eq!(terms("x²"), ["x²"]);
}

#[test]
fn number_symbols_are_tokens() {
    assert_eq!(terms("½ Ⅻ"), ["½", "ⅻ"]);
}

#[test]
fn old_emoji_separate() {
    assert_eq!(terms("it😀works"), ["it", "works"]);
    assert!(terms("😀").is_empty());
}

#[test]
fn emoji_newer_than_unicode_6_1_are_token_characters() {
    assert_eq!(terms("it🥰"), ["it🥰"]);
    assert!(!matches("it🥰", "it"));
    assert_eq!(terms("🫠 melt"), ["🫠", "melt"]);
}

#[test]
fn listed_diacritic_continues_token_and_vanishes() {
    assert_eq!(terms("a\u{0301}b"), ["ab"]);
    assert_eq!(terms("e\u{0301}"), ["e"]);
    // Every listed diacritic continues a token; U+0305 and U+0345 do not.
    for c in (0x300..=0x304)
        .chain(0x306..=0x30C)
        .chain([0x30F, 0x311, 0x31B])
        .chain(0x323..=0x328)
    {
        let c = char::from_u32(c).expect("scalar");
        assert_eq!(terms(&format!("a{c}b")), ["ab"], "U+{:04X}", u32::from(c));
    }
    for c in [0x32D, 0x32E, 0x330, 0x331] {
        let c = char::from_u32(c).expect("scalar");
        assert_eq!(terms(&format!("a{c}b")), ["ab"], "U+{:04X}", u32::from(c));
    }
    assert_eq!(terms("a\u{0305}b"), ["a", "b"]);
    assert_eq!(terms("a\u{0345}b"), ["a", "b"]);
}

#[test]
fn diacritic_never_starts_a_token() {
    assert_eq!(terms("\u{0301}ab"), ["ab"]);
    assert_eq!(terms(" \u{0301}"), Vec::<String>::new());
}

#[test]
fn hebrew_point_splits() {
    // שָׁלוֹם with points: the points (Mn) split the word.
    assert_eq!(terms("ש\u{05B8}\u{05C1}ל\u{05B9}ום"), ["ש", "ל", "ום"]);
    assert_eq!(terms("שלום"), ["שלום"]);
}

#[test]
fn devanagari_vowel_signs_and_virama_split() {
    // हिन्दी: ह + ि (Mc) + न + ् (virama, Mn) + द + ी (Mc)
    assert_eq!(terms("हिन्दी"), ["ह", "न", "द"]);
}

#[test]
fn chinese_run_is_one_token() {
    assert_eq!(terms("我喜欢数据库"), ["我喜欢数据库"]);
    assert!(matches("数据库", "数据库"));
    assert!(!matches("我喜欢数据库", "数据库"));
}

#[test]
fn japanese_run_is_one_token() {
    assert_eq!(terms("日本語のテキスト"), ["日本語のテキスト"]);
}

#[test]
fn cjk_punctuation_separates() {
    assert_eq!(terms("我喜欢，数据库。"), ["我喜欢", "数据库"]);
    assert!(matches("我喜欢，数据库。", "数据库"));
    assert_eq!(terms("東京、大阪・京都"), ["東京", "大阪", "京都"]);
}

#[test]
fn korean_words_tokenise_per_word() {
    assert_eq!(terms("한국어 텍스트"), ["한국어", "텍스트"]);
}

#[test]
fn private_use_is_a_token_character() {
    assert_eq!(
        terms("a\u{E000}b \u{F0000}\u{10FFFD}"),
        ["a\u{E000}b", "\u{F0000}\u{10FFFD}"]
    );
}

#[test]
fn unassigned_in_unicode_6_1_is_a_token_character() {
    // U+0378 is still unassigned; U+08A1 and U+1F970 were assigned after 6.1 (a letter, an emoji).
    assert_eq!(
        terms("a\u{0378}b \u{08A1} x\u{1F970}"),
        ["a\u{0378}b", "\u{08A1}", "x\u{1F970}"]
    );
}

// ---- folding ---------------------------------------------------------------------

#[test]
fn ascii_case_folds() {
    assert_eq!(terms("WORLD Hello"), ["world", "hello"]);
}

#[test]
fn dz_digraph_folds() {
    assert_eq!(terms("Ǆ ǅ ǆ"), ["ǆ", "ǆ", "ǆ"]);
}

#[test]
fn sigma_and_final_sigma_fold() {
    assert_eq!(terms("Σ ς σ ΟΔΟΣ οδος"), ["σ", "σ", "σ", "οδοσ", "οδοσ"]);
}

#[test]
fn micro_sign_folds_to_mu() {
    assert_eq!(terms("µ"), ["μ"]);
}

#[test]
fn long_s_folds_to_s() {
    assert_eq!(terms("ſ"), ["s"]);
}

#[test]
fn beta_symbol_folds() {
    assert_eq!(terms("ϐ"), ["β"]);
}

#[test]
fn kelvin_sign_folds_to_k() {
    assert_eq!(terms("\u{212A}"), ["k"]);
}

#[test]
fn ohm_sign_folds_to_omega() {
    assert_eq!(terms("\u{2126}"), ["ω"]);
}

#[test]
fn capital_sharp_s_folds_to_sharp_s() {
    assert_eq!(terms("ẞ"), ["ß"]);
}

#[test]
fn sharp_s_stays() {
    assert_eq!(terms("ß Straße"), ["ß", "straße"]);
    assert!(!matches("Straße", "strasse"));
}

#[test]
fn dotless_i_stays() {
    assert_eq!(terms("ı"), ["ı"]);
    assert!(!matches("ı", "i"));
}

#[test]
fn dotted_capital_i_becomes_i() {
    assert_eq!(terms("İ İstanbul"), ["i", "istanbul"]);
    assert!(matches("İstanbul", "istanbul"));
}

#[test]
fn fullwidth_folds_case_but_stays_fullwidth() {
    assert_eq!(terms("Ｆｕｌｌ"), ["ｆｕｌｌ"]);
    assert!(!matches("Ｆｕｌｌ", "full"));
}

#[test]
fn ligatures_and_math_alphanumerics_stay() {
    assert_eq!(terms("ﬁ 𝐀"), ["ﬁ", "𝐀"]);
}

#[test]
fn cherokee_folding_added_after_6_1_stays() {
    assert_eq!(terms("Ꭰ ꭰ"), ["Ꭰ", "ꭰ"]);
}

#[test]
fn deseret_folds() {
    assert_eq!(terms("𐐀"), ["𐐨"]);
}

#[test]
fn latin_single_diacritic_removed() {
    assert_eq!(terms("café CAFÉ Café"), ["cafe", "cafe", "cafe"]);
    assert_eq!(
        terms("naïve Ångström ñ ç ą ÿ Ÿ ǰ"),
        ["naive", "angstrom", "n", "c", "a", "y", "y", "j"]
    );
    assert!(matches("café", "CAFE"));
    assert!(matches("cafe", "café"));
}

#[test]
fn angstrom_sign_folds_to_a() {
    assert_eq!(terms("\u{212B}"), ["a"]);
}

#[test]
fn vietnamese_keeps_double_diacritics() {
    assert_eq!(terms("Tiếng Việt"), ["tiếng", "việt"]);
    assert_eq!(terms("ế ộ ǻ ǘ"), ["ế", "ộ", "ǻ", "ǘ"]);
}

#[test]
fn letters_with_non_decomposable_marks_stay() {
    assert_eq!(
        terms("ø đ ł æ œ ð þ Ø Đ Ł Æ Œ"),
        ["ø", "đ", "ł", "æ", "œ", "ð", "þ", "ø", "đ", "ł", "æ", "œ"]
    );
}

#[test]
fn greek_and_cyrillic_accents_stay() {
    assert_eq!(terms("ά Ά ё Ё ί"), ["ά", "ά", "ё", "ё", "ί"]);
}

#[test]
fn no_stemming_no_prefixes() {
    assert!(!matches("parsers", "parser"));
    assert!(!matches("parser", "parsers"));
}

// ---- Offsets, positions, borrowing, truncation -----------------------------------------------

#[test]
fn tokens_carry_byte_and_char_ranges() {
    let text = "Ünïcode «x²» e\u{0301}\u{0301} 数据";
    let tokens = tokenize(text, TokenizerMode::Unicode61);
    let summary: Vec<_> = tokens
        .iter()
        .map(|t| (t.text.as_ref(), t.position, t.byte_range.clone(), t.char_range.clone()))
        .collect();
    assert_eq!(
        summary,
        [
            ("unicode", 0, 0..9, 0..7),
            ("x²", 1, 12..15, 9..11),
            ("e", 2, 18..23, 13..16),
            ("数据", 3, 24..30, 17..19),
        ]
    );
    check_invariants(text, &tokens);
}

#[test]
fn unchanged_tokens_are_borrowed() {
    let tokens = tokenize("plain Upper 数据 café", TokenizerMode::Unicode61);
    let borrowed: Vec<bool> = tokens
        .iter()
        .map(|t| matches!(t.text, std::borrow::Cow::Borrowed(_)))
        .collect();
    assert_eq!(borrowed, [true, false, true, false]);
}

#[test]
fn next_ref_matches_iterator() {
    let text = "Mixed CASE, café; 我喜欢数据库 ok x\u{0301}y";
    for mode in [TokenizerMode::Unicode61, TokenizerMode::Cjk] {
        let mut stream = Tokens::new(text, mode);
        let mut by_ref = Vec::new();
        while let Some(token) = stream.next_ref() {
            by_ref.push((
                token.text.to_owned(),
                token.position,
                token.byte_range,
                token.char_range,
            ));
        }
        let by_iter: Vec<_> = tokenize(text, mode)
            .into_iter()
            .map(|t| (t.text.into_owned(), t.position, t.byte_range, t.char_range))
            .collect();
        assert_eq!(by_ref, by_iter);
    }
}

#[test]
fn empty_and_separator_only_texts_have_no_tokens() {
    for text in [
        "",
        " ",
        "\u{FFFD}\u{FFFD}",
        "😀😀",
        "\u{0301}",
        "...",
        "\u{FEFF}\u{0085}",
    ] {
        assert!(tokenize(text, TokenizerMode::Unicode61).is_empty(), "{text:?}");
        assert!(tokenize(text, TokenizerMode::Cjk).is_empty(), "{text:?}");
    }
}

#[test]
fn long_tokens_are_cut_like_fts5() {
    let ascii = "A".repeat(MAX_TERM_BYTES + 10);
    let tokens = tokenize(&ascii, TokenizerMode::Unicode61);
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0].text, "a".repeat(MAX_TERM_BYTES));
    assert_eq!(tokens[0].byte_range, 0..MAX_TERM_BYTES + 10);
    // 3-byte letters: 32768 = 3 × 10922 + 2, so the cut leaves two bytes of the 10923rd.
    let han = "数".repeat(11_000);
    let tokens = tokenize(&han, TokenizerMode::Unicode61);
    let expected = "数".repeat(10_922) + "\u{FFFD}" + "\u{01E6}\u{0195}";
    assert_eq!(tokens[0].text, expected);
    assert_eq!(tokens[0].char_range, 0..11_000);
    // Exactly at the limit nothing changes, and the text stays borrowed.
    let exact = "b".repeat(MAX_TERM_BYTES);
    assert!(matches!(
        tokenize(&exact, TokenizerMode::Unicode61)[0].text,
        std::borrow::Cow::Borrowed(_)
    ));
}

#[test]
fn hostile_inputs_do_not_panic() {
    let nasty = [
        "\u{0301}".repeat(1000),
        "a\u{0301}".repeat(1000),
        "\u{10FFFF}\u{E0001}\u{F0000}\u{FFFF}\u{FFFE}".repeat(50),
        "数\u{0301}".repeat(20_000),
        "x".repeat(100_000),
        (0..0x3000u32).filter_map(char::from_u32).collect(),
    ];
    for text in &nasty {
        for mode in [TokenizerMode::Unicode61, TokenizerMode::Cjk] {
            let tokens = tokenize(text, mode);
            check_invariants(text, &tokens);
        }
    }
}

// ---- The ported tables and the fast paths ------------------------------------------------------

/// All Unicode scalar values.
fn all_chars() -> impl Iterator<Item = char> {
    (0..=0x10FFFFu32).filter_map(char::from_u32)
}

#[test]
fn ascii_table_matches_sqlite_categories() {
    for b in 1u8..128 {
        assert_eq!(
            super::ASCII_TOKEN_CHAR[usize::from(b)],
            unicode61::is_token_category(u32::from(b)),
            "{b}"
        );
    }
    assert!(!super::ASCII_TOKEN_CHAR[0]);
}

#[test]
fn fast_paths_agree_with_the_ported_functions_for_every_code_point() {
    for c in all_chars() {
        let c = u32::from(c);
        let reference = if c == 0xFFFE || c == 0xFFFF {
            false
        } else {
            unicode61::is_token_category(c)
        };
        if c >= 0x80 {
            assert_eq!(super::is_token_char(c), reference, "U+{c:04X}");
        }
        assert_eq!(super::fold(c), unicode61::fold(c), "U+{c:04X}");
    }
}

#[test]
fn folding_yields_characters_and_keeps_cjk_letters() {
    for c in all_chars() {
        let code = u32::from(c);
        if code >= 0x80 && super::is_token_char(code) {
            let folded = super::fold(code);
            assert!(folded != 0, "U+{code:04X} folds to nothing");
            let folded = char::from_u32(folded).expect("fold yields a scalar value");
            if super::is_cjk(code) {
                assert_eq!(folded, c, "U+{code:04X}");
            }
        }
        if unicode61::is_diacritic(code) {
            assert!(!unicode61::is_token_category(code));
            assert_eq!(super::fold(code), 0, "U+{code:04X}");
        }
    }
}

#[test]
fn category_spot_checks() {
    // Lu, Ll, Lo, Nd, No, Co, Cn, So, Zs, Mn, Pd as SQLite numbers them.
    assert_eq!(unicode61::category(u32::from('A')), 9);
    assert_eq!(unicode61::category(u32::from('a')), 5);
    assert_eq!(unicode61::category(0x4E00), 7);
    assert_eq!(unicode61::category(u32::from('7')), 13);
    assert_eq!(unicode61::category(0xB2), 15);
    assert_eq!(unicode61::category(0xE000), 31);
    assert_eq!(unicode61::category(0x0378), 0);
    assert_eq!(unicode61::category(0x1F600), 26);
    assert_eq!(unicode61::category(0x20), 29);
    assert_eq!(unicode61::category(0x0301), 12);
    assert_eq!(unicode61::category(u32::from('-')), 17);
    assert_eq!(unicode61::category(0x10FFFD), 0);
}

// ---- CJK mode ------------------------------------------------------------------------------------

fn cjk_summary(text: &str) -> Vec<(String, usize, std::ops::Range<usize>)> {
    tokenize(text, TokenizerMode::Cjk)
        .into_iter()
        .map(|t| (t.text.into_owned(), t.position, t.char_range))
        .collect()
}

#[test]
fn cjk_run_becomes_overlapping_bigrams_with_consecutive_positions() {
    assert_eq!(
        cjk_summary("我喜欢数据库 ok"),
        [
            ("我喜".to_owned(), 0, 0..2),
            ("喜欢".to_owned(), 1, 1..3),
            ("欢数".to_owned(), 2, 2..4),
            ("数据".to_owned(), 3, 3..5),
            ("据库".to_owned(), 4, 4..6),
            ("ok".to_owned(), 5, 7..9),
        ]
    );
}

#[test]
fn cjk_substring_query_matches_as_a_phrase() {
    assert_eq!(cjk_terms("数据库"), ["数据", "据库"]);
    assert!(phrase_matches("我喜欢数据库", "数据库", TokenizerMode::Cjk));
    assert!(!phrase_matches("我喜欢数据库", "数据库", TokenizerMode::Unicode61));
    assert!(phrase_matches("我喜欢数据库", "我喜欢数据库", TokenizerMode::Cjk));
    assert!(phrase_matches("我喜欢，数据库。", "数据库", TokenizerMode::Cjk));
    assert!(!phrase_matches("我喜欢，数据库。", "欢数", TokenizerMode::Cjk));
    assert!(!phrase_matches("数据", "数据库", TokenizerMode::Cjk));
    assert!(phrase_matches("日本語のテキストです", "のテキスト", TokenizerMode::Cjk));
    assert!(phrase_matches("한국어텍스트", "텍스트", TokenizerMode::Cjk));
    assert!(phrase_matches("ภาษาไทย", "ไทย", TokenizerMode::Cjk));
}

#[test]
fn cjk_single_letter_is_a_unigram() {
    assert_eq!(cjk_summary("数"), [("数".to_owned(), 0, 0..1)]);
    assert_eq!(cjk_terms("a 数 b"), ["a", "数", "b"]);
    assert!(phrase_matches("今天 数 学", "数", TokenizerMode::Cjk));
    // A letter inside a run is only indexed within bigrams.
    assert!(!phrase_matches("数据库", "数", TokenizerMode::Cjk));
}

#[test]
fn cjk_mixed_token_splits_into_segments() {
    assert_eq!(
        cjk_summary("SQL数据库v2"),
        [
            ("sql".to_owned(), 0, 0..3),
            ("数据".to_owned(), 1, 3..5),
            ("据库".to_owned(), 2, 4..6),
            ("v2".to_owned(), 3, 6..8),
        ]
    );
    assert_eq!(cjk_terms("a数b"), ["a", "数", "b"]);
    assert!(phrase_matches("用SQL数据库", "sql 数据库", TokenizerMode::Cjk));
}

#[test]
fn cjk_deleted_diacritics_stay_with_their_letter() {
    let tokens = tokenize("数\u{0301}据x\u{0301}", TokenizerMode::Cjk);
    let summary: Vec<_> = tokens
        .iter()
        .map(|t| (t.text.as_ref(), t.byte_range.clone(), t.char_range.clone()))
        .collect();
    assert_eq!(summary, [("数据", 0..8, 0..3), ("x", 8..11, 3..5)]);
    assert!(matches!(tokens[1].text, std::borrow::Cow::Owned(_)));
}

#[test]
fn cjk_thai_letters_pair_but_thai_digits_stay_whole() {
    // Thai vowel signs and tone marks (Mn) already split words in unicode61.
    assert_eq!(terms("ภาษาไทย"), ["ภาษาไทย"]);
    assert_eq!(cjk_terms("ภาษาไทย"), ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย"]);
    assert_eq!(cjk_terms("ไทย๑๒๓"), ["ไท", "ทย", "๑๒๓"]);
}

#[test]
fn cjk_japanese_mixes_scripts_in_one_run() {
    assert_eq!(cjk_terms("東京タワー"), ["東京", "京タ", "タワ", "ワー"]);
}

#[test]
fn cjk_mode_is_unicode61_without_cjk_letters() {
    let text = "Café, naïve İstanbul x² it🥰 Ǆ ς ẞ Tiếng Việt ø 😀 v1.2.3 ש\u{05B8}ל";
    assert_eq!(
        tokenize(text, TokenizerMode::Cjk),
        tokenize(text, TokenizerMode::Unicode61)
    );
}

#[test]
fn cjk_long_segments_are_cut_too() {
    let text = "数据".to_owned() + &"Z".repeat(MAX_TERM_BYTES + 1);
    let tokens = tokenize(&text, TokenizerMode::Cjk);
    assert_eq!(tokens.len(), 2);
    assert_eq!(tokens[1].text, "z".repeat(MAX_TERM_BYTES));
}

/// Differential tests against SQLite FTS5 itself (native only: rusqlite is not in the wasm
/// dependency graph).
#[cfg(not(target_arch = "wasm32"))]
mod sqlite {
    use super::{MAX_TERM_BYTES, TokenizerMode, check_invariants, phrase_matches, tokenize};
    use proptest::prelude::*;
    use proptest::strategy::Union;
    use proptest::test_runner::{Config, TestRunner};
    use rusqlite::Connection;

    /// An in-memory FTS5 table with DSH's tokenizer and its `instance` vocabulary.
    struct Fts5 {
        conn: Connection,
    }

    impl Fts5 {
        fn new() -> Self {
            let conn = Connection::open_in_memory().expect("in-memory SQLite");
            conn.execute_batch(
                "CREATE VIRTUAL TABLE t USING fts5(x, tokenize='unicode61');
                 CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
            )
            .expect("FTS5 is compiled in");
            Fts5 { conn }
        }

        /// SQLite's (term bytes, position) for each text.
        fn tokens(&self, texts: &[&str]) -> Vec<Vec<(Vec<u8>, i64)>> {
            self.conn.execute("DELETE FROM t", []).expect("delete");
            let mut insert = self
                .conn
                .prepare("INSERT INTO t(rowid, x) VALUES (?1, ?2)")
                .expect("prepare");
            for (index, text) in texts.iter().enumerate() {
                insert
                    .execute(rusqlite::params![index as i64 + 1, text])
                    .expect("insert");
            }
            let mut out = vec![Vec::new(); texts.len()];
            let mut select = self
                .conn
                .prepare("SELECT doc, \"offset\", CAST(term AS BLOB) FROM v ORDER BY doc, \"offset\"")
                .expect("prepare");
            let rows = select
                .query_map([], |row| {
                    Ok((row.get::<_, i64>(0)?, row.get::<_, i64>(1)?, row.get::<_, Vec<u8>>(2)?))
                })
                .expect("query");
            for row in rows {
                let (doc, offset, term) = row.expect("row");
                out[(doc - 1) as usize].push((term, offset));
            }
            out
        }

        /// `highlight()` of the single-term phrase `term` in row `rowid`, with \u{1}/\u{2} marks.
        fn highlight(&self, rowid: i64, term: &str) -> Option<String> {
            let mut select = self
                .conn
                .prepare("SELECT highlight(t, 0, char(1), char(2)) FROM t WHERE t MATCH ?1 AND rowid = ?2")
                .expect("prepare");
            let query = format!("\"{}\"", term.replace('"', "\"\""));
            select
                .query_row(rusqlite::params![query, rowid], |row| row.get::<_, String>(0))
                .ok()
        }
    }

    /// Our `Unicode61` terms in SQLite's byte form (undoing the cut-term encoding).
    fn ours(text: &str) -> Vec<(Vec<u8>, i64)> {
        tokenize(text, TokenizerMode::Unicode61)
            .into_iter()
            .map(|t| {
                let mut bytes = Vec::new();
                match t.text.split_once('\u{FFFD}') {
                    Some((whole, partial)) => {
                        bytes.extend_from_slice(whole.as_bytes());
                        bytes.extend(partial.chars().map(|c| (u32::from(c) - 0x100) as u8));
                    }
                    None => bytes.extend_from_slice(t.text.as_bytes()),
                }
                (bytes, t.position as i64)
            })
            .collect()
    }

    fn show(tokens: &[(Vec<u8>, i64)]) -> Vec<(String, i64)> {
        tokens
            .iter()
            .map(|(t, p)| (String::from_utf8_lossy(t).into_owned(), *p))
            .collect()
    }

    /// Compares a batch of texts with SQLite, failing with the first difference.
    fn compare(fts: &Fts5, texts: &[&str]) -> Result<(), String> {
        let theirs = fts.tokens(texts);
        for (text, theirs) in texts.iter().zip(theirs) {
            let ours = ours(text);
            if ours != theirs {
                // Report the first difference with a little context, not whole batches.
                let at = ours.iter().zip(&theirs).take_while(|(a, b)| a == b).count();
                let window = |t: &[(Vec<u8>, i64)]| show(&t[at.saturating_sub(2)..(at + 3).min(t.len())]);
                let shown: String = if text.chars().count() > 80 {
                    "(long text)".into()
                } else {
                    format!("{text:?}")
                };
                return Err(format!(
                    "{shown}: first difference at token {at}\n ours   {:?}\n sqlite {:?}",
                    window(&ours),
                    window(&theirs)
                ));
            }
        }
        Ok(())
    }

    /// Checks our byte ranges through SQLite's `highlight()` (which marks SQLite's own token
    /// offsets) for every distinct term of a text stored as row 1.
    fn compare_ranges(fts: &Fts5, text: &str) -> Result<(), String> {
        if text.contains('\0') || text.contains('\u{1}') || text.contains('\u{2}') {
            return Ok(());
        }
        let tokens = tokenize(text, TokenizerMode::Unicode61);
        let mut seen = std::collections::HashSet::new();
        for token in &tokens {
            if !seen.insert(token.text.clone()) {
                continue;
            }
            if super::terms(&token.text) != [token.text.to_string()] {
                continue; // the term would not survive being a query (never seen so far)
            }
            let mut expected = String::new();
            let mut copied = 0;
            for other in tokens.iter().filter(|o| o.text == token.text) {
                expected.push_str(&text[copied..other.byte_range.start]);
                expected.push('\u{1}');
                expected.push_str(&text[other.byte_range.clone()]);
                expected.push('\u{2}');
                copied = other.byte_range.end;
            }
            expected.push_str(&text[copied..]);
            let got = fts.highlight(1, &token.text);
            if got.as_deref() != Some(expected.as_str()) {
                return Err(format!(
                    "{text:?}: term {:?}\n ours   {expected:?}\n sqlite {got:?}",
                    token.text
                ));
            }
        }
        Ok(())
    }

    /// Tricky strings found while building the tokenizer, plus every documented example.
    const REGRESSIONS: &[&str] = &[
        "foo_bar",
        "don't",
        "don\u{2019}t",
        "v1.2.3",
        "3.14",
        "x²",
        "½ Ⅻ ⅻ",
        "it🥰",
        "🫠 it😀works",
        "a\u{0301}b",
        "\u{0301}a",
        "a\u{0305}b",
        "a\u{0345}b",
        "ש\u{05B8}\u{05C1}ל\u{05B9}ום",
        "हिन्दी",
        "عَرَبِيّ",
        "我喜欢数据库",
        "我喜欢，数据库。",
        "日本語のテキスト",
        "東京タワー",
        "한국어 텍스트",
        "ภาษาไทย",
        "Ǆ ǅ ǆ Ǳ ǲ",
        "Σ ς σ ΟΔΟΣ",
        "µ ſ ϐ ϑ ϕ ϖ ϰ ϱ ϵ ẛ",
        "\u{212A} \u{2126} \u{212B}",
        "ẞ ß Straße",
        "ı İ İstanbul",
        "Ｆｕｌｌ ｆｕｌｌ",
        "ﬁ ﬀ 𝐀 𝟎",
        "Ꭰ ꭰ ᏸ",
        "𐐀 𐐨",
        "café CAFÉ Café naïve Ångström ñ ç ą ÿ Ÿ ǰ",
        "Tiếng Việt ế ộ ǻ ǘ ẵ",
        "ø đ ł æ œ ð þ Ø Đ Ł Æ Œ Ð Þ",
        "ά Ά ё Ё ί ΐ ΰ",
        "\u{00AD}a\u{00AD}b\u{200B}c\u{2060}d",
        "a\u{FEFF}b\u{0085}c\u{00A0}d\u{FFFD}e",
        "a\u{FFFE}b\u{FFFF}c\u{FDD0}d\u{1FFFE}e",
        "a\u{E000}b\u{F0000}\u{10FFFD}",
        "a\u{0378}b \u{08A1} \u{0870} \u{2FE0}",
        "\u{E0001}a\u{E0020}b\u{E0100}c",
        "ǅungla ǈ ǋ",
        "Ⓐⓑ ⅰⅱ Ⅰ",
        "\u{1E9E}\u{1E9B}\u{1E96}",
        "ŉ ǰ ΐ",
        "Ａ\u{0301}",
        "e\u{0301}\u{0301}\u{0301}x",
        "\u{0300}\u{0301}",
        "\t\n\r\u{0b}\u{0c}",
        "\u{2028}\u{2029}\u{3000}\u{1680}\u{180E}",
        "ⅯⅯⅩⅩⅣ",
        "٠١٢ ۴ ߀ ०१",
        "ꙮ Ꙁ ꙁ Ɐ ɐ Ɒ ɒ",
        "Ɥ Ɦ Ɜ Ɡ Ɬ Ʞ Ʇ Ʝ",
        "Ꞛ ꞛ Ꞵ ꞵ",
        "ⴀ Ⴀ Ⴧ ⴧ Ꟶ",
        "ᲀ ᲈ Ა",
        "𞤀 𞤢",
        "𑢠 𑣀",
        "𖹀",
        "\u{1D400}\u{1D7FF}",
        "\u{20000}\u{2A6D6}\u{2A6D7}\u{2B740}\u{2B820}\u{30000}",
        "ꬰ ꭜ ꭠ ꬷ",
        "Ǎ ǎ Ǐ ǐ Ǒ ǒ Ǔ ǔ",
        "Ȁ Ȃ Ȅ Ȇ Ȉ Ȋ Ȍ Ȏ Ȑ Ȓ Ȕ Ȗ Ș Ț",
        "Ḁ ḁ Ẁ ẁ Ỳ ỳ Ỹ ỹ ỿ",
        "ƀ ƃ Ɓ ɓ ƒ Ƒ",
    ];

    #[test]
    fn regression_strings_match_sqlite() {
        let fts = Fts5::new();
        compare(&fts, REGRESSIONS).unwrap_or_else(|e| panic!("{e}"));
        for text in REGRESSIONS {
            fts.tokens(&[text]);
            compare_ranges(&fts, text).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn long_terms_are_cut_like_sqlite() {
        let fts = Fts5::new();
        let texts = [
            "A".repeat(MAX_TERM_BYTES + 5),
            "数".repeat(11_000),
            "é".repeat(20_000),
            "x".to_owned() + &"数".repeat(11_000),
            "xx".to_owned() + &"数".repeat(11_000) + " tail",
            "𐐀".repeat(9_000),
        ];
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        compare(&fts, &texts).unwrap_or_else(|e| panic!("{e}"));
    }

    /// Every code point between two letters (`zcz`) and on its own (` c `), in batches.
    fn sweep(planes: std::ops::Range<u32>) {
        let fts = Fts5::new();
        let chars: Vec<char> = (planes.start << 16..planes.end << 16)
            .filter_map(char::from_u32)
            .collect();
        for chunk in chars.chunks(16_384) {
            let docs: Vec<String> = chunk
                .chunks(512)
                .map(|cs| cs.iter().map(|c| format!("z{c}z {c} ")).collect::<String>())
                .collect();
            let docs: Vec<&str> = docs.iter().map(String::as_str).collect();
            compare(&fts, &docs).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    #[test]
    fn every_code_point_of_planes_0_and_1_matches_sqlite() {
        sweep(0..2);
    }

    #[test]
    #[ignore = "slow in debug builds: all 17 planes (~1.1 M code points)"]
    fn every_code_point_matches_sqlite() {
        sweep(0..17);
    }

    /// A run of 1–6 characters of one class; the classes lean towards what DSH logs contain
    /// and towards the edges of the tables.
    fn chunk() -> impl Strategy<Value = String> {
        fn range(lo: u32, hi: u32) -> BoxedStrategy<char> {
            (lo..=hi).prop_map(|c| char::from_u32(c).unwrap_or('\u{FFFD}')).boxed()
        }
        fn pick(chars: &'static str) -> BoxedStrategy<char> {
            proptest::sample::select(chars.chars().collect::<Vec<_>>()).boxed()
        }
        let classes: Vec<(u32, BoxedStrategy<char>)> = vec![
            (20, range(u32::from('a'), u32::from('z'))),
            (8, range(u32::from('A'), u32::from('Z'))),
            (6, range(u32::from('0'), u32::from('9'))),
            (12, pick(" \t\n.,;:!?_-'\"/\\@#$%^&*()[]{}<>=+|~`")),
            (2, pick("\0\u{1}\u{7F}")),
            (8, range(0xA0, 0xFF)),
            (8, range(0x100, 0x24F)),
            (3, range(0x1E00, 0x1EFF)),
            (8, range(0x300, 0x36F)),
            (4, range(0x370, 0x3FF)),
            (2, range(0x1F00, 0x1FFF)),
            (4, range(0x400, 0x52F)),
            (2, range(0x530, 0x8FF)),
            (2, range(0x900, 0xDFF)),
            (6, range(0x4E00, 0x9FFF)),
            (3, range(0x3000, 0x30FF)),
            (3, range(0xAC00, 0xD7A3)),
            (3, range(0x0E00, 0x0E7F)),
            (2, range(0x1100, 0x11FF)),
            (2, range(0xFF00, 0xFFEF)),
            (2, range(0xFFF0, 0xFFFF)),
            (3, range(0x1F300, 0x1F64F)),
            (3, range(0x1F900, 0x1FAFF)),
            (3, range(0x10000, 0x1FFFF)),
            (2, range(0x20000, 0x3134F)),
            (2, range(0xE0000, 0xE01EF)),
            (2, range(0xE000, 0xF8FF)),
            (1, range(0xF0000, 0x10FFFF)),
            (2, range(0x2000, 0x2BFF)),
            (2, range(0xA000, 0xABFF)),
            (2, range(0, 0x10FFFF)),
            (
                6,
                pick("\u{FEFF}\u{0085}\u{00AD}\u{200B}\u{200C}\u{200D}\u{2060}\u{00A0}\u{FFFD}\u{2019}\u{3000}"),
            ),
            (4, pick("İıßẞſµςΣǄǅǆKΩÅϐϑẛﬁ𐐀Ꭰꭰ\u{0130}\u{0345}")),
        ];
        Union::new_weighted(
            classes
                .into_iter()
                .map(|(w, s)| (w, prop::collection::vec(s, 1..6).prop_map(String::from_iter).boxed()))
                .collect(),
        )
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(chunk(), 0..10).prop_map(|chunks| chunks.concat())
    }

    #[test]
    fn random_texts_match_sqlite() {
        let fts = Fts5::new();
        let mut runner = TestRunner::new(Config {
            cases: 4000,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&text(), |text| {
                compare(&fts, &[&text]).map_err(TestCaseError::fail)?;
                compare_ranges(&fts, &text).map_err(TestCaseError::fail)?;
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn random_texts_keep_invariants_and_cjk_recall() {
        let mut runner = TestRunner::new(Config {
            cases: 3000,
            failure_persistence: None,
            ..Config::default()
        });
        runner
            .run(&(text(), any::<prop::sample::Index>(), 1usize..4), |(text, at, len)| {
                let plain = tokenize(&text, TokenizerMode::Unicode61);
                let cjk = tokenize(&text, TokenizerMode::Cjk);
                check_invariants(&text, &plain);
                check_invariants(&text, &cjk);
                let has_cjk = text
                    .chars()
                    .any(|c| super::super::is_token_char(u32::from(c)) && super::super::is_cjk(u32::from(c)));
                if !has_cjk {
                    prop_assert_eq!(&cjk, &plain);
                }
                // Any phrase of the Unicode61 stream, as query text, is found in Cjk mode too.
                if !plain.is_empty() {
                    let first = at.index(plain.len());
                    let last = (first + len - 1).min(plain.len() - 1);
                    let query = &text[plain[first].byte_range.start..plain[last].byte_range.end];
                    prop_assert!(phrase_matches(&text, query, TokenizerMode::Unicode61));
                    prop_assert!(phrase_matches(&text, query, TokenizerMode::Cjk), "query {:?}", query);
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Throughput on ~10 MB of mixed text (`cargo test --release --lib throughput -- --ignored
/// --nocapture`).
#[test]
#[ignore = "benchmark: run in release with --nocapture"]
fn throughput() {
    let sample = "The parser crashes when `foo_bar` is None; see src/lib.rs:42 (v1.2.3). Café naïve İstanbul \
                  Straße — “quoted” text, numbers 3.14 and 1e-9, URL https://example.com/a?b=c&d=e#f.\n\
                  我喜欢数据库，日本語のテキストです。한국어 텍스트 ภาษาไทย Ελληνικά Кириллица 🥰😀\n";
    let mut text = String::new();
    while text.len() < 10_000_000 {
        text.push_str(sample);
    }
    let ascii: String = sample.chars().filter(char::is_ascii).cycle().take(10_000_000).collect();
    for (name, text) in [("mixed", text.as_str()), ("ascii", ascii.as_str())] {
        for mode in [TokenizerMode::Unicode61, TokenizerMode::Cjk] {
            let start = std::time::Instant::now();
            let mut count = 0usize;
            let mut bytes = 0usize;
            let mut stream = Tokens::new(text, mode);
            while let Some(token) = stream.next_ref() {
                count += 1;
                bytes += token.text.len();
            }
            let streamed = start.elapsed();
            let start = std::time::Instant::now();
            let collected = tokenize(text, mode).len();
            let owned = start.elapsed();
            assert_eq!(count, collected);
            let mb = text.len() as f64 / 1e6;
            println!(
                "{name:5} {mode:?}: {mb:.1} MB, {count} tokens ({bytes} term bytes): next_ref {:.0} MB/s, tokenize() {:.0} MB/s",
                mb / streamed.as_secs_f64(),
                mb / owned.as_secs_f64()
            );
        }
    }
}

/// The eight-places-at-a-time probe answers as looking at every place does, wherever what
/// it looks for lies against the words: the term but for case (with bytes that only bit 5
/// tells apart), a lead byte of what folds into ASCII, the pair.
#[test]
fn a_probe_finds_what_it_looks_for_wherever_it_lies() {
    use super::TermProbe;
    let pieces: [&str; 14] = [
        "a", "A", "b", "B", "q", "Q", "z", "1", "\u{11}", " ", "@", "\\", "u", "数",
    ];
    let extra = ["é", "\u{301}", "\u{212A}", "\u{1E00}", "\u{2122}", "\u{1F00}"];
    let terms = ["a", "1", "ab", "qb1", "zaq", "bbbbbbbbbb", "a1b2"];
    let mut next = crate::testing::xorshift(0xCA5E);
    let mut held = [0; 2];
    for round in 0..40_000 {
        let with_extra = round % 4 == 0;
        let text: String = (0..next(40))
            .map(|_| match next(20) {
                0 if with_extra => extra[next(extra.len())],
                n => pieces[n % pieces.len()],
            })
            .collect();
        let term = terms[next(terms.len())];
        let bytes = text.as_bytes();
        // No ASCII letter or digit next to the term, but for an escape's letter before it.
        let apart = |at: usize| {
            let after = bytes.get(at + term.len()).is_some_and(u8::is_ascii_alphanumeric);
            let before = at > 0 && bytes[at - 1].is_ascii_alphanumeric() && (at == 1 || bytes[at - 2] != b'\\');
            !after && !before
        };
        let has_term = (0..bytes.len())
            .filter(|&at| bytes[at..].len() >= term.len())
            .any(|at| bytes[at..at + term.len()].eq_ignore_ascii_case(term.as_bytes()) && apart(at));
        let folds = may_fold_into_ascii(&text);
        let has_pair = bytes.windows(2).any(|w| w == b"\\u");
        let probe = TermProbe::new(term).expect("an ASCII term");
        assert_eq!(probe.may_hold(&text), has_term || folds, "{term:?} in {text:?}");
        let probe = probe.for_printed_events();
        assert_eq!(
            probe.may_hold(&text),
            has_term || folds || has_pair,
            "{term:?} or \\u in {text:?}"
        );
        held[usize::from(has_term)] += 1;
    }
    assert!(held[1] > 2_000, "{held:?}");
}

/// Where the probe counts a term's tokens, the count is the tokenizer's in both modes; it
/// counts in every ASCII text, and declines only where a character that is not ASCII is next to
/// the term or folding may make ASCII. Texts of all lengths, so the term lies across every
/// place of the sixty-four-, sixteen- and eight-place looks.
#[test]
fn a_probe_counts_the_tokens_that_are_its_term_as_the_tokenizer_does() {
    use super::TermProbe;
    let pieces = [
        "a", "A", "b", "B", "1", "q", " ", "-", "_", "\n", "ab", "AB", "a1", "ba", "é", "\u{301}", "数", "ж", "—",
    ];
    let terms = ["a", "ab", "1", "a1", "ba", "aba", "b"];
    let mut next = crate::testing::xorshift(0xC0_u64);
    let mut counted = [0; 2];
    for round in 0..20_000 {
        // Mostly ASCII pieces; now and then anything.
        let choices = if round % 3 == 0 { pieces.len() } else { 14 };
        let text: String = (0..next(90)).map(|_| pieces[next(choices)]).collect();
        let term = terms[next(terms.len())];
        let probe = TermProbe::new(term).expect("an ASCII term");
        let count = probe.count_tokens(&text);
        if text.is_ascii() {
            assert!(count.is_some(), "{term:?} counted in ASCII {text:?}");
        }
        let Some(count) = count else { continue };
        for mode in TokenizerMode::ALL {
            let tokens = tokenize(&text, mode);
            let expected = tokens.iter().filter(|t| t.text == term).count();
            assert_eq!(count as usize, expected, "{term:?} in {text:?} ({mode:?})");
        }
        counted[usize::from(count > 0)] += 1;
    }
    assert!(counted[0] > 2_000 && counted[1] > 2_000, "{counted:?}");
    let probe = TermProbe::new("ab").expect("an ASCII term");
    assert_eq!(
        probe.count_tokens("ab数"),
        None,
        "a letter that is not ASCII may join the token"
    );
    assert_eq!(probe.count_tokens("Ab ab-AB"), Some(3));
    assert_eq!(probe.count_tokens("abab ab1 ab"), Some(1));
    assert_eq!(probe.count_tokens("é ab"), None, "é folds into ASCII");
}

/// What folding may turn into ASCII, told byte by byte: the reference the probe is held to.
fn may_fold_into_ascii(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| match b {
        0xC3..=0xCC => true,
        0xE1 => matches!(bytes.get(i + 1), Some(0xB8..=0xBB)),
        0xE2 => bytes.get(i + 1) == Some(&0x84),
        _ => false,
    })
}

#[test]
fn may_contain_token_is_false_only_where_no_token_is_the_term() {
    use super::may_contain_token;
    assert!(!may_contain_token("The dog ran", "cat"));
    assert!(
        may_contain_token("a CAT.", "cat") && may_contain_token("\\nCat", "cat"),
        "an escape's letter"
    );
    assert!(
        !may_contain_token("CONCATENATE", "cat"),
        "a substring within a longer run is no token"
    );
    assert!(may_contain_token("Café", "cafe") && may_contain_token("ca\u{301}fe", "cafe"));
    assert!(may_contain_token("\u{212A}ey", "key"), "the Kelvin sign folds to k");
    assert!(!may_contain_token("数据 ж x", "xy"));
    assert!(may_contain_token("anything", "数据"), "only ASCII terms are looked for");
    // Texts mixing ASCII, letters that fold into ASCII or vanish, and letters that do not.
    let pieces = [
        "a", "B", "x", "Y", "k", "1", "0", " ", "_", "-", "é", "É", "\u{301}", "\u{212A}", "ß", "ж", "Ж", "数", "据",
        "İ", "ﬁ", "Ａ", "\u{FFFE}",
    ];
    let terms = ["ab", "xa", "k", "e", "1a", "by", "ax1", "kk", "ss", "i", "a"];
    let mut next = crate::testing::xorshift(0x5EED_u64);
    let mut skipped = 0;
    for _ in 0..20_000 {
        let text: String = (0..next(12)).map(|_| pieces[next(pieces.len())]).collect();
        let term = terms[next(terms.len())];
        if may_contain_token(&text, term) {
            continue;
        }
        skipped += 1;
        for mode in TokenizerMode::ALL {
            let tokens = tokenize(&text, mode);
            assert!(
                tokens.iter().all(|t| t.text != term),
                "{term:?} is a token of {text:?} ({mode:?})"
            );
        }
    }
    assert!(skipped > 5_000, "the filter skips texts: {skipped}");
}

/// A text holding a term as a token, printed as `JSON.stringify` prints it (escapes before the
/// term, quotes and backslashes about it), is never one the probe for printed events rules out,
/// and holds no more such tokens than the probe's bound.
#[test]
fn a_printed_text_holding_the_term_is_never_ruled_out() {
    use super::printed_event_may_contain_token;
    let pieces = [
        "a", "B", "n", "t", "u", "1", " ", "\n", "\t", "\"", "\\", "\u{1}", "\u{7f}", "é", "数", "ab", "nab",
    ];
    let terms = ["ab", "b", "na", "t1", "a"];
    let mut next = crate::testing::xorshift(0x9E1);
    let mut ruled_out = 0;
    for _ in 0..20_000 {
        let text: String = (0..next(14)).map(|_| pieces[next(pieces.len())]).collect();
        let term = terms[next(terms.len())];
        let printed = crate::json::Json::str(&text).to_string();
        let probe = super::TermProbe::new(term).expect("an ASCII term").for_printed_events();
        let tokens = |mode| tokenize(&text, mode).iter().filter(|t| t.text == term).count();
        let most = TokenizerMode::ALL.map(tokens).into_iter().max().unwrap_or(0);
        if let Some(bound) = probe.token_bound(&printed) {
            assert!(
                bound as usize >= most,
                "{term:?}: {most} tokens in {text:?}, bound {bound}"
            );
        }
        if !printed_event_may_contain_token(&printed, term) {
            ruled_out += 1;
            assert_eq!(most, 0, "{term:?} is a token of {text:?}, printed {printed}");
        }
    }
    assert!(ruled_out > 5_000, "the probe rules texts out: {ruled_out}");
}

#[test]
fn every_character_folded_into_ascii_or_deleted_is_flagged() {
    // A term none of the texts holds: only what folds may make them hold it.
    let probe = super::TermProbe::new("zq").expect("an ASCII term");
    let mut folding = 0;
    for c in (0x80..=0x10FFFFu32).filter_map(char::from_u32) {
        if super::fold(c as u32) < 0x80 {
            folding += 1;
            assert!(probe.may_hold(&format!("ab{c}cd")), "U+{:04X}", c as u32);
        }
    }
    assert!(folding > 300, "{folding} characters fold into ASCII or vanish");
    assert!(!probe.may_hold("数据 ж — “quoted” ’ → 😀"));
}
