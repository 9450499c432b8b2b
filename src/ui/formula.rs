//! A matrix's formula written in one head's symbols (`scores⁽²⁾ = Q⁽²⁾·K⁽²⁾ᵀ`), from the
//! plan's operation, so that a header says of a head what is true of it.

use crate::attention::{Attention, MatrixName};
use crate::pipeline::Op;

/// One private-use character per matrix, standing in for its symbol while `Op::formula` writes
/// the formula (it takes `&'static str` symbols); each is then replaced by the symbol with its
/// head. A lesson's text never reaches here, so they cannot collide with it.
const STAND_INS: [&str; MatrixName::ALL.len()] = [
    "\u{E000}", "\u{E001}", "\u{E002}", "\u{E003}", "\u{E004}", "\u{E005}", "\u{E006}", "\u{E007}",
    "\u{E008}", "\u{E009}", "\u{E00A}", "\u{E00B}", "\u{E00C}", "\u{E00D}", "\u{E00E}", "\u{E00F}",
    "\u{E010}", "\u{E011}", "\u{E012}", "\u{E013}", "\u{E014}", "\u{E015}",
];

/// `name`'s symbol in head `head`, `=`, and its operation written in that head's symbols;
/// `None` for a lesson's own numbers.
pub fn formula_in(attention: &Attention, name: MatrixName, head: usize) -> Option<String> {
    let origin = attention.plan.origin(name)?;
    // Every head's matrix side by side: named block by block, not in one head's symbols.
    if let Op::Concat { of } = origin {
        let heads = attention.heads().query;
        let block = |head: usize| attention.symbol_in(of, head);
        let blocks = match heads {
            0 | 1 => block(0),
            2 | 3 => (0..heads).map(block).collect::<Vec<_>>().join(" | "),
            _ => format!("{} | {} | … | {}", block(0), block(1), block(heads - 1)),
        };
        return Some(format!("{} = [{blocks}]", attention.symbol_in(name, head)));
    }
    let mut formula = origin.formula(|operand| STAND_INS[operand.index()])?;
    for operand in MatrixName::ALL {
        let stand_in = STAND_INS[operand.index()];
        if formula.contains(stand_in) {
            formula = formula.replace(stand_in, &attention.symbol_in(operand, head));
        }
    }
    Some(format!("{} = {formula}", attention.symbol_in(name, head)))
}

/// A matrix's caption as the plan writes it (`symbol = formula (gloss)`), in head `head`'s
/// symbols when the lesson has several heads (`scores⁽²⁾ = Q⁽²⁾·K⁽²⁾ᵀ`): the tutor's panels
/// and `show`'s tables say the same.
pub fn caption_in(attention: &Attention, matrix: MatrixName, head: usize) -> String {
    let plan = &attention.plan;
    let caption = plan.caption(matrix);
    if attention.heads().query < 2 {
        return caption;
    }
    // The head's symbols take the place of the caption's first part; the gloss stays.
    let symbol = plan.symbol(matrix);
    let plain = plan
        .origin(matrix)
        .and_then(|origin| origin.formula(|operand| plan.symbol(operand)))
        .map_or_else(
            || symbol.to_string(),
            |formula| format!("{symbol} = {formula}"),
        );
    let gloss = caption.strip_prefix(&plain).unwrap_or("");
    let in_head =
        formula_in(attention, matrix, head).unwrap_or_else(|| attention.symbol_in(matrix, head));
    format!("{in_head}{gloss}")
}
