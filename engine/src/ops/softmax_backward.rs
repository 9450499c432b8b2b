//! The softmax's backward pass, row by row: dS = P ⊙ (dP − rowsum(P ⊙ dP)).

use nalgebra::DMatrix;

use super::Operation;
use super::kernels::softmax_backward;
use super::{BackwardRule, Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings::backward;

/// Softmax backward, row by row: weights ⊙ (grad − rowsum(weights ⊙ grad)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SoftmaxBackward {
    pub weights: MatrixName,
    pub grad: MatrixName,
}

impl Operation for SoftmaxBackward {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.weights, self.grad]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        let (p, d) = (symbol(self.weights), symbol(self.grad));
        // avg: each row's Σ p·d, the row's average gradient (the working defines it).
        Some(format!("{p} ⊙ ({d} − avg)"))
    }

    fn slips(&self) -> &'static [Variant] {
        &[Variant::DiagonalOnly]
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let (p, d) = (operands.get(self.weights), operands.get(self.grad));
        if p.shape() != d.shape() {
            return DMatrix::zeros(0, 0);
        }
        if slip == Some(Variant::DiagonalOnly) {
            return p.component_mul(d);
        }
        softmax_backward(p, d)
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (head, row, col) = (site.cell.head, site.cell.row, site.cell.col);
        let keys = site.cells.matrix_in(self.weights, head)?.ncols();
        Some(Rule::Backward(BackwardRule::SoftmaxBackward(
            backward::SoftmaxBackward {
                weight: site.operand_of(self.weights, head, row, col)?,
                grad: site.operand_of(self.grad, head, row, col)?,
                row: (0..keys)
                    .map(|key| {
                        Some((
                            site.operand_of(self.weights, head, row, key)?,
                            site.operand_of(self.grad, head, row, key)?,
                        ))
                    })
                    .collect::<Option<_>>()?,
            },
        )))
    }
}
