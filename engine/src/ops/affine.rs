//! A projection with its bias: left · right + b, the bias added to every row (Q = X̂·W_q + b_q,
//! the output's concat·W_o + b_o), as a checkpoint's linear layers with `bias=True` do.

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Product, Rule, Site, Variant};
use crate::matrices::MatrixName;

/// `product`, with the 1 × n vector `bias` added to each of its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Affine {
    pub product: Product,
    pub bias: MatrixName,
}

impl Operation for Affine {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.product.left, self.product.right, self.bias]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        let product = self.product.formula(symbol)?;
        Some(format!("{product} + {}", symbol(self.bias)))
    }

    fn slips(&self) -> &'static [Variant] {
        // Its product's slips, and leaving the bias out.
        const SLIPS: [Variant; 4] = [
            Variant::NoBias,
            Variant::RowNotColumn,
            Variant::WrongGroup,
            Variant::TargetNotSource,
        ];
        &SLIPS
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let product_slip = slip.filter(|slip| *slip != Variant::NoBias);
        let mut result = self.product.evaluate(operands, product_slip);
        if slip == Some(Variant::NoBias) || result.is_empty() {
            return result;
        }
        let bias = operands.view(self.bias);
        if bias.nrows() != 1 || bias.ncols() != result.ncols() {
            return DMatrix::zeros(0, 0);
        }
        for mut row in result.row_iter_mut() {
            row += &bias;
        }
        result
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let Some(Rule::Dot(mut dot)) = self.product.derive(site) else {
            return None;
        };
        dot.bias = Some(site.operand(self.bias, 0, site.cell.col)?);
        Some(Rule::Dot(dot))
    }
}
