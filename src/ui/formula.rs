//! A matrix's formula written in one head's symbols (`scores⁽²⁾ = Q⁽²⁾·K⁽²⁾ᵀ`), from the
//! plan's operation, so that a header says of a head what is true of it.

use crate::attention::{Attention, MatrixName};
use crate::ops;
use crate::pipeline::Op;

/// `name`'s symbol in head `head`, `=`, and its operation written in that head's symbols;
/// `None` for a lesson's own numbers.
pub(crate) fn formula_in(attention: &Attention, name: MatrixName, head: usize) -> Option<String> {
    let origin = attention.plan.origin(name)?;
    // Every head's matrix side by side: named block by block, not in one head's symbols.
    if let Op::Concat(ops::Concat { of }) = origin {
        let heads = attention.heads().query;
        let block = |head: usize| attention.symbol_in(of, head);
        let blocks = match heads {
            0 | 1 => block(0),
            2 | 3 => (0..heads).map(block).collect::<Vec<_>>().join(" | "),
            _ => format!("{} | {} | … | {}", block(0), block(1), block(heads - 1)),
        };
        return Some(format!("{} = [{blocks}]", attention.symbol_in(name, head)));
    }
    // A sum over every head (or group): its terms in the symbols of head h, not of one head.
    if let Op::HeadsProduct(ops::HeadsProduct { left, right }) = origin {
        // A K/V group's gradient is summed over the groups, g, as the header names them.
        let (sum, mark) = match left.per() {
            crate::pipeline::Per::KvGroup if attention.heads().kv > 1 => ("Σ_g ", "⁽ᵍ⁾"),
            crate::pipeline::Per::KvGroup => ("", ""),
            _ if attention.heads().query > 1 => ("Σ_h ", "⁽ʰ⁾"),
            _ => ("", ""),
        };
        return Some(format!(
            "{} = {sum}{}{mark}·{}{mark}ᵀ",
            attention.symbol_in(name, head),
            attention.plan.symbol(left),
            attention.plan.symbol(right)
        ));
    }
    let formula = origin.formula(|operand| attention.symbol_in(operand, head))?;
    Some(format!("{} = {formula}", attention.symbol_in(name, head)))
}

/// A matrix's caption as the plan writes it (`symbol = formula (gloss)`), in head `head`'s
/// symbols when the lesson has several heads (`scores⁽²⁾ = Q⁽²⁾·K⁽²⁾ᵀ`): the tutor's panels
/// and `show`'s tables say the same.
pub fn caption_in(attention: &Attention, matrix: MatrixName, head: usize) -> String {
    let equation =
        formula_in(attention, matrix, head).unwrap_or_else(|| attention.symbol_in(matrix, head));
    attention.plan.captioned(equation, matrix)
}

/// `caption_in`, saying whose a K/V group's matrix is under grouped or multi-query attention
/// (`K⁽²⁾ = X·W_k⁽²⁾ (keys; K/V group 2, shared by heads 3 and 4)`), so that K⁽²⁾ in head 3's
/// section of `show` is not read as head 2's. The tutor's header says the group instead, and
/// its panels keep the short caption that fits 80 columns.
pub(crate) fn caption_with_group(attention: &Attention, matrix: MatrixName, head: usize) -> String {
    let caption = caption_in(attention, matrix, head);
    let heads = attention.heads();
    if matrix.per() != crate::pipeline::Per::KvGroup || heads.kv >= heads.query {
        return caption;
    }
    let group = heads.group_of(head);
    let shared = if heads.kv == 1 {
        format!("the one K/V group, shared by all {} heads", heads.query)
    } else {
        let first = heads.first_of_group(group) + 1;
        let last = first + heads.query / heads.kv - 1;
        let members = if last == first + 1 {
            format!("heads {first} and {last}")
        } else {
            format!("heads {first}–{last}")
        };
        format!("K/V group {}, shared by {members}", group + 1)
    };
    match caption.strip_suffix(')') {
        Some(open) => format!("{open}; {shared})"),
        None => format!("{caption} ({shared})"),
    }
}
