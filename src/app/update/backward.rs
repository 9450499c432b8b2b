//! The backward pass's keys: `d` adds one, `g` takes a step of gradient descent, `G` sets
//! its learning rate.

use crate::app::Status;
use crate::app::action::Action;
use crate::app::history::{Change, WholeLesson};
use crate::app::tutor::Tutor;
use crate::lesson::Lesson;
use std::sync::Arc;

/// The largest η `G` takes: a step far past the gradient's reach teaches nothing.
const MAX_LEARNING_RATE: f64 = 10.0;

/// The seed of the `grad_output` that `d` draws: the same for every learner, so a class
/// compares the same gradients.
pub(super) const BACKWARD_SEED: u64 = 1;

/// `G`: η for the session's steps of gradient descent, a number above 0 and at most 10.
pub(super) fn set_learning_rate(tutor: &mut Tutor, typed: &str) -> Result<String, String> {
    let eta: f64 = typed
        .trim()
        .parse()
        .ok()
        .filter(|eta: &f64| eta.is_finite() && *eta > 0.0 && *eta <= MAX_LEARNING_RATE)
        .ok_or_else(|| {
            format!(
                "η must be a number above 0 and at most {MAX_LEARNING_RATE}, like 0.05, not \"{}\"",
                crate::lesson::text::printable(typed.trim())
            )
        })?;
    if eta != tutor.learning_rate {
        tutor.change(Change::LearningRate {
            before: tutor.learning_rate,
            after: eta,
        });
    }
    let eta = crate::app::as_typed(eta);
    Ok(format!(
        "η = {eta}: g now moves each weight by −{eta} times its gradient (u undoes)"
    ))
}

/// `d` and `g`: what adding the backward pass or a step of gradient descent did, or why neither
/// could be done.
pub(super) fn backward_update(tutor: &mut Tutor, action: Action) -> Option<Status> {
    let mut status = None;
    match action {
        Action::AddBackward | Action::GradientStep if tutor.practice.is_some() => {
            status = Some(Status::info(
                "The numbers stay as they are in practice: x leaves practice, then d or g",
            ));
        }
        Action::AddBackward if tutor.lesson.grad_output.is_some() => {
            status = Some(Status::info(
                "This lesson has its backward pass: its steps come last (End goes there); g \
                 takes a step of gradient descent",
            ));
        }
        Action::AddBackward => {
            let mut after = Lesson::clone(&tutor.lesson);
            after.seed_grad_output(BACKWARD_SEED);
            // A saved lesson keeps its grad_output, which format 2 has.
            after.format = after.format.max(2);
            tutor.change(Change::Lesson {
                before: Arc::clone(&tutor.lesson),
                after: Arc::new(after),
                why: WholeLesson::Backward,
            });
            let first = tutor.steps.iter().position(|step| step.is_backward());
            status = Some(Status::info(format!(
                "Backward pass on: grad_output drawn from N(0, 1) with seed {BACKWARD_SEED}; its \
                 {} steps come last{} (u undoes)",
                tutor.steps.iter().filter(|step| step.is_backward()).count(),
                first.map_or_else(String::new, |index| format!(", from step {}", index + 1)),
            )));
        }
        Action::GradientStep if tutor.lesson.grad_output.is_none() => {
            status = Some(Status::info(
                "g takes a step of gradient descent once the lesson has a backward pass: d \
                 adds one",
            ));
        }
        Action::GradientStep => {
            let eta = tutor.learning_rate;
            let before = tutor.attention.loss().unwrap_or(0.0);
            let mut after = Lesson::clone(&tutor.lesson);
            after.gradient_step(&tutor.attention, eta);
            tutor.change(Change::Lesson {
                before: Arc::clone(&tutor.lesson),
                after: Arc::new(after),
                why: WholeLesson::GradientStep,
            });
            let now = tutor.attention.loss().unwrap_or(0.0);
            let eta = crate::app::as_typed(eta);
            // Both at the lesson's decimals, so that 1.2736 → 1.1580 lines up digit by digit.
            let num =
                |value: f64| crate::attention::number::format_fixed(value, tutor.lesson.decimals);
            // Every matrix the step moved, by its symbol: the weights (or Q, K, V), W_o, and
            // the biases the lesson has.
            let mut names: Vec<&str> = if tutor.lesson.inputs.is_projected() {
                vec!["W_q", "W_k", "W_v"]
            } else {
                vec!["Q", "K", "V"]
            };
            let biases = &tutor.lesson.biases;
            for (given, name) in [
                (tutor.lesson.w_o.is_some(), "W_o"),
                (biases.q.is_some(), "b_q"),
                (biases.k.is_some(), "b_k"),
                (biases.v.is_some(), "b_v"),
                (biases.o.is_some(), "b_o"),
            ] {
                if given {
                    names.push(name);
                }
            }
            let moved = match names.split_last() {
                Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
                None => String::new(),
            };
            // A step against the gradient lowers L only when η is small enough: L is not
            // convex in W_q and W_k, and a step may overshoot.
            let how = if now > before {
                format!(
                    "; L rose: η = {eta} overshoots here, L falls only for a small enough η (G \
                     sets it)"
                )
            } else if now < 0.0 {
                // Below zero, the learner may wonder where it stops: it does not.
                "; this L has no lowest value: small enough steps keep taking it lower".to_string()
            } else {
                String::new()
            };
            status = Some(Status::info(format!(
                "A step of gradient descent, η = {eta}: {moved} moved by −η times their \
                 gradients; L = {} → {}{how} (u undoes)",
                num(before),
                num(now)
            )));
        }
        _ => {}
    }
    status
}
