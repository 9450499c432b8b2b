//! `heads` and `kv_heads` (format 2): how many query heads a lesson has and how many key/value
//! groups they share, and the rules that tie them to `w_o` (required with several heads) and to
//! the format.

use std::ops::Range;

use toml::de::DeValue;

use super::report::plural;
use super::values::{integer_value, type_name};
use super::{Entries, Reader};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::{MAX_HEAD_NUMBERS, MAX_HEADS, has_circuits, head_numbers};
use crate::lesson::{InputMatrix, Inputs};
use crate::pipeline::Heads;

/// The keys of format 2 that heads bring.
const HEADS_KEYS: [&str; 3] = ["heads", "kv_heads", "w_o"];

impl Reader<'_> {
    /// H and G: one head by default, as many groups as heads by default. `None` (said) when a
    /// count is not a positive integer within the limit, or G does not divide H, or the keys
    /// are in a format 1 file.
    pub(super) fn heads(
        &mut self,
        entries: &Entries<'_, '_>,
        format: Option<u32>,
    ) -> Option<Heads> {
        let mut ok = true;
        for key in HEADS_KEYS {
            if let Some((span, _)) = entries.get(key) {
                ok &= self.of_its_format(key, span, format);
            }
        }
        let query = match entries.get("heads") {
            Some((_, value)) => self.head_count(value, "heads"),
            None => Some(1),
        };
        let kv = match entries.get("kv_heads") {
            Some((_, value)) => self
                .head_count(value, "kv_heads")
                .map(|kv| (kv, Some(value.span()))),
            None => query.map(|query| (query, None)),
        };
        let (query, (kv, kv_span)) = (query?, kv?);
        if let Some(span) = kv_span
            && !query.is_multiple_of(kv)
        {
            let heads_said = if entries.get("heads").is_some() {
                format!("heads = {query}")
            } else {
                "heads = 1 (the default)".to_string()
            };
            let help = if query == 1 {
                format!(
                    "each K/V group serves H/G query heads: set heads to a multiple of {kv} (heads = {}), or remove kv_heads",
                    2 * kv
                )
            } else {
                format!(
                    "each K/V group serves H/G query heads: use a kv_heads that divides {query} ({}), or set heads to a multiple of {kv}",
                    divisors(query)
                )
            };
            self.error(
                Diagnostic::error(
                    span,
                    format!("kv_heads = {kv} does not divide {heads_said}"),
                )
                .label(format!(
                    "{} cannot share {} evenly",
                    plural(query, "head"),
                    plural(kv, "group")
                ))
                .help(help),
            );
            return None;
        }
        ok.then_some(Heads { query, kv })
    }

    /// H as written, when it is a count of heads, even when `kv_heads` is wrong: what needs
    /// only H (RoPE's d_k, one head's share of W_q) is then told along with it. Says nothing:
    /// `heads` has said what is wrong.
    pub(super) fn query_heads_written(entries: &Entries<'_, '_>) -> Option<usize> {
        let Some((_, value)) = entries.get("heads") else {
            return Some(1);
        };
        let DeValue::Integer(integer) = value.get_ref() else {
            return None;
        };
        integer_value(integer)
            .ok()
            .filter(|count| (1..=MAX_HEADS as i64).contains(count))
            .map(|count| count as usize)
    }

    /// A count of heads or groups: a positive integer, at most `MAX_HEADS`.
    fn head_count(&mut self, value: &super::Value<'_>, key: &str) -> Option<usize> {
        let DeValue::Integer(integer) = value.get_ref() else {
            let found = type_name(value.get_ref());
            self.count_error(value.span(), key, &format!("found {found}"));
            return None;
        };
        match integer_value(integer) {
            Ok(count) if (1..=MAX_HEADS as i64).contains(&count) => Some(count as usize),
            Ok(count) => {
                self.count_error(value.span(), key, &format!("found {count}"));
                None
            }
            Err(_) => {
                self.count_error(value.span(), key, "found an integer too large");
                None
            }
        }
    }

    fn count_error(&mut self, span: Range<usize>, key: &str, found: &str) {
        let example = if key == "heads" {
            "heads = 4"
        } else {
            "kv_heads = 2 (with heads = 4)"
        };
        self.error(
            Diagnostic::error(
                span,
                format!("`{key}` must be a whole number from 1 to {MAX_HEADS}, {found}"),
            )
            .label("not a count of heads")
            .help(format!("for example {example}")),
        );
    }

    /// With several heads, W_o is what brings their outputs back to one: a lesson without it is
    /// told so at its `heads`.
    /// `d_v` is one head's d_v, when the inputs could be read.
    pub(super) fn w_o_needed(
        &mut self,
        entries: &Entries<'_, '_>,
        heads: Heads,
        d_v: Option<usize>,
    ) -> bool {
        if heads.query == 1 || entries.get("w_o").is_some() {
            return true;
        }
        let Some((_, value)) = entries.get("heads") else {
            return true;
        };
        self.error(
            Diagnostic::error(
                value.span(),
                format!("{} heads need `w_o` to bring their outputs together", heads.query),
            )
            .label("several heads")
            .help(match d_v {
                Some(d_v) => format!(
                    "add `w_o` with H·d_v = {} × {d_v} = {} rows (the heads' outputs side by side) and d_out columns, e.g. w_o = {{ random = \"normal\", seed = 1, shape = [{}, {d_v}] }}",
                    heads.query,
                    heads.query * d_v,
                    heads.query * d_v
                ),
                None => format!(
                    "add `w_o` with H·d_v = {} × d_v rows (the heads' outputs side by side) and d_out columns",
                    heads.query
                ),
            }),
        );
        false
    }
}

