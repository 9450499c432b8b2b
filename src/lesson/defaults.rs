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
             i with key j: the cosine of the angle between them times both their lengths, so it \
             grows with how closely they point the same way and with how long they are, and is \
             negative when they point apart. A long key can outscore a better-aligned one. \
             Together the scores form QKᵀ, one row per query and one column per key."
        }
        Step::Scaling => {
            "If the entries of queries and keys had mean 0 and variance 1, a dot product of d_k \
             terms would have variance d_k; dividing every score by √d_k brings the variance back \
             to 1. Without it, wide vectors give large scores that push softmax into regions where \
             nearly all the weight goes to one key and its gradients are extremely small, so \
             learning stalls (Vaswani et al., 2017)."
        }
        Step::Masking => {
            "A mask is added to the scores: 0 where a query may look, -inf where it may not. In a \
             causal mask each token sees only itself and the tokens before it, as when a model \
             writes text one token at a time. exp(-inf) is 0, so a hidden key gets a weight of \
             exactly 0. A row whose every key is hidden is 0 / 0: this tutor gives it weights and \
             output of 0, as PyTorch's scaled_dot_product_attention does since version 2.5 (older \
             versions and a plain softmax give NaN). Many tutorials instead fill hidden scores \
             with -1e9 (masked_fill): a hidden key then gets a tiny weight, or 0 once exp \
             underflows, and a row whose every key is hidden becomes uniform, 1/n for each of its \
             n keys. A mask here may also hold any finite bias within ±1e6, as ALiBi's linear \
             biases do: it is added to the score, not put in its place, so it tilts the row, and \
             the same bias on every key of a row changes nothing."
        }
        Step::Softmax => {
            "Softmax turns each row of scores into weights that sum to 1: exp(score) divided by \
             the sum of the exps of its row. Every weight is positive, except where a mask hides \
             the key with -inf: that weight is exactly 0, and a row whose every key is hidden is \
             all 0 here. The row maximum is subtracted first; that changes nothing in the result \
             but keeps exp from overflowing."
        }
        Step::Output => {
            "Each token's output is the sum of the value vectors, each multiplied by that token's \
             weight for it: a weighted average, since the weights sum to 1. A key hidden by the \
             mask has weight 0 and adds nothing, and a row whose every key is hidden gets an \
             output of 0. A token that attends mostly to one other token ends up close to that \
             token's value: this is how context flows between words."
        }
    }
}
