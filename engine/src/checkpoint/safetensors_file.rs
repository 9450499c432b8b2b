//! One safetensors file: its header read and checked when it is opened, then one tensor's
//! numbers read at a time, by a seek to its bytes.
//!
//! The file is read, not memory-mapped: mapping a file is `unsafe` in Rust (another process may
//! change the file under the map), and the workspace forbids unsafe code. A layer needs a few
//! tensors of a checkpoint, so reading just their bytes costs what a map would.

use std::fs::File;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use nalgebra::DMatrix;
use safetensors::tensor::{Dtype, Metadata, TensorInfo};
use serde_json::Value;

use super::error::CheckpointError;

/// The bytes before the header that give its length (a little-endian u64).
const LENGTH_BYTES: u64 = 8;

/// The largest header read, the bound the safetensors crate itself sets: a header longer than
/// this is a corrupt length, and it is refused before anything that size is allocated.
const MAX_HEADER_BYTES: u64 = 100_000_000;

/// A safetensors file whose header has been read.
#[derive(Debug)]
pub(crate) struct SafetensorsFile {
    path: PathBuf,
    /// Where the tensors' bytes start: data offsets count from here.
    data_start: u64,
    metadata: Metadata,
}

impl SafetensorsFile {
    /// Reads and checks the header of the safetensors file at `path`: that it is a
    /// safetensors header and that the file holds every byte it promises.
    pub(crate) fn open(path: &Path) -> Result<SafetensorsFile, CheckpointError> {
        let io = |error| CheckpointError::io(path, error);
        let truncated = |why: String| CheckpointError::Truncated {
            file: path.to_path_buf(),
            why,
        };
        let corrupt = |why: String| CheckpointError::CorruptHeader {
            file: path.to_path_buf(),
            why,
        };
        let mut file = File::open(path).map_err(io)?;
        let file_bytes = file.metadata().map_err(io)?.len();
        if file_bytes < LENGTH_BYTES {
            return Err(truncated(format!(
                "it is {file_bytes} bytes, shorter than the {LENGTH_BYTES}-byte header length \
                 every safetensors file starts with"
            )));
        }
        let mut length = [0u8; LENGTH_BYTES as usize];
        file.read_exact(&mut length).map_err(io)?;
        let header_bytes = u64::from_le_bytes(length);
        if header_bytes > MAX_HEADER_BYTES {
            return Err(corrupt(format!(
                "its first 8 bytes give a header of {header_bytes} bytes, more than the \
                 {MAX_HEADER_BYTES} a header may be"
            )));
        }
        let data_start = LENGTH_BYTES + header_bytes;
        if data_start > file_bytes {
            return Err(truncated(format!(
                "its header should be {header_bytes} bytes, but only {} follow its length",
                file_bytes - LENGTH_BYTES
            )));
        }
        // Bounded above: at most MAX_HEADER_BYTES.
        let mut header = vec![0u8; header_bytes as usize];
        file.read_exact(&mut header).map_err(io)?;
        let value: Value = serde_json::from_slice(&header)
            .map_err(|error| corrupt(format!("its header is not JSON: {error}")))?;
        refuse_unknown_dtypes(path, &value)?;
        let metadata: Metadata = serde_json::from_value(value)
            .map_err(|error| corrupt(format!("its header is not a safetensors header: {error}")))?;
        // The crate has checked that the tensors' offsets follow each other from 0 and that
        // each covers its shape's bytes, so the last offset is the bytes the data must hold.
        let data_bytes = u64::try_from(metadata.data_len()).unwrap_or(u64::MAX);
        let held = file_bytes - data_start;
        if data_bytes > held {
            return Err(truncated(format!(
                "its tensors' data offsets run to byte {data_bytes} after the header, but only \
                 {held} bytes follow it"
            )));
        }
        if data_bytes < held {
            return Err(corrupt(format!(
                "its tensors' data offsets end at byte {data_bytes} after the header, but \
                 {held} bytes follow it"
            )));
        }
        Ok(SafetensorsFile {
            path: path.to_path_buf(),
            data_start,
            metadata,
        })
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.metadata.info(name).is_some()
    }

