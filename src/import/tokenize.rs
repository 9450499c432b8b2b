//! The learner's text as the model's tokens: ids by the checkpoint's own `tokenizer.json`, or by
//! GPT-2's BPE built in (r50k_base) for a GPT-2 without one; and each token's label, the piece
//! of text it stands for as a learner can read it.

use std::path::{Path, PathBuf};

use tokenizers::{
    DecoderWrapper, OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer, Tokenizer,
};

use crate::lesson::text::{fit, printable};

/// Widest token label a lesson takes, in columns.
const LABEL_COLUMNS: usize = 16;

/// A visible leading space: byte-level BPE folds the space before a word into its token.
const SPACE: char = '␣';

/// What turns text into the model's token ids.
pub(crate) enum Vocabulary {
    /// The checkpoint's `tokenizer.json`.
    File {
        tokenizer: Box<Tokenizer>,
        /// Where it was read from, for the messages about it.
        file: PathBuf,
        /// Whether its pieces are byte-level (GPT-2, Llama 3, Qwen2: each byte a printable
        /// character) rather than sentencepiece's (`▁` for a space, `<0xNN>` for a byte).
        byte_level: bool,
    },
    /// GPT-2's own BPE, built in: a GPT-2 checkpoint without a tokenizer.json.
    Gpt2,
}

/// The tokens of a text: ids and labels, one each.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Tokens {
    pub ids: Vec<u64>,
    pub labels: Vec<String>,
}

/// Why a tokenizer could not be used.
#[derive(Debug)]
pub(crate) struct TokenizerError {
    pub file: PathBuf,
    pub why: String,
    /// Whether the text is what is wrong (words the model has no token for), not the file.
    pub in_text: bool,
}

/// The most words of a vocabulary a message lists: a trained model's symbols, not a real
/// model's tens of thousands of pieces.
const LISTED_WORDS: usize = 40;

impl Vocabulary {
    /// The tokenizer of the checkpoint in `folder`: its `tokenizer.json` when it has one, else
    /// GPT-2's BPE when `gpt2` (a GPT-2 checkpoint), else `None`.
    pub(crate) fn of(folder: &Path, gpt2: bool) -> Result<Option<Vocabulary>, TokenizerError> {
        let file = folder.join("tokenizer.json");
        if !file.is_file() {
            return Ok(gpt2.then_some(Vocabulary::Gpt2));
        }
        // The tokenizers crate reads a file anyone may have written; whatever it does with a
        // strange one, the learner gets a message, not a crash.
        let read = std::panic::catch_unwind(|| Tokenizer::from_file(&file));
        let tokenizer = match read {
            Ok(Ok(tokenizer)) => tokenizer,
            Ok(Err(error)) => {
                return Err(TokenizerError {
                    file,
                    why: printable(&error.to_string()),
                    in_text: false,
                });
            }
            Err(_) => {
                return Err(TokenizerError {
                    file,
                    why: "the tokenizers library could not read it".to_string(),
                    in_text: false,
                });
            }
        };
        let byte_level = is_byte_level(tokenizer.get_decoder());
        Ok(Some(Vocabulary::File {
            tokenizer: Box::new(tokenizer),
            file,
            byte_level,
        }))
    }

    /// Whether this is GPT-2's BPE built in (for the lesson's source line).
    pub(crate) fn is_builtin_gpt2(&self) -> bool {
        matches!(self, Vocabulary::Gpt2)
    }

    /// The ids of `text` with no special tokens added (`--bos` adds the one asked for).
    pub(crate) fn encode(&self, text: &str) -> Result<Vec<u64>, TokenizerError> {
        match self {
            Vocabulary::Gpt2 => Ok(tiktoken_rs::r50k_base_singleton()
                .encode_ordinary(text)
                .into_iter()
                .map(u64::from)
                .collect()),
            Vocabulary::File {
                tokenizer, file, ..
            } => {
                let encoded = std::panic::catch_unwind(|| tokenizer.encode(text, false));
                match encoded {
                    Ok(Ok(encoding)) => {
                        Ok(encoding.get_ids().iter().map(|&id| id.into()).collect())
                    }
                    // A word-level vocabulary without an unknown token (a trained model's
                    // symbols) fails on any word it lacks, saying only "Missing [UNK] token":
                    // the learner is told which words, and which the model reads.
                    Ok(Err(error)) => Err(match unknown_words(tokenizer, text) {
                        Some(words) => TokenizerError {
                            file: file.clone(),
                            why: unknown_words_message(tokenizer, &words),
                            in_text: true,
                        },
                        None => TokenizerError {
                            file: file.clone(),
                            why: printable(&error.to_string()),
                            in_text: false,
                        },
                    }),
                    Err(_) => Err(TokenizerError {
                        file: file.clone(),
                        why: "the tokenizers library could not encode the text with it".to_string(),
                        in_text: false,
                    }),
                }
            }
        }
    }

