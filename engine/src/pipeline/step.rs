//! Every step in one table: its key, title, default words, when a lesson has it, which
//! matrices its screen shows and its part of the header's formula. Each step's entry lives in its own file under `steps/`.

use std::borrow::Cow;
use std::fmt;

use super::{Heads, MatrixName, Plan, steps};

/// What a screen shows when it is turned to one of its results: the result, where the cursor
/// starts, and the matrices on screen, left to right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub result: MatrixName,
    pub panels: Vec<MatrixName>,
}

impl View {
    /// The screen of a computed matrix: its operands, then itself.
    pub(crate) fn computed(plan: &Plan, result: MatrixName) -> View {
        let mut panels = plan
            .origin(result)
            .map(|origin| origin.operands())
            .unwrap_or_default();
        panels.push(result);
        View { result, panels }
    }
}

/// The table entry of one step.
pub struct StepEntry {
    pub step: Step,
    /// The key used on the command line (`--step`) and in `[narration]`.
    pub key: &'static str,
    pub title: &'static str,
    /// Our words, shown where a lesson gives none of its own; right for the lesson they are
    /// shown in, so they may depend on its plan.
    pub narration: fn(&Plan) -> Cow<'static, str>,
    /// Said before the narration wherever the step is shown (the tutor, `show`), when the
    /// lesson's plan makes the step other than usual: Q, K and V given, scaling turned off.
    pub note: fn(&Plan) -> Option<&'static str>,
    /// Whether a lesson with this plan has the step.
    pub shown: fn(&Plan) -> bool,
    /// Why a lesson with this plan has not got the step, and what would give it one: `show`
    /// says it where the step would be.
    pub absent: fn(&Plan) -> Option<&'static str>,
    /// What would give a lesson the step, said where a lesson narrates a step it has not got;
    /// `None` for a step every lesson has.
    pub enable: Option<&'static str>,
    /// The screen's views: a step with several results (Q, K and V) has one view for each,
    /// and `[` `]` turn between them.
    pub views: fn(&Plan) -> Vec<View>,
    /// Which formula the header shows on the step's screen, and the step's part of it: the
    /// header writes each formula from its steps' parts in plan order.
    pub header: Header,
}

/// Which formula the header shows on a step's screen, and the step's part of it.
#[derive(Clone, Copy)]
pub enum Header {
    /// A step of attention as a whole: its part of one head's formula
    /// (`softmax(QKᵀ / √d_k + mask)V·W_o    where …`) and of several heads'.
    Attention {
        one_head: fn(&Plan) -> Part,
        several_heads: SeveralHeads,
    },
    /// A step of generation with a K/V cache: its part of one token's formula
    /// (`output_t = softmax(q_t·K_cacheᵀ / √d_k)·V_cache`); its `definitions` are said after it
    /// on its own screen only.
    Generation(fn(&Plan) -> Part),
    /// The online softmax: its recurrence, whichever state is on screen.
    Online,
    /// A step of the backward pass: the loss it differentiates, and its value.
    Backward,
}

/// A step's part of the formula of a lesson with several heads.
#[derive(Clone, Copy)]
pub enum SeveralHeads {
    /// It comes before the heads part: the header writes multi-head attention whole, none of it
    /// lit.
    Whole,
    /// It shows one head at a time: the header writes its result's formula in that head's
    /// symbols.
    OneHead,
    /// Its clause of multi-head attention (`concat = [head⁽¹⁾ | … | head⁽⁴⁾]`), lit on its
    /// screen. The clauses are written from the output back.
    Clause(fn(Heads) -> String),
}

/// A step's part of a formula, added to the formula the steps before it wrote.
#[derive(Default)]
pub struct Part {
    /// Written before the formula so far (`softmax(`).
    pub before: Vec<Piece>,
    /// Written after it (` / √d_k`).
    pub after: Vec<Piece>,
    /// Said after the whole formula, before its definitions (` (no scaling)`).
    pub aside: Vec<Piece>,
    /// What the formula's symbols are, after `where` (`X = E + P; `).
    pub definitions: Vec<Piece>,
}

/// A piece of a formula, and on which screens it is lit.
pub struct Piece {
    pub text: Cow<'static, str>,
    pub lit: Lit,
}

impl Piece {
    pub(crate) fn new(text: impl Into<Cow<'static, str>>, lit: Lit) -> Piece {
        Piece {
            text: text.into(),
            lit,
        }
    }

    /// Lit on the screen of the step that writes it.
    pub(crate) fn own(text: impl Into<Cow<'static, str>>) -> Piece {
        Piece::new(text, Lit::Own)
    }
}

/// On which steps' screens a piece is lit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lit {
    /// On the screen of the step that writes it.
    Own,
    /// On its step's screen and on these steps', whose results it is made of (RoPE's rotated
    /// queries and keys in the scores, the cache's values in the output).
    Also(&'static [Step]),
    /// On its step's screen and on every step's before it: the input all of those make (the X
    /// that the projections read is made by every step before them).
    Inputs,
    /// On no screen: said plainly.
    Never,
    /// On no screen, and greyed: a remark.
    Muted,
    /// Greyed and crossed out: a part this lesson skips.
    Skipped,
}