impl Reader<'_> {
    /// Whether the matrices of all heads fit `MAX_HEAD_NUMBERS`; said at `heads` when not.
    pub(super) fn heads_fit(
        &mut self,
        entries: &Entries<'_, '_>,
        heads: Heads,
        (seq_len, keys): (usize, usize),
        inputs: &Inputs,
        w_o: Option<&InputMatrix>,
    ) -> bool {
        let circuits = match (inputs.d_model(), w_o) {
            (Some(d_model), Some(w_o)) if has_circuits(Some(d_model), true) => {
                Some((d_model, w_o.values.ncols()))
            }
            _ => None,
        };
        let numbers = head_numbers(heads.query, seq_len, keys, circuits);
        if numbers <= MAX_HEAD_NUMBERS {
            return true;
        }
        let Some((_, value)) = entries.get("heads") else {
            return true;
        };
        let sizes = match circuits {
            Some((d_model, d_out)) => format!(
                "{seq_len} × {keys} scores and weights and {d_model} × {d_model} and {d_model} × {d_out} circuits"
            ),
            None => format!("{seq_len} × {keys} scores and weights"),
        };
        self.error(
            Diagnostic::error(
                value.span(),
                format!(
                    "{} heads with {sizes} each need {:.1} million numbers; the limit for all heads together is {:.1} million",
                    heads.query,
                    numbers as f64 / 1e6,
                    MAX_HEAD_NUMBERS as f64 / 1e6
                ),
            )
            .label("too many heads for this size")
            .help("use fewer heads, fewer tokens or a smaller d_model: several heads are best shown on a few tokens"),
        );
        false
    }
}

/// "1, 2, 4": the divisors of `n`, the group counts its heads can share.
fn divisors(n: usize) -> String {
    let list: Vec<String> = (1..=n)
        .filter(|d| n.is_multiple_of(*d))
        .map(|d| d.to_string())
        .collect();
    list.join(", ")
}

#[cfg(test)]
mod tests {
    use crate::attention::Attention;
    use crate::lesson::parse::parse;
    use crate::lesson::{Lesson, MatrixName};
    use crate::pipeline::Heads;

    /// The two-heads fixture: 3 tokens, d_model 4, H = 2 sharing G = 1, d_k = d_v = 2,
    /// W_o 4 × 3.
    const TWO_HEADS: &str = include_str!("../../../../tests/fixtures/two-heads.toml");