    /// The bytes of text token `id` stands for, as far as the vocabulary knows it; `None` for an
    /// id it has no piece for.
    pub(crate) fn bytes_of(&self, id: u64) -> Option<Vec<u8>> {
        let id = u32::try_from(id).ok()?;
        match self {
            Vocabulary::Gpt2 => tiktoken_rs::r50k_base_singleton().decode_bytes(&[id]).ok(),
            Vocabulary::File {
                tokenizer,
                byte_level,
                ..
            } => {
                let piece = tokenizer.id_to_token(id)?;
                Some(if *byte_level {
                    byte_level_bytes(&piece)
                } else {
                    sentencepiece_bytes(&piece)
                })
            }
        }
    }

    /// The labels of `ids`: each token's piece, its leading space shown as `␣`, a piece that is
    /// not whole UTF-8 shown by its bytes, at most 16 columns.
    pub(crate) fn labels(&self, ids: &[u64]) -> Vec<String> {
        ids.iter()
            .map(|&id| match self.bytes_of(id) {
                // A piece of no text (a special token decoded to nothing) is named by its id.
                Some(bytes) if !bytes.is_empty() => label(&bytes),
                _ => format!("#{id}"),
            })
            .collect()
    }
}

/// The words of `text`, as the tokenizer splits it before looking them up, that are not in its
/// vocabulary, each once; `None` when it has none such (the failure was something else).
fn unknown_words(tokenizer: &Tokenizer, text: &str) -> Option<Vec<String>> {
    let mut pieces = PreTokenizedString::from(text);
    if let Some(pre_tokenizer) = tokenizer.get_pre_tokenizer() {
        pre_tokenizer.pre_tokenize(&mut pieces).ok()?;
    }
    let mut unknown: Vec<String> = Vec::new();
    for (word, _, _) in pieces.get_splits(OffsetReferential::Original, OffsetType::Byte) {
        if tokenizer.token_to_id(word).is_none() && !unknown.iter().any(|seen| seen == word) {
            unknown.push(word.to_string());
        }
    }
    (!unknown.is_empty()).then_some(unknown)
}

/// `"Z" and "a" are not words of this model; it reads A B C …, separated by spaces`.
fn unknown_words_message(tokenizer: &Tokenizer, words: &[String]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|word| format!("\"{}\"", printable(word)))
        .collect();
    let named = match quoted.split_last() {
        Some((last, [])) => format!("{last} is not a word"),
        Some((last, rest)) => format!("{} and {last} are not words", rest.join(", ")),
        None => String::new(),
    };
    let mut vocabulary: Vec<(String, u32)> = tokenizer.get_vocab(false).into_iter().collect();
    vocabulary.sort_by_key(|(_, id)| *id);
    if vocabulary.len() <= LISTED_WORDS {
        let words: Vec<String> = vocabulary.iter().map(|(word, _)| printable(word)).collect();
        format!(
            "{named} of this model; it reads {}, separated by spaces",
            words.join(" ")
        )
    } else {
        format!(
            "{named} of this model's vocabulary ({} words)",
            vocabulary.len()
        )
    }
}

/// Whether a tokenizer's decoder turns byte-level pieces back into bytes.
fn is_byte_level(decoder: Option<&DecoderWrapper>) -> bool {
    match decoder {
        Some(DecoderWrapper::ByteLevel(_)) => true,
        Some(DecoderWrapper::Sequence(sequence)) => sequence
            .get_decoders()
            .iter()
            .any(|decoder| matches!(decoder, DecoderWrapper::ByteLevel(_))),
        _ => false,
    }
}

/// GPT-2's byte-level alphabet read backwards: each of its 256 characters stands for one byte
/// (printable bytes for themselves, the others for 256 + their rank among the unprintable).
fn byte_level_bytes(piece: &str) -> Vec<u8> {
    piece
        .chars()
        .map(|ch| byte_of_char(ch).unwrap_or(b'?'))
        .collect()
}

