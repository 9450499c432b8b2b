//! Sinusoidal position encodings (Vaswani et al.): column 2i of row p is sin(p / 10000^(2i/d)),
//! column 2i + 1 its cos.

use nalgebra::DMatrix;

use super::Operation;
use super::kernels::{sinusoid_angle, sinusoidal_as};
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;
use crate::workings;

/// Sinusoidal position encodings: sin or cos of p / 10000^(2i/d_model).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sinusoid;

impl Operation for Sinusoid {
    fn operands(&self) -> Vec<MatrixName> {
        Vec::new()
    }

    // Too long for a caption; its working gives it per cell.
    fn formula(&self, _: &dyn Fn(MatrixName) -> String) -> Option<String> {
        None
    }

    fn slips(&self) -> &'static [Variant] {
        &[
            Variant::SinCosSwapped,
            Variant::PositionsFromOne,
            Variant::ExponentByColumn,
        ]
    }

    fn evaluate(&self, operands: &Operands, slip: Option<Variant>) -> DMatrix<f64> {
        let (rows, cols) = operands.size;
        sinusoidal_as(rows, cols, slip)
    }

    fn derive(&self, site: &Site) -> Option<Rule> {
        let (row, col) = (site.cell.row, site.cell.col);
        let pair = col / 2;
        Some(Rule::Sinusoid(workings::Sinusoid {
            position: row,
            pair,
            d_model: site.width,
            angle: sinusoid_angle(row, pair, site.width),
            cosine: col % 2 == 1,
        }))
    }
}
