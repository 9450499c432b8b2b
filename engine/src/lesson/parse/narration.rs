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
                    .help(match step.entry().enable {
                        Some(enable) => format!("{enable}, or remove this narration"),
                        None => "remove this narration".to_string(),
                    }),
                );
            }
            narration.set(step, words);
        }
        narration
    }
}
