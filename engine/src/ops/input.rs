//! The lesson's own numbers: an input typed, generated or edited, and a matrix that is usually
//! computed but that the lesson gives (Q, K, V without embeddings).

use nalgebra::DMatrix;

use super::Operation;
use super::{Operands, Rule, Site, Variant};
use crate::matrices::MatrixName;

/// Numbers of the lesson itself (typed, generated, or edited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input;

/// A matrix that is usually computed but that this lesson gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Given;

/// Both are the lesson's numbers: nothing to compute, and each cell its own working.
macro_rules! lesson_numbers {
    ($name:ident) => {
        impl Operation for $name {
            fn operands(&self) -> Vec<MatrixName> {
                Vec::new()
            }

            fn formula(&self, _: &dyn Fn(MatrixName) -> String) -> Option<String> {
                None
            }

            fn slips(&self) -> &'static [Variant] {
                &[]
            }

            fn evaluate(&self, _: &Operands, _: Option<Variant>) -> DMatrix<f64> {
                DMatrix::zeros(0, 0)
            }

            fn derive(&self, _: &Site) -> Option<Rule> {
                Some(Rule::Input(crate::workings::Input))
            }
        }
    };
}

lesson_numbers!(Input);
lesson_numbers!(Given);
