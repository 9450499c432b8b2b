//! Each step's part of the header's formula, and the formulas composed from those parts in
//! plan order, with the pieces the step on screen computes lit.

use std::borrow::Cow;

use super::{Header, Lit, Part, Piece, Plan, SeveralHeads, Step};

/// How a piece looks on the screen of one step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    Lit,
    Plain,
    Muted,
    Skipped,
}

/// A piece of a formula as the screen of one step shows it.
pub type Shown = (Cow<'static, str>, Look);

impl Lit {
    /// How a piece that `writer` wrote looks on `on`'s screen.
    fn look(self, writer: Step, on: Step) -> Look {
        let lit = match self {
            Lit::Own => on == writer,
            Lit::Also(steps) => on == writer || steps.contains(&on),
            Lit::Inputs => on <= writer,
            Lit::Never => false,
            Lit::Muted => return Look::Muted,
            Lit::Skipped => return Look::Skipped,
        };
        if lit { Look::Lit } else { Look::Plain }
    }
}

/// A formula composed from its steps' parts, each in plan order wrapping the formula the steps
/// before it wrote.
struct Composed {
    formula: Vec<Shown>,
    aside: Vec<Shown>,
    definitions: Vec<Shown>,
}

fn compose(
    plan: &Plan,
    on: Step,
    part_of: impl Fn(&'static super::StepEntry) -> Option<fn(&Plan) -> Part>,
) -> Composed {
    let mut composed = Composed {
        formula: Vec::new(),
        aside: Vec::new(),
        definitions: Vec::new(),
    };
    for step in Step::all_in(plan) {
        let Some(part) = part_of(step.entry()) else {
            continue;
        };
        let part = part(plan);
        let shown = |pieces: Vec<Piece>| -> Vec<Shown> {
            pieces
                .into_iter()
                .map(|piece| (piece.text, piece.lit.look(step, on)))
                .collect()
        };
        let mut formula = shown(part.before);
        formula.append(&mut composed.formula);
        formula.extend(shown(part.after));
        composed.formula = formula;
        composed.aside.extend(shown(part.aside));
        composed.definitions.extend(shown(part.definitions));
    }
    composed
}

/// One head's formula on `on`'s screen, its asides and definitions after it:
/// `softmax(QKᵀ / √d_k + mask)V·W_o    where X = E + P; Q, K, V = X·W_q, X·W_k, X·W_v`.
pub fn one_head(plan: &Plan, on: Step) -> Vec<Shown> {
    let composed = compose(plan, on, |entry| match entry.header {
        Header::Attention { one_head, .. } => Some(one_head),
        _ => None,
    });
    let mut line = composed.formula;
    line.extend(composed.aside);
    line.push(("    where ".into(), Look::Muted));
    line.extend(composed.definitions);
    line
}

/// One step of generation's formula on `on`'s screen, and the definitions `on` itself is about.
pub fn generation(plan: &Plan, on: Step) -> (Vec<Shown>, Vec<Shown>) {
    let part_of = |entry: &'static super::StepEntry| match entry.header {
        Header::Generation(part) => Some(part),
        _ => None,
    };
    let composed = compose(plan, on, part_of);
    let definitions = part_of(on.entry())
        .map(|part| {
            part(plan)
                .definitions
                .into_iter()
                .map(|piece| (piece.text, piece.lit.look(on, on)))
                .collect()
        })
        .unwrap_or_default();
    (composed.formula, definitions)
}

/// The clauses of multi-head attention, from the output back, each with whether it is `on`'s.
pub fn several_heads(plan: &Plan, on: Step) -> Vec<(bool, String)> {
    Step::all_in(plan)
        .into_iter()
        .rev()
        .filter_map(|step| match step.entry().header {
            Header::Attention {
                several_heads: SeveralHeads::Clause(clause),
                ..
            } => Some((step == on, clause(plan.shape.heads))),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{Per, Shape};

    fn lights(line: &[Shown]) -> bool {
        line.iter().any(|(_, look)| *look == Look::Lit)
    }

    /// A step whose entry writes no part of the formula, and is lit by no other part, would show
    /// a header with nothing lit: the compiler asks for the part, this asks that it says
    /// something.
    #[test]
    fn every_step_lights_its_part_of_the_formula_its_screen_shows() {
        for shape in Shape::every() {
            let plan = Plan::new(shape);
            for step in Step::all_in(&plan) {
                let lit = match step.entry().header {
                    Header::Attention {
                        several_heads: part,
                        ..
                    } if shape.heads.query > 1 => {
                        match part {
                            SeveralHeads::Clause(_) => {
                                several_heads(&plan, step).iter().any(|(on, _)| *on)
                            }
                            // The head's own formula, all of it lit.
                            SeveralHeads::OneHead => true,
                            SeveralHeads::Whole => continue,
                        }
                    }
                    // A step the lesson skips shows its part crossed out (scaling, with
                    // `scale = false`).
                    Header::Attention { one_head: part, .. } => {
                        lights(&one_head(&plan, step))
                            || part(&plan)
                                .after
                                .iter()
                                .any(|piece| piece.lit == Lit::Skipped)
                    }
                    Header::Generation(_) => lights(&generation(&plan, step).0),
                    Header::Online | Header::Backward => continue,
                };
                assert!(lit, "{step:?} lights nothing of its header in {shape:?}");
            }
        }
    }

    /// The header writes a head's own formula on a step that says it shows one head at a time,
    /// and multi-head attention whole on a step that says it comes before the heads: each
    /// must be what its screen shows.
    #[test]
    fn a_step_of_several_heads_shows_one_head_exactly_when_its_part_says_so() {
        for shape in Shape::every()
            .into_iter()
            .filter(|shape| shape.heads.query > 1)
        {
            let plan = Plan::new(shape);
            for step in Step::all_in(&plan) {
                let Header::Attention { several_heads, .. } = step.entry().header else {
                    continue;
                };
                let per_head = |view: &super::super::View| view.result.per() != Per::Lesson;
                let views = step.views(&plan);
                match several_heads {
                    SeveralHeads::OneHead => assert!(
                        views.iter().all(per_head),
                        "{step:?} says it shows one head, but a view is the lesson's, in {shape:?}"
                    ),
                    SeveralHeads::Whole => assert!(
                        !views.iter().any(per_head),
                        "{step:?} says it comes before the heads, but shows one, in {shape:?}"
                    ),
                    SeveralHeads::Clause(_) => {}
                }
            }
        }
    }

    /// The header picks the formula by the step's entry: the online recurrence for the step
    /// seen after one tile, generation's for the steps seen at one token, the loss for the
    /// backward pass.
    #[test]
    fn each_steps_formula_is_the_one_of_what_its_screen_shows() {
        for shape in Shape::every() {
            let plan = Plan::new(shape);
            for step in Step::all_in(&plan) {
                let header = step.entry().header;
                assert_eq!(
                    matches!(header, Header::Online),
                    step.is_at_a_tile(&plan),
                    "{step:?} in {shape:?}"
                );
                assert_eq!(
                    matches!(header, Header::Generation(_)),
                    step.is_at_a_token(&plan),
                    "{step:?} in {shape:?}"
                );
                assert_eq!(
                    matches!(header, Header::Backward),
                    step.is_backward(),
                    "{step:?} in {shape:?}"
                );
            }
        }
    }
}