    pub(crate) fn names(&self) -> impl Iterator<Item = String> {
        self.metadata.tensors().into_keys()
    }

    /// The tensor `name` of shape `shape`, its numbers as f64 in the order the file stores them
    /// (row-major): a 2-D `[r, c]` tensor is an r×c matrix, a 1-D `[n]` one a 1×n row.
    pub(crate) fn read(
        &self,
        name: &str,
        shape: &[usize],
    ) -> Result<DMatrix<f64>, CheckpointError> {
        let (info, width) = self.checked(name, shape)?;
        // checked() let through only [n] (one row) and [rows, columns].
        let (rows, columns) = match *shape {
            [rows, columns] => (rows, columns),
            _ => (1, shape.iter().product()),
        };
        let mut file = self.file()?;
        let (start, end) = info.data_offsets;
        // The crate checked end - start = the shape's elements × the dtype's bytes.
        let numbers = self.numbers(&mut file, name, info.dtype, width, start, end - start)?;
        self.finite(name, &numbers, columns, 0)?;
        Ok(from_rows(rows, columns, &numbers))
    }

    /// The rows `wanted` of the matrix `name` of shape `shape`, in that order, each read by a
    /// seek to it: the rows of a large embedding that a text's tokens pick.
    pub(crate) fn read_rows(
        &self,
        name: &str,
        shape: [usize; 2],
        wanted: &[usize],
    ) -> Result<DMatrix<f64>, CheckpointError> {
        let (info, width) = self.checked(name, &shape)?;
        let [rows, columns] = shape;
        // The crate counted the whole tensor's bytes in a usize, but with 0 rows a row's bytes
        // were never counted.
        let row_bytes = columns
            .checked_mul(width)
            .ok_or_else(|| CheckpointError::WrongShape {
                file: self.path.clone(),
                tensor: name.to_string(),
                found: info.shape.clone(),
                wanted: shape.to_vec(),
            })?;
        let mut file = self.file()?;
        let mut numbers = Vec::with_capacity(wanted.len().saturating_mul(columns));
        for &row in wanted {
            if row >= rows {
                return Err(CheckpointError::RowOutOfRange {
                    file: self.path.clone(),
                    tensor: name.to_string(),
                    row,
                    rows,
                });
            }
            let start = info.data_offsets.0 + row * row_bytes;
            let read = self.numbers(&mut file, name, info.dtype, width, start, row_bytes)?;
            self.finite(name, &read, columns, row)?;
            numbers.extend(read);
        }
        Ok(DMatrix::from_row_slice(wanted.len(), columns, &numbers))
    }

    /// The tensor's header entry and its dtype's bytes a number, once its shape is the one
    /// wanted (a vector or a matrix) and its dtype one that is read.
    fn checked(
        &self,
        name: &str,
        shape: &[usize],
    ) -> Result<(&TensorInfo, usize), CheckpointError> {
        let info = self
            .metadata
            .info(name)
            .ok_or_else(|| CheckpointError::MissingTensor {
                file: self.path.clone(),
                tensor: name.to_string(),
            })?;
        if info.shape != shape || !matches!(shape.len(), 1 | 2) {
            return Err(CheckpointError::WrongShape {
                file: self.path.clone(),
                tensor: name.to_string(),
                found: info.shape.clone(),
                wanted: shape.to_vec(),
            });
        }
        let width = match info.dtype {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::BF16 => 2,
            other => {
                return Err(CheckpointError::UnsupportedDtype {
                    file: self.path.clone(),
                    tensor: name.to_string(),
                    dtype: other.to_string(),
                });
            }
        };
        Ok((info, width))
    }

    fn file(&self) -> Result<File, CheckpointError> {
        File::open(&self.path).map_err(|error| CheckpointError::io(&self.path, error))
    }