    fn lesson(text: &str) -> Lesson {
        let parsed = parse(text);
        let errors: Vec<&str> = parsed.errors().map(|d| d.message.as_str()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        parsed.lesson.expect("a lesson")
    }

    fn first_error(text: &str) -> String {
        parse(text)
            .errors()
            .next()
            .map(|d| format!("{} | {}", d.message, d.help.clone().unwrap_or_default()))
            .unwrap_or_default()
    }

    const HEADER: &str = "format = 2\ntitle = \"t\"\ntokens = [\"a\", \"b\"]\n";

    #[test]
    fn a_lesson_without_heads_has_one_head_and_no_w_o() {
        let lesson = lesson(&format!(
            "{HEADER}embeddings = [[1, 0], [0, 1]]\nw_q = [[1, 0], [0, 1]]\n\
             w_k = [[1, 0], [0, 1]]\nw_v = [[1, 2], [3, 4]]\n"
        ));
        assert_eq!(lesson.heads, Heads::ONE);
        assert!(lesson.w_o.is_none());
        assert!(!lesson.shape().output_weights);
    }

    #[test]
    fn heads_kv_heads_and_w_o_are_read_into_the_lesson_and_its_shape() {
        let lesson = lesson(TWO_HEADS);
        assert_eq!(lesson.heads, Heads { query: 2, kv: 1 });
        assert_eq!(
            lesson.w_o.as_ref().map(|w_o| w_o.values.shape()),
            Some((4, 3))
        );
        let shape = lesson.shape();
        assert_eq!(shape.heads, Heads { query: 2, kv: 1 });
        assert!(shape.output_weights);
        // One head's widths: w_q's 4 columns are 2 heads of d_k 2, w_v's 2 are 1 group of 2.
        assert_eq!((lesson.d_k(), lesson.d_v(), lesson.d_out()), (2, 2, 3));
    }

    #[test]
    fn kv_heads_defaults_to_heads() {
        let lesson = lesson(&format!(
            "{HEADER}heads = 2\nq = [[1, 0, 1, 0], [0, 1, 0, 1]]\nk = [[1, 0, 1, 0], [0, 1, 0, 1]]\n\
             v = [[1, 2], [3, 4]]\nw_o = [[1], [1]]\n"
        ));
        assert_eq!(lesson.heads, Heads { query: 2, kv: 2 });
    }

    #[test]
    fn w_o_is_allowed_with_direct_q_k_v_and_one_head() {
        let lesson = lesson(&format!(
            "{HEADER}q = [[1, 0], [0, 1]]\nk = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\n\
             w_o = [[1, 0, 1], [0, 1, 1]]\n"
        ));
        assert_eq!(lesson.heads, Heads::ONE);
        assert_eq!(lesson.d_out(), 3);
        assert!(lesson.shape().output_weights);
    }

    #[test]
    fn w_k_is_compared_with_w_q_one_head_block_at_a_time() {
        // 4 heads of d_k 2 (8 columns) and 2 groups of d_k 2 (4 columns) agree...
        let agreeing = format!(
            "{HEADER}embeddings = [[1, 0], [0, 1]]\nheads = 4\nkv_heads = 2\n\
             w_q = {{ random = \"normal\", seed = 1, shape = [2, 8] }}\n\
             w_k = {{ random = \"normal\", seed = 2, shape = [2, 4] }}\n\
             w_v = {{ random = \"normal\", seed = 3, shape = [2, 2] }}\n\
             w_o = {{ random = \"normal\", seed = 4, shape = [4, 2] }}\n"
        );
        assert_eq!(lesson(&agreeing).heads, Heads { query: 4, kv: 2 });
        // ...and 2 groups of 3 do not.
        let disagreeing = agreeing.replace("seed = 2, shape = [2, 4]", "seed = 2, shape = [2, 6]");
        assert_eq!(
            first_error(&disagreeing),
            "each of `w_k`'s 2 K/V groups has 3 columns, but each of `w_q`'s 4 heads has 2 (d_k must agree) \
             | queries and keys have the same width d_k, so that q · k is defined: give `w_k` 2 × 2 = 4 columns"
        );
    }

    #[test]
    fn w_o_rows_are_every_heads_d_v() {
        let text = TWO_HEADS.replace("  [1, 1, 1],\n]", "]");
        assert_eq!(
            first_error(&text),
            "`w_o` has 3 rows, but the 2 heads' outputs side by side are 4 wide (2 × d_v 2) \
             | concat·w_o needs one row of `w_o` per column of concat: give it H·d_v = 2 × 2 = 4 rows"
        );
    }

    #[test]
    fn one_heads_w_o_has_d_v_rows() {
        let text = format!(
            "{HEADER}q = [[1, 0], [0, 1]]\nk = [[1, 0], [0, 1]]\nv = [[1, 2], [3, 4]]\n\
             w_o = [[1, 0, 1], [0, 1, 1], [1, 1, 1]]\n"
        );
        assert_eq!(
            first_error(&text),
            "`w_o` has 3 rows, but the head's output is 2 wide (d_v, as `v` gives it) \
             | concat·w_o needs one row of `w_o` per column of concat: give it H·d_v = 1 × 2 = 2 rows"
        );
    }

    #[test]
    fn rope_needs_an_even_d_k_in_each_head_not_in_all_of_them() {
        // 2 heads of d_k 2: even; the same 4 columns as 4 heads of 1 are not.
        let rope = TWO_HEADS.replace("w_o = [", "positions = \"rope\"\nw_o = [");
        assert_eq!(lesson(&rope).heads.query, 2);
        // 2 heads of d_k 3: 6 columns in all, even, but each head's 3 are not.
        let odd = format!(
            "{HEADER}embeddings = [[1, 0], [0, 1]]\nheads = 2\npositions = \"rope\"\n\
             w_q = {{ random = \"normal\", seed = 1, shape = [2, 6] }}\n\
             w_k = {{ random = \"normal\", seed = 2, shape = [2, 6] }}\n\
             w_v = {{ random = \"normal\", seed = 3, shape = [2, 4] }}\n\
             w_o = {{ random = \"normal\", seed = 4, shape = [4, 2] }}\n"
        );
        assert_eq!(
            first_error(&odd),
            "RoPE turns the columns of each head's queries and keys in pairs, and one head's d_k is 3, an odd number \
             | give w_q and w_k 2 or 4 columns for each head (or use other positions)"
        );
    }

    #[test]
    fn the_heads_limit_never_refuses_a_lesson_of_one_head() {
        use crate::lesson::limits::{MAX_DIMENSION, MAX_HEAD_NUMBERS, MAX_TOKENS, head_numbers};
        let largest = head_numbers(
            1,
            MAX_TOKENS,
            MAX_TOKENS,
            Some((MAX_DIMENSION, MAX_DIMENSION)),
        );
        assert!(largest <= MAX_HEAD_NUMBERS, "{largest}");
        // Two heads of the largest size fit too; eight do not.
        assert!(
            head_numbers(
                2,
                MAX_TOKENS,
                MAX_TOKENS,
                Some((MAX_DIMENSION, MAX_DIMENSION))
            ) <= MAX_HEAD_NUMBERS
        );
        assert!(
            head_numbers(
                8,
                MAX_TOKENS,
                MAX_TOKENS,
                Some((MAX_DIMENSION, MAX_DIMENSION))
            ) > MAX_HEAD_NUMBERS
        );
    }

    #[test]
    fn the_engine_gives_the_shapes_of_the_heads_contract() {
        let lesson = lesson(TWO_HEADS);
        let attention = Attention::compute(&lesson);
        let shape =
            |name: MatrixName, head: usize| attention.matrix_in(name, head).map(|m| m.shape());
        for head in 0..2 {
            assert_eq!(shape(MatrixName::Q, head), Some((3, 2)), "head {head}");
            assert_eq!(shape(MatrixName::K, head), Some((3, 2)), "head {head}");
            assert_eq!(shape(MatrixName::V, head), Some((3, 2)), "head {head}");
            assert_eq!(shape(MatrixName::Scores, head), Some((3, 3)), "head {head}");
            assert_eq!(
                shape(MatrixName::Weights, head),
                Some((3, 3)),
                "head {head}"
            );
            assert_eq!(shape(MatrixName::Output, head), Some((3, 2)), "head {head}");
            assert_eq!(shape(MatrixName::WQK, head), Some((4, 4)), "head {head}");
            assert_eq!(shape(MatrixName::WOV, head), Some((4, 3)), "head {head}");
        }
        assert_eq!(shape(MatrixName::WO, 0), Some((4, 3)));
        assert_eq!(shape(MatrixName::Concat, 0), Some((3, 4)));
        assert_eq!(shape(MatrixName::Projected, 0), Some((3, 3)));
        // Both query heads use the one group's keys.
        assert_eq!(
            attention.matrix_in(MatrixName::K, 0),
            attention.matrix_in(MatrixName::K, 1)
        );
        // Head 2's queries are X times w_q's columns 3 and 4.
        let crate::lesson::Inputs::Projected {
            embeddings, w_q, ..
        } = &lesson.inputs
        else {
            panic!("the fixture projects its embeddings");
        };
        let x = &*embeddings.values * w_q.values.columns(2, 2);
        assert_eq!(attention.matrix_in(MatrixName::Q, 1), Some(&x));
    }
}
