//! The built-in lessons, embedded in the binary so the tutor works with no files around.
//! Their sources live in `lessons/` as examples for lesson writers.

/// One built-in lesson: its name on the command line and its file text.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    pub name: &'static str,
    pub text: &'static str,
}

/// In the order of the source documents, then our own lessons: the causal mask, then positions
/// (format 2), then heads (format 2), then cross-attention (format 2), then generation with a
/// K/V cache (format 2), then the backward pass (format 2), then a trained model's induction head
/// (format 2, imported from `models/induction`).
pub const BUILTIN: [Builtin; 14] = [
    Builtin {
        name: "cat-sleeps",
        text: include_str!("../../../lessons/cat-sleeps.toml"),
    },
    Builtin {
        name: "numpy-walkthrough",
        text: include_str!("../../../lessons/numpy-walkthrough.toml"),
    },
    Builtin {
        name: "cat-sat-mat",
        text: include_str!("../../../lessons/cat-sat-mat.toml"),
    },
    Builtin {
        name: "random-qkv",
        text: include_str!("../../../lessons/random-qkv.toml"),
    },
    Builtin {
        name: "identity-2x2",
        text: include_str!("../../../lessons/identity-2x2.toml"),
    },
    Builtin {
        name: "causal-cat-sat-mat",
        text: include_str!("../../../lessons/causal-cat-sat-mat.toml"),
    },
    Builtin {
        name: "positions-cat-sat-mat",
        text: include_str!("../../../lessons/positions-cat-sat-mat.toml"),
    },
    Builtin {
        name: "rope-same-distance",
        text: include_str!("../../../lessons/rope-same-distance.toml"),
    },
    Builtin {
        name: "two-heads",
        text: include_str!("../../../lessons/two-heads.toml"),
    },
    Builtin {
        name: "gqa",
        text: include_str!("../../../lessons/gqa.toml"),
    },
    Builtin {
        name: "translation",
        text: include_str!("../../../lessons/translation.toml"),
    },
    Builtin {
        name: "generation",
        text: include_str!("../../../lessons/generation.toml"),
    },
    Builtin {
        name: "backward",
        text: include_str!("../../../lessons/backward.toml"),
    },
    Builtin {
        name: "induction",
        text: include_str!("../../../lessons/induction.toml"),
    },
];

pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTIN.iter().find(|lesson| lesson.name == name)
}
