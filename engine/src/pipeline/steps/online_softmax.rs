//! The online softmax: the same output made one tile of keys at a time, as FlashAttention
//! does it, keeping per query row only m, l and acc.

use crate::ops;
use crate::pipeline::{Header, MatrixName, Op, Step, StepEntry, View};

pub(crate) const ENTRY: StepEntry = StepEntry {
    step: Step::OnlineSoftmax,
    key: "online_softmax",
    title: "Online softmax",
    narration: |_| {
        "The same output, computed the way FlashAttention-2 does it (Dao 2023): the keys \
         are read one tile of B at a time, and each query row keeps only m, its largest score \
         so far; l, the sum of e^(s − m) over the keys so far; and acc, the sum of e^(s − m)·v. \
         When a tile holds a score larger than m, m rises, and the old l and acc are multiplied by \
         rescale = e^(m_old − m), which makes them sums against the new m. After the last tile, \
         acc / l is the output row, divided once at the end (the first FlashAttention, Dao et \
         al. 2022, divided the output at every tile instead; a row whose every key is masked \
         ends with l = 0: its output is 0). Each tile's scores are used and dropped: the whole matrix of scores is never \
         stored, and each query row holds B scores at a time, however many keys there are.".into()
    },
    shown: |plan| plan.has(MatrixName::OnlineMax),
    note: |_| None,
    enable: None,
    absent: |_| None,
    views: |plan| {
        // The softmax's input the tiles read, then the state after the tile: m, the factor and
        // l on one view, acc with the values it sums on the other (all six do not fit 80
        // columns).
        let Some(Op::Online(ops::Online { scores, values, .. })) =
            plan.origin(MatrixName::OnlineMax)
        else {
            return Vec::new();
        };
        vec![
            View {
                result: MatrixName::OnlineMax,
                panels: vec![
                    scores,
                    MatrixName::OnlineMax,
                    MatrixName::OnlineRescale,
                    MatrixName::OnlineSum,
                ],
            },
            View {
                result: MatrixName::OnlineAcc,
                panels: vec![
                    scores,
                    values,
                    MatrixName::OnlineRescale,
                    MatrixName::OnlineAcc,
                ],
            },
        ]
    },
    header: Header::Online,
};
