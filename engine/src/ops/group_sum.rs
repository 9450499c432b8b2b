//! A K/V group's gradient: the sum of its query heads' gradients, since every head of the
//! group read the same keys and values.

use nalgebra::DMatrix;

use super::Operation;
use super::{BackwardRule, Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings::backward;

/// A K/V group's gradient: the sum of its query heads' matrices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupSum {
    pub of: MatrixName,
}

impl Operation for GroupSum {
    fn operands(&self) -> Vec<MatrixName> {
        vec![self.of]
    }

    fn formula(&self, symbol: &dyn Fn(MatrixName) -> String) -> Option<String> {
        Some(format!("Σ {} over the group's heads", symbol(self.of)))
    }

    fn slips(&self) -> &'static [Variant] {
        &[]
    }

    fn evaluate(&self, operands: &Operands, _: Option<Variant>) -> DMatrix<f64> {
        let group = operands.heads.group_of(operands.head);
        let mut sum: Option<DMatrix<f64>> = None;
        for head in (0..operands.heads.query).filter(|head| operands.heads.group_of(*head) == group)
        {
            let matrix = operands.of_head(self.of, head);
            match &mut sum {
                Some(sum) if sum.shape() == matrix.shape() => *sum += matrix,
                Some(_) => return DMatrix::zeros(0, 0),
                None => sum = Some(matrix.clone()),
            }
        }
        sum.unwrap_or_else(|| DMatrix::zeros(0, 0))
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (head, row, col) = (site.cell.head, site.cell.row, site.cell.col);
        let heads = site.cells.heads();
        let group = heads.group_of(head);
        Some(Rule::Backward(BackwardRule::Sum(backward::Sum {
            terms: (0..heads.query)
                .filter(|member| heads.group_of(*member) == group)
                .map(|member| site.operand_of(self.of, member, row, col))
                .collect::<Option<_>>()?,
            of: backward::Summed::GroupHeads,
        })))
    }
}
