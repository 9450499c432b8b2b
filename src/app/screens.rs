//! Which screens a lesson has and which matrices each one shows, as the step table says
//! (`crate::pipeline::StepEntry`), for the lesson's own plan.

use crate::attention::{Attention, MatrixName, Step};
use crate::lesson::Lesson;
use crate::pipeline::{Per, Plan, View};

/// The steps this lesson walks through, in order.
pub fn steps(lesson: &Lesson) -> Vec<Step> {
    lesson.steps()
}

/// The view of a step turned to `choice` (Q, K or V on the Projection screen), or its first.
pub(crate) fn view(step: Step, attention: &Attention, choice: MatrixName) -> View {
    let mut views = step.views(&attention.plan);
    let chosen = views
        .iter()
        .position(|view| view.result == choice)
        .unwrap_or(0);
    if views.is_empty() {
        return View {
            result: MatrixName::Output,
            panels: vec![MatrixName::Output],
        };
    }
    views.swap_remove(chosen)
}

/// The matrices on a step's screen, left to right.
pub fn panels(step: Step, attention: &Attention, choice: MatrixName) -> Vec<MatrixName> {
    view(step, attention, choice).panels
}

/// The matrix a step computes, where the cursor starts.
pub(crate) fn result(step: Step, attention: &Attention, choice: MatrixName) -> MatrixName {
    view(step, attention, choice).result
}

/// The order `[` and `]` visit matrices on a step's screen: every view's matrices, each once,
/// so on the Projection screen each projection comes after the weights it is made from.
pub(crate) fn order(step: Step, attention: &Attention) -> Vec<MatrixName> {
    order_in(step, &attention.plan)
}

/// `order` from the lesson's plan alone.
fn order_in(step: Step, plan: &Plan) -> Vec<MatrixName> {
    let mut order = Vec::new();
    for view in step.views(plan) {
        for panel in view.panels {
            if !order.contains(&panel) {
                order.push(panel);
            }
        }
    }
    order
}

/// The view a step turns to for the cursor to sit in `matrix`: the current one if it shows the
/// matrix, else the first that does.
pub(crate) fn choice_for(
    step: Step,
    attention: &Attention,
    matrix: MatrixName,
    current: MatrixName,
) -> MatrixName {
    let views = step.views(&attention.plan);
    if views
        .iter()
        .any(|view| view.result == current && view.panels.contains(&matrix))
    {
        return current;
    }
    views
        .iter()
        .find(|view| view.panels.contains(&matrix))
        .map_or(current, |view| view.result)
}

/// Whether a step, turned to `choice`, shows one head's matrices: its result is a head's or a
/// K/V group's, not one the lesson shares.
pub(crate) fn is_per_head(step: Step, attention: &Attention, choice: MatrixName) -> bool {
    result(step, attention, choice).per() != Per::Lesson
}

/// Whether a matrix's rows are tokens (so its row labels can be edited).
pub fn rows_are_tokens(matrix: MatrixName) -> bool {
    matrix.rows_are_tokens()
}

/// The matrices a step computes that no earlier step of the lesson shows: what the learner
/// predicts there in practice. The lesson's own numbers are never among them.
pub(crate) fn computed_on(step: Step, attention: &Attention, steps: &[Step]) -> Vec<MatrixName> {
    computed_in(step, &attention.plan, steps)
}

/// `computed_on` from the lesson's plan alone, which is made without computing anything: the
/// lesson picker counts a lesson's steps to practise with it.
pub(crate) fn computed_in(step: Step, plan: &Plan, steps: &[Step]) -> Vec<MatrixName> {
    let earlier: Vec<MatrixName> = steps
        .iter()
        .take_while(|earlier| **earlier != step)
        .flat_map(|earlier| order_in(*earlier, plan))
        .collect();
    newly_computed(order_in(step, plan), plan, &earlier)
}

/// `computed_in` for every step of `steps` at once, in their order: one walk of the steps for a
/// command that writes every step (each step's views are made once, not once per later step).
pub(crate) fn computed_in_each(plan: &Plan, steps: &[Step]) -> Vec<Vec<MatrixName>> {
    let mut earlier = Vec::new();
    steps
        .iter()
        .map(|step| {
            let order = order_in(*step, plan);
            let computed = newly_computed(order.clone(), plan, &earlier);
            earlier.extend(order);
            computed
        })
        .collect()
}

/// Of a step's matrices, those it computes that `earlier` steps did not show.
fn newly_computed(order: Vec<MatrixName>, plan: &Plan, earlier: &[MatrixName]) -> Vec<MatrixName> {
    order
        .into_iter()
        .filter(|name| {
            plan.origin(*name).is_some_and(|origin| {
                // A generation step's row of X (or of the given Q, K, V) is a copy of
                // numbers an earlier step showed.
                !origin.is_lesson_input() && !matches!(origin, crate::pipeline::Op::TokenRow(_))
            }) && *name != MatrixName::Mask
                && !earlier.contains(name)
        })
        .collect()
}

/// The matrices a step brings to the screen that the step before it did not show, the lesson's
/// own numbers first: what a handout prints for the step.
pub(crate) fn new_on(step: Step, attention: &Attention, steps: &[Step]) -> Vec<MatrixName> {
    let before = steps
        .iter()
        .position(|shown| *shown == step)
        .and_then(|index| index.checked_sub(1))
        .map(|index| order(steps[index], attention))
        .unwrap_or_default();
    let (inputs, computed): (Vec<MatrixName>, Vec<MatrixName>) = order(step, attention)
        .into_iter()
        .filter(|name| !before.contains(name))
        .partition(|name| {
            attention
                .plan
                .origin(*name)
                .is_some_and(|origin| origin.is_lesson_input())
        });
    inputs.into_iter().chain(computed).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `show` finds what each step computes in one walk of the steps; it is what the tutor's
    /// practice asks a learner to predict on that step, in every built-in lesson.
    #[test]
    fn what_each_step_computes_found_at_once_is_what_each_step_computes() {
        for builtin in crate::lesson::BUILTIN {
            let lesson = crate::lesson::load(builtin.name)
                .expect("a built-in lesson loads")
                .lesson;
            let steps = steps(&lesson);
            let plan = Plan::new(lesson.shape());
            let each = computed_in_each(&plan, &steps);
            assert_eq!(each.len(), steps.len());
            for (step, at_once) in steps.iter().zip(&each) {
                assert_eq!(
                    *at_once,
                    computed_in(*step, &plan, &steps),
                    "{}: {step:?}",
                    builtin.name
                );
            }
            assert!(each.iter().any(|computed| !computed.is_empty()));
        }
    }
}