fn byte_of_char(ch: char) -> Option<u8> {
    let printable = |byte: u8| matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let code = u32::from(ch);
    if code < 256 && printable(code as u8) {
        return Some(code as u8);
    }
    // The unprintable bytes, in order, are 256, 257, …
    let rank = code.checked_sub(256)?;
    (0..=255u8)
        .filter(|byte| !printable(*byte))
        .nth(rank as usize)
}

/// A sentencepiece piece's bytes: `▁` is a space, and `<0xNN>` one byte (byte fallback).
fn sentencepiece_bytes(piece: &str) -> Vec<u8> {
    if let Some(hex) = piece
        .strip_prefix("<0x")
        .and_then(|rest| rest.strip_suffix('>'))
        && hex.len() == 2
        && let Ok(byte) = u8::from_str_radix(hex, 16)
    {
        return vec![byte];
    }
    piece.replace('▁', " ").into_bytes()
}

/// A token's label from its bytes.
pub(crate) fn label(bytes: &[u8]) -> String {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => {
            let visible = if text.chars().all(|ch| ch == ' ') {
                // Spaces only (indentation): each shown.
                text.replace(' ', &SPACE.to_string())
            } else {
                match text.strip_prefix(' ') {
                    Some(rest) => format!("{SPACE}{rest}"),
                    None => text.to_string(),
                }
            };
            printable(&visible.replace('\n', "⏎"))
        }
        // Part of a character (byte-level BPE splits rare characters): its bytes.
        Err(_) => bytes.iter().map(|byte| format!("\\x{byte:02x}")).collect(),
    };
    fit(&text, LABEL_COLUMNS)
}

impl Tokens {
    /// `text` tokenized, after the beginning-of-sequence token `bos` when one is asked for.
    pub(crate) fn of(
        vocabulary: &Vocabulary,
        text: &str,
        bos: Option<u64>,
    ) -> Result<Tokens, TokenizerError> {
        let mut ids: Vec<u64> = bos.into_iter().collect();
        ids.extend(vocabulary.encode(text)?);
        let labels = vocabulary.labels(&ids);
        Ok(Tokens { ids, labels })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lesson::text::columns;

    #[test]
    fn gpt2s_bpe_gives_the_published_ids_and_labels_with_the_space_shown() {
        let tokens = Tokens::of(&Vocabulary::Gpt2, "The cat sleeps", None).unwrap();
        assert_eq!(tokens.ids, [464, 3797, 44263]);
        assert_eq!(tokens.labels, ["The", "␣cat", "␣sleeps"]);
    }

    #[test]
    fn gpt2s_bpe_gives_the_ids_hugging_faces_gpt2_tokenizer_gives() {
        let ids = |text: &str| Vocabulary::Gpt2.encode(text).unwrap();
        assert_eq!(ids("Hello world"), [15496, 995]);
        // " the" 262, "," 11, " a" 257, " and" 290, " to" 284, "." 13.
        assert_eq!(ids(" the, a and to."), [262, 11, 257, 290, 284, 13]);
    }

    #[test]
    fn a_piece_that_is_part_of_a_character_is_shown_by_its_bytes() {
        assert_eq!(label(&[0xe2, 0x80]), "\\xe2\\x80");
        assert_eq!(label(b"\n"), "⏎");
        assert_eq!(label(b"  "), "␣␣");
        assert_eq!(label("\u{1b}]2;x".as_bytes()), "\\u{001b}]2;x");
        assert_eq!(columns(&label(&[b'a'; 40])), LABEL_COLUMNS);
    }

    #[test]
    fn the_byte_level_alphabet_reads_back_every_byte() {
        // Ġ (U+0120) is the space, Ċ (U+010A) the line feed.
        assert_eq!(byte_level_bytes("Ġcat"), b" cat");
        assert_eq!(byte_level_bytes("Ċ"), b"\n");
        assert_eq!(byte_of_char('!'), Some(b'!'));
        assert_eq!(byte_of_char('\u{100}'), Some(0));
        assert_eq!(sentencepiece_bytes("▁cat"), b" cat");
        assert_eq!(sentencepiece_bytes("<0xE2>"), [0xe2]);
    }
}