    /// `length` bytes from `start` (counted from the data's start) as f64 numbers.
    fn numbers(
        &self,
        file: &mut File,
        name: &str,
        dtype: Dtype,
        width: usize,
        start: usize,
        length: usize,
    ) -> Result<Vec<f64>, CheckpointError> {
        let mut bytes = vec![0u8; length];
        let offset = u64::try_from(start)
            .ok()
            .and_then(|start| self.data_start.checked_add(start))
            .unwrap_or(u64::MAX);
        file.seek(SeekFrom::Start(offset))
            .and_then(|_| file.read_exact(&mut bytes))
            .map_err(|error| {
                if error.kind() == std::io::ErrorKind::UnexpectedEof {
                    // The file was cut short after its header was read.
                    CheckpointError::Truncated {
                        file: self.path.clone(),
                        why: format!("tensor `{name}`'s bytes run past the end of the file"),
                    }
                } else {
                    CheckpointError::io(&self.path, error)
                }
            })?;
        // The dtype is matched once, not for each number: a block's weights are millions.
        let chunks = bytes.chunks_exact(width);
        Ok(match dtype {
            Dtype::F32 => chunks
                .map(|chunk| match *chunk {
                    [a, b, c, d] => f64::from(f32::from_le_bytes([a, b, c, d])),
                    _ => f64::NAN,
                })
                .collect(),
            Dtype::F16 => chunks
                .map(|chunk| match *chunk {
                    [a, b] => half::f16::from_le_bytes([a, b]).to_f64(),
                    _ => f64::NAN,
                })
                .collect(),
            Dtype::BF16 => chunks
                .map(|chunk| match *chunk {
                    [a, b] => half::bf16::from_le_bytes([a, b]).to_f64(),
                    _ => f64::NAN,
                })
                .collect(),
            _ => vec![f64::NAN; bytes.len() / width.max(1)],
        })
    }

    /// A NaN or infinite weight refused, at its place: `numbers` are rows of `columns` from
    /// row `first_row` (a vector is one row).
    fn finite(
        &self,
        name: &str,
        numbers: &[f64],
        columns: usize,
        first_row: usize,
    ) -> Result<(), CheckpointError> {
        let Some(index) = numbers.iter().position(|number| !number.is_finite()) else {
            return Ok(());
        };
        let at = match self.metadata.info(name).map(|info| info.shape.len()) {
            Some(1) => vec![index],
            _ => vec![first_row + index / columns.max(1), index % columns.max(1)],
        };
        Err(CheckpointError::NotFinite {
            file: self.path.clone(),
            tensor: name.to_string(),
            value: numbers[index],
            at,
        })
    }
}

/// Numbers stored row by row as a matrix, which nalgebra keeps column by column. Copied a tile at
/// a time: `DMatrix::from_row_slice` writes each number a whole column away from the last,
/// which on a 768 × 3072 weight was most of the time a block's tensors took to read.
fn from_rows(rows: usize, columns: usize, numbers: &[f64]) -> DMatrix<f64> {
    const TILE: usize = 32;
    let mut data = vec![0.0; numbers.len()];
    for first_row in (0..rows).step_by(TILE) {
        for first_column in (0..columns).step_by(TILE) {
            for row in first_row..(first_row + TILE).min(rows) {
                for column in first_column..(first_column + TILE).min(columns) {
                    data[column * rows + row] = numbers[row * columns + column];
                }
            }
        }
    }
    DMatrix::from_vec(rows, columns, data)
}

/// A dtype the safetensors crate does not know fails its header as a whole; found first, it is
/// said as the tensor and dtype it is.
fn refuse_unknown_dtypes(path: &Path, header: &Value) -> Result<(), CheckpointError> {
    let Value::Object(entries) = header else {
        return Ok(());
    };
    for (name, entry) in entries {
        if name == "__metadata__" {
            continue;
        }
        if let Some(dtype @ Value::String(text)) = entry.get("dtype")
            && serde_json::from_value::<Dtype>(dtype.clone()).is_err()
        {
            return Err(CheckpointError::UnsupportedDtype {
                file: path.to_path_buf(),
                tensor: name.clone(),
                dtype: text.clone(),
            });
        }
    }
    Ok(())
}
