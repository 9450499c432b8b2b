//! Our words for each step, shown where a lesson gives no narration of its own.

use crate::attention::Step;

pub fn default_narration(step: Step) -> &'static str {
    match step {
        Step::Embedding => {
            "Each token starts as a vector of numbers, its embedding. Stacked one row per token, \
             they form the matrix X. Everything attention does, it does to these numbers."
        }
        Step::Projection => {
            "Three learned matrices turn each embedding into three new vectors: a query (what this \
             token is looking for), a key (what it offers to others) and a value (what it passes \
             on). Q = X·W_q, K = X·W_k, V = X·W_v: each cell is a dot product of a row of X with a \
             column of the weights."
        }
        Step::Scores => {
            "Every query meets every key. The score of row i, column j is the dot product of query \
             i with key j: large when they point the same way, small or negative when they do not. \
             Together they form QKᵀ, one row per query and one column per key."
        }
        Step::Scaling => {
            "Dot products grow with the width d_k of the vectors, and large scores would make \
             softmax all-or-nothing. Dividing every score by √d_k keeps them in a range where \
             softmax still spreads its attention."
        }
        Step::Masking => {
            "A mask adds 0 where a query may look and -inf where it may not. In a causal mask each \
             token sees only itself and the tokens before it, as when a model writes text one \
             token at a time. exp(-inf) is 0, so hidden keys get no weight."
        }
        Step::Softmax => {
            "Softmax turns each row of scores into weights that are positive and sum to 1: \
             exp(score) divided by the sum of the exps of its row. The row maximum is subtracted \
             first; that changes nothing in the result but keeps exp from overflowing."
        }
        Step::Output => {
            "Each token's output is a weighted average of all the value vectors, using its row of \
             weights. A token that attends mostly to one other token ends up close to that \
             token's value: this is how context flows between words."
        }
    }
}
