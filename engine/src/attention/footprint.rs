//! The most memory one lesson's engine can come to hold, worked out from the lesson's shape
//! alone: what a classroom server reserves for a student before opening a lesson for them.

use crate::lesson::Lesson;
use crate::pipeline::{Axis, MatrixName, Op, Plan};

/// Bytes of one number.
const NUMBER: u64 = std::mem::size_of::<f64>() as u64;

/// The bytes of every matrix `Attention` can hold for `lesson` once everything has been looked
/// at: the matrices computed when it opens, every head's circuits, every step of generation's
/// matrices at every token and the online softmax's state after every tile, the K/V caches,
/// and every head's block cut out of the lesson's weights. The lesson's own matrices are not
/// counted (they are shared with the lesson). A backward pass is counted whether the lesson has
/// one or not: a learner can add it (`d`), and so are tiles of one key, the smallest a learner
/// can make them (`b`). Never less than the engine holds (see the tests), and for a lesson
/// walked only on its first head, several times more.
pub fn most_bytes(lesson: &Lesson) -> u64 {
    let mut shape = lesson.shape();
    let forward = Plan::new(shape);
    shape.backward = true;
    let backward = Plan::new(shape);
    plan_bytes(lesson, &forward, 1).max(plan_bytes(lesson, &backward, 1))
}

/// The bytes of every matrix of `plan`, with `tile` keys a tile.
fn plan_bytes(lesson: &Lesson, plan: &Plan, tile: usize) -> u64 {
    plan.order()
        .iter()
        .map(|&name| matrix_bytes(lesson, plan, name, tile))
        .sum()
}

/// The most bytes the engine can hold of `name`, every head's (group's) and every token's
/// (tile's, `tile` keys a tile) together.
fn matrix_bytes(lesson: &Lesson, plan: &Plan, name: MatrixName, tile: usize) -> u64 {
    let heads = plan.shape.heads;
    let seq_len = lesson.seq_len() as u64;
    let extent = |axis: Axis| -> u64 {
        let count = match axis {
            Axis::Queries => lesson.seq_len(),
            Axis::Keys => lesson.key_len(),
            Axis::DModel => lesson.d_model().unwrap_or(0),
            Axis::DK => lesson.d_k(),
            Axis::DV => lesson.d_v(),
            Axis::HeadsDV => heads.query * lesson.d_v(),
            Axis::DOut => lesson.d_out(),
            Axis::NewToken | Axis::Single => 1,
        };
        count as u64
    };
    let entry = name.entry();
    let count = heads.count(name.per()) as u64;
    let (rows, cols) = (extent(entry.rows), extent(entry.cols));
    let origin = plan.origin(name);
    let one = match origin {
        // The cache holds a row per token.
        Some(Op::Append(_)) => seq_len * cols,
        // A lesson's own matrix is shared, but a head's block of it is copied out when looked
        // at; the mask is made.
        Some(Op::Input(_) | Op::Given(_)) if name != MatrixName::Mask => {
            if count > 1 {
                rows * cols
            } else {
                0
            }
        }
        // The weights and, per row, the maximum, the sum and whether it is all masked.
        Some(Op::RowSoftmax(_)) => rows * cols + 3 * rows,
        _ => rows * cols,
    };
    let instances = if name.per_tile() {
        lesson.key_len().div_ceil(tile.max(1)) as u64
    } else if name.per_token() && !matches!(origin, Some(Op::Append(_))) {
        seq_len
    } else {
        // One cache, whose first t + 1 rows are the cache after step t.
        1
    };
    one * count * instances * NUMBER
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::Attention;

    /// Bytes of matrix `name` an engine holds after it has been looked at for every head and
    /// every token (tile), counted from the matrices themselves.
    fn held_after_everything(attention: &Attention, lesson: &Lesson, name: MatrixName) -> u64 {
        let plan = &attention.plan;
        let heads = attention.heads();
        let tiles = lesson.key_len().div_ceil(lesson.tile.max(1));
        let instances = if name.per_tile() {
            tiles
        } else if name.per_token() {
            lesson.seq_len()
        } else {
            1
        };
        let mut bytes = 0;
        for slot in 0..heads.count(name.per()) {
            let head = heads.head_of_slot(name.per(), slot);
            for token in 0..instances {
                if let Some(matrix) = attention.matrix_at(name, head, token) {
                    let (rows, cols) = matrix.shape();
                    let shared = matches!(plan.origin(name), Some(Op::Input(_) | Op::Given(_)))
                        && heads.count(name.per()) == 1
                        && name != MatrixName::Mask;
                    // A cache's views share its one matrix: its last is all of it.
                    let cache = matches!(plan.origin(name), Some(Op::Append(_)));
                    if !shared && (!cache || token + 1 == instances) {
                        bytes += (rows * cols) as u64 * NUMBER;
                    }
                }
            }
        }
        bytes
    }

    fn lesson(text: &str) -> Lesson {
        crate::lesson::load_text("test", None, text.to_string())
            .expect("a valid lesson")
            .lesson
    }

    #[test]
    fn no_engine_holds_more_than_the_estimate_of_its_lesson() {
        let mut lessons: Vec<Lesson> = crate::lesson::BUILTIN
            .iter()
            .map(|builtin| lesson(builtin.text))
            .collect();
        // Generation over enough tokens that a cache counted once per step would show.
        let tokens: Vec<String> = (0..40).map(|token| format!("\"t{token}\"")).collect();
        lessons.push(lesson(&format!(
            "format = 2\ntitle = \"gen\"\nheads = 4\nkv_heads = 2\nmask = \"causal\"\n\
             decode = true\ntile = 3\ntokens = [{}]\n\
             embeddings = {{ random = \"normal\", seed = 1, shape = [40, 16] }}\n\
             w_q = {{ random = \"normal\", seed = 2, shape = [16, 16] }}\n\
             w_k = {{ random = \"normal\", seed = 3, shape = [16, 8] }}\n\
             w_v = {{ random = \"normal\", seed = 4, shape = [16, 8] }}\n\
             w_o = {{ random = \"normal\", seed = 5, shape = [16, 16] }}\n",
            tokens.join(", ")
        )));
        for lesson in &lessons {
            let attention = Attention::compute(lesson);
            for &name in attention.plan.order() {
                let held = held_after_everything(&attention, lesson, name);
                let most = matrix_bytes(lesson, &attention.plan, name, lesson.tile);
                assert!(
                    held <= most,
                    "{} {name:?}: the engine holds {held} B, more than the {most} B estimated",
                    lesson.title
                );
                // Not so loose as to refuse students for nothing: a step of generation's row
                // of scores has t + 1 keys at step t, counted as all of them, and a softmax's
                // row maxima and sums are counted beside its weights.
                assert!(
                    most <= 3 * held + 64,
                    "{} {name:?}: {most} B estimated for {held} B held",
                    lesson.title
                );
            }
            assert!(most_bytes(lesson) >= plan_bytes(lesson, &attention.plan, lesson.tile));
            // The learner makes the tiles as small as they go (`b`).
            let mut smallest = lesson.clone();
            smallest.tile = 1;
            let attention = Attention::compute(&smallest);
            let held: u64 = attention
                .plan
                .order()
                .iter()
                .map(|&name| held_after_everything(&attention, &smallest, name))
                .sum();
            assert!(
                held <= most_bytes(lesson),
                "{}: {held} B held with tiles of one key, {} B estimated",
                lesson.title,
                most_bytes(lesson)
            );
        }
    }
}