/// The one list of steps, in the order they are taken, each with the file of its entry: it
/// makes `Step`, `Step::ALL` and the table of entries, so a step cannot be named without its
/// entry, nor have an entry out of its place.
macro_rules! steps {
    ($($(#[$doc:meta])* $name:ident => $file:ident,)*) => {
        /// One screen of the tutor, in the order attention is computed.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Step {
            $($(#[$doc])* $name,)*
        }

        /// Each step's entry, in the order of `Step`.
        const STEPS: [&StepEntry; Step::COUNT] = [$(&steps::$file::ENTRY,)*];

        impl Step {
            /// How many steps there are.
            const COUNT: usize = [$(Step::$name,)*].len();

            /// All steps in order; the one place that decides the step order.
            pub const ALL: [Step; Step::COUNT] = [$(Step::$name,)*];
        }
    };
}

steps! {
    Embedding => embedding,
    Positions => positions,
    /// Each row of X normalised before the projections: LayerNorm (`norm = "layer"`) or
    /// RMSNorm (`norm = "rms"`).
    LayerNorm => layer_norm,
    RmsNorm => rms_norm,
    Projection => projection,
    Rotation => rotation,
    Scores => scores,
    Scaling => scaling,
    Masking => masking,
    Softmax => softmax,
    /// Every head's weights side by side (a lesson with several heads).
    AllHeads => all_heads,
    Output => output,
    /// The heads' outputs side by side (several heads with W_o).
    Concat => concat,
    /// concat · W_o (a lesson with W_o).
    OutputProjection => output_projection,
    /// Each head's W_QK and W_OV (embeddings and W_o).
    Circuits => circuits,
    /// The same output made one tile of keys at a time (FlashAttention's online softmax).
    OnlineSoftmax => online_softmax,
    /// Generation with a K/V cache (`decode = true`), step t: the new token's q, k and v.
    NewToken => new_token,
    /// The K and V caches with the new token's row added.
    KvCache => kv_cache,
    /// The new token's one row of scores and weights over the cache.
    DecodeWeights => decode_weights,
    /// The new token's output row, checked against the whole pass's.
    DecodeOutput => decode_output,
    /// The backward pass (a lesson with `grad_output`), from the output back: the loss's
    /// gradient through W_o.
    BackwardOutput => backward_output,
    BackwardValues => backward_values,
    BackwardSoftmax => backward_softmax,
    BackwardScaling => backward_scaling,
    BackwardScores => backward_scores,
    BackwardRotation => backward_rotation,
    BackwardWeights => backward_weights,
    BackwardInput => backward_input,
}

impl Step {
    /// Whether this is a step of the backward pass.
    pub fn is_backward(self) -> bool {
        matches!(
            self,
            Step::BackwardOutput
                | Step::BackwardValues
                | Step::BackwardSoftmax
                | Step::BackwardScaling
                | Step::BackwardScores
                | Step::BackwardRotation
                | Step::BackwardWeights
                | Step::BackwardInput
        )
    }

    pub fn entry(self) -> &'static StepEntry {
        STEPS[self as usize]
    }

    pub fn key(self) -> &'static str {
        self.entry().key
    }

    pub fn title(self) -> &'static str {
        self.entry().title
    }

    pub fn from_key(key: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|step| step.key() == key)
    }

    /// The steps a lesson with this plan walks through, in order.
    pub fn all_in(plan: &Plan) -> Vec<Step> {
        Step::ALL
            .into_iter()
            .filter(|step| (step.entry().shown)(plan))
            .collect()
    }

    pub fn views(self, plan: &Plan) -> Vec<View> {
        (self.entry().views)(plan)
    }

    /// Whether the step shows the online softmax's state, and so is seen after one tile.
    pub fn is_at_a_tile(self, plan: &Plan) -> bool {
        self.views(plan)
            .iter()
            .any(|view| view.panels.iter().any(|name| name.per_tile()))
    }

    /// Whether the step shows a step of generation's matrices, and so is seen at one token.
    pub fn is_at_a_token(self, plan: &Plan) -> bool {
        self.views(plan)
            .iter()
            .any(|view| view.panels.iter().any(|name| name.per_token()))
    }

    pub fn narration(self, plan: &Plan) -> Cow<'static, str> {
        (self.entry().narration)(plan)
    }

    /// The note said before the narration, if this lesson's plan makes the step unusual.
    pub fn note(self, plan: &Plan) -> Option<&'static str> {
        (self.entry().note)(plan)
    }

    /// Why this lesson has not got the step, where there is something to say.
    pub fn absent(self, plan: &Plan) -> Option<&'static str> {
        (self.entry().absent)(plan)
    }

    /// Every default text this step shows, over every kind of lesson that has the step.
    pub fn default_narrations(self) -> Vec<Cow<'static, str>> {
        let mut texts: Vec<Cow<'static, str>> = Vec::new();
        for shape in super::Shape::every() {
            let plan = Plan::new(shape);
            let text = self.narration(&plan);
            if (self.entry().shown)(&plan) && !text.is_empty() && !texts.contains(&text) {
                texts.push(text);
            }
        }
        texts
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.title())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_the_order_of_the_steps() {
        for (index, step) in Step::ALL.into_iter().enumerate() {
            assert_eq!(STEPS[index].step, step);
        }
    }

    /// A lesson that narrates a step it has not got is told what would give it the step: a
    /// step some lesson lacks must say so, and a step every lesson has must not.
    #[test]
    fn a_step_some_lesson_lacks_says_what_would_give_it_one() {
        for step in Step::ALL {
            let lacked = super::super::Shape::every()
                .into_iter()
                .any(|shape| !Step::all_in(&Plan::new(shape)).contains(&step));
            assert_eq!(
                step.entry().enable.is_some(),
                lacked,
                "{step:?}: some lesson lacks it: {lacked}"
            );
        }
    }
}
