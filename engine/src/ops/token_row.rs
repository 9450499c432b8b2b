//! Generation: the row of a matrix of the whole pass for the token being generated (its row of
//! X, or of the given Q, K, V).

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// Generation: the row of `of` for the token at position t, the one being generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenRow {
    pub of: MatrixName,
}

impl Operation for TokenRow {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("{}[t, :]", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        let (whole, token) = (operands.get(self.of), operands.position());
        if token < whole.nrows() {
            whole.rows(token, 1).into_owned()
        } else {
            DMatrix::zeros(0, 0)
        }
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        Some(Rule::TokenRow(workings::TokenRow {
            from: site.operand(self.of, site.cell.token, site.cell.col)?,
        }))
    }
}
