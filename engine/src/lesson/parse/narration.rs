//! `[narration]`: the lesson's own words for each step, one string per step key.

use toml::de::DeValue;

use super::report::too_long;
use super::{Entry, Reader};
use crate::lesson::diagnostic::Diagnostic;
use crate::lesson::limits::MAX_NARRATION_CHARS;
use crate::lesson::{Mask, Narration};
use crate::pipeline::Step;

/// Whether `key` is one of `[narration]`'s own keys (a step), rather than a lesson key written
/// below the header by mistake.
pub(super) fn is_step_key(key: &str) -> bool {
    Step::from_key(key).is_some()
}

impl Reader<'_> {
    pub(super) fn narration(
        &mut self,
        entry: Entry<'_, '_>,
        mask: &Option<Mask>,
        misplaced: &[String],
        steps: Option<&[Step]>,
    ) -> Narration {
        let mut narration = Narration::default();
        let Some((_, value)) = entry else {
            return narration;
        };
        let DeValue::Table(table) = value.get_ref() else {
            self.wrong_type(
                value,
                "`narration`",
                "a table",
                "[narration]\nscores = \"...\"",
            );
            return narration;
        };
        let keys: Vec<&str> = Step::ALL.iter().map(|step| step.key()).collect();
        for (name, text) in table.iter() {
            if misplaced.iter().any(|key| key == name.get_ref()) {
                continue;
            }
            let Some(step) = Step::from_key(name.get_ref()) else {
                self.unknown_key(name.get_ref(), name.span(), &keys, "not a step");
                continue;
            };
            let what = format!("narration for {}", step.key());
            let DeValue::String(words) = text.get_ref() else {
                self.wrong_type(
                    text,
                    &what,
                    "a string",
                    "scores = \"Each query meets every key.\"",
                );
                continue;
            };
            let Some(words) = self.clean(words, text.span(), &what, true) else {
                continue;
            };
            if let Some(diagnostic) = too_long(text.span(), &what, &words, MAX_NARRATION_CHARS) {
                self.error(diagnostic.help("keep each step's narration to a few short paragraphs"));
                continue;
            }
            if step == Step::Masking && matches!(mask, Some(Mask::None)) {
                self.error(
                    Diagnostic::warning(
                        name.span(),
                        "narration for masking is never shown: this lesson has no mask",
                    )
                    .label("unused")
                    .help("add `mask = \"causal\"` or remove this narration"),
                );
            } else if steps.is_some_and(|steps| !steps.contains(&step)) {
                self.error(
                    Diagnostic::warning(
                        name.span(),
                        format!(
                            "narration for {} is never shown: this lesson has no {} step",
                            step.key(),
                            step.title()
                        ),
                    )
                    .label("unused")
                    .help(match step {
                        Step::Positions => "add `positions = \"sinusoidal\"` (or a matrix) with `format = 2`, or remove this narration",
                        Step::Rotation => "add `positions = \"rope\"` with `format = 2`, or remove this narration",
                        Step::Embedding => "this lesson gives q, k, v directly: give embeddings with w_q, w_k, w_v, or remove this narration",
                        Step::AllHeads | Step::Concat => "give the lesson several heads (`heads` with `w_o`, format 2), or remove this narration",
                        Step::OutputProjection => "give the lesson output weights (`w_o`, format 2), or remove this narration",
                        Step::Circuits => "give the lesson embeddings and output weights (`w_o`, format 2), or remove this narration",
                        Step::NewToken
                        | Step::KvCache
                        | Step::DecodeWeights
                        | Step::DecodeOutput => "add `decode = true` (with `mask = \"causal\"`, format 2), or remove this narration",
                        Step::BackwardOutput => "give the lesson `w_o` and `grad_output` (format 2), or remove this narration",
                        Step::BackwardScaling => "the lesson scales and gives `grad_output` (format 2), or remove this narration",
                        Step::BackwardRotation => "give the lesson `positions = \"rope\"` and `grad_output` (format 2), or remove this narration",
                        Step::BackwardWeights | Step::BackwardInput => "give the lesson embeddings with w_q, w_k, w_v and `grad_output` (format 2), or remove this narration",
                        Step::BackwardValues
                        | Step::BackwardSoftmax
                        | Step::BackwardScores => "add `grad_output` (format 2), or remove this narration",
                        Step::Projection
                        | Step::Scores
                        | Step::Scaling
                        | Step::Masking
                        | Step::Softmax
                        | Step::Output
                        | Step::OnlineSoftmax => "remove this narration",
                    }),
                );
            }
            narration.set(step, words);
        }
        narration
    }
}
